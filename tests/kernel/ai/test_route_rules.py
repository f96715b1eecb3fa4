"""The rules of kli's tools on Jupyter AI's MCP route that need no server, alone: who is let in
(``mcp_route.admitted``: this user's key, or the server's token), what a kernel message cannot
carry (``bridge.unsendable``), NaN and infinities in a raw call (``mcp_guard.non_finite_call``),
and which sessions the bridge may close for room (a live chat's never). Through the real route
they are tested in tests/ai/acp/test_route_locked.py."""

from __future__ import annotations

import json

import pytest

from kli.kernel.ai.mcp_guard import non_finite_call
from kli.kernel.ai.mcp_route import admitted
from kli.kernel.client import AgentClient
from kli.kernel.mcp.bridge import MAX_SESSIONS, Bridge, unsendable
from kli.kernel.mcp.targets import Target

KEY, TOKEN = "k" * 43, "server-token"


@pytest.mark.parametrize(("headers", "token", "let_in"), [
    ({"x-kli-key": KEY}, "", True),
    ({"x-kli-key": KEY[:-1] + "x"}, "", False),
    ({"x-kli-key": ""}, "", False),
    ({"x-jupyter-chat-id": "any chat"}, "", False),   # a chat header alone claims nothing
    ({"authorization": f"token {TOKEN}"}, TOKEN, True),
    ({"authorization": f"Bearer {TOKEN}"}, TOKEN, True),
    ({"authorization": "token "}, "", False),          # a server without a token lets none in
    ({"authorization": "token wrong"}, TOKEN, False),
    ({}, TOKEN, False),
])
def test_only_the_key_or_the_servers_token_lets_a_call_in(
        headers: dict[str, str], token: str, let_in: bool) -> None:
    assert admitted(headers, KEY, token) is let_in
    assert admitted(headers, None, token) is (let_in and "authorization" in headers)


def test_what_a_kernel_message_cannot_carry_is_named_before_anything_is_sent() -> None:
    assert unsendable({"code": "é ✓ 😀", "timeout": 1.5, "cells": ["a"]}) is None
    assert "argument 'code' holds a lone surrogate ('\\ud800' at character 2)" in str(
        unsendable({"code": "s=\ud800"}))
    assert "'cells[1]' holds a lone surrogate" in str(unsendable({"cells": ["a", "\udc80"]}))
    assert "argument 'timeout' is nan, not a finite number" in str(
        unsendable({"timeout": float("nan")}))
    assert "argument 'o.t' is inf" in str(unsendable({"o": {"t": float("inf")}}))


def test_nan_and_infinities_in_a_raw_call_of_a_kli_tool_are_refused_and_others_pass() -> None:
    def body(args: str, name: str = "run_cells") -> bytes:
        return ('{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": '
                f'"{name}", "arguments": {args}}}}}').encode()

    for raw in ("NaN", "Infinity", "-Infinity"):
        rid, text = non_finite_call(body(f'{{"path": "a.ipynb", "timeout": {raw}}}'),
                                    frozenset({"run_cells"})) or (None, "")
        assert rid == 7 and f"argument 'timeout' is {raw}, not a finite number" in text
    assert non_finite_call(body('{"timeout": 5}'), frozenset({"run_cells"})) is None
    assert non_finite_call(body('{"t": NaN}', "other"), frozenset({"run_cells"})) is None
    assert non_finite_call(b"not json NaN", frozenset({"run_cells"})) is None
    batch = json.dumps([{"jsonrpc": "2.0", "method": "ping", "id": 1}]).encode()
    assert non_finite_call(batch, frozenset({"run_cells"})) is None


class Unreachable(Target):
    """A target no connection is made to here: the sessions' bookkeeping needs none."""

    def connect(self, label: str) -> AgentClient:
        raise AssertionError("not connected in this test")

    def advice(self) -> str:
        return ""


def test_the_bridge_closes_other_sessions_for_room_but_never_a_kept_one() -> None:
    bridge = Bridge(Unreachable(), keep=lambda key: key.startswith("chat:"))
    bridge._conn("chat:live", "a live chat")
    for i in range(MAX_SESSIONS + 5):
        bridge._conn(f"mcp-session:{i}", "another client")
    assert "chat:live" in bridge._conns and len(bridge._conns) == MAX_SESSIONS
    plain = Bridge(Unreachable())
    plain._conn("chat:live", "a chat")
    for i in range(MAX_SESSIONS):
        plain._conn(f"mcp-session:{i}", "another client")
    assert "chat:live" not in plain._conns  # without keep: the least recently used goes
