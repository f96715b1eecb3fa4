"""Random input to a real kernel's comms: random JSON, random op shapes and random bytes on the
shell socket. Every comm message gets a reply on its comm (a result or an error), and the
kernel answers ``kernel_info`` after every case.

The kernel's root denies ``process/exec`` and ``image/eval`` (.kli/settings.json), so random
``call``s can never run a command or code.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kli.tools.registry import REGISTRY

from .conftest import examples, kernel_harness

pytestmark = pytest.mark.kernel

_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12))
_JSON = st.recursive(_SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=10)
_ID = st.one_of(st.integers(0, 10**6), st.text(max_size=6), st.booleans(), st.none(), _JSON)
_OPS = st.sampled_from(["call", "list", "ping", "accept", "reject", "replay", "hello", "",
                        "CALL", None, 7])
_TOOLS = st.one_of(st.sampled_from(sorted(REGISTRY.tools)), st.text(max_size=8), _JSON)


@st.composite
def _request(draw: st.DrawFn) -> Any:
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return draw(_JSON)  # anything at all
    msg: dict[str, Any] = {}
    if draw(st.integers(0, 4)):
        msg["id"] = draw(_ID)
    if draw(st.integers(0, 4)):
        msg["op"] = draw(_OPS)
    if draw(st.booleans()):
        msg["tool"] = draw(_TOOLS)
    if draw(st.booleans()):
        msg["args"] = draw(st.one_of(_JSON, st.dictionaries(
            st.sampled_from(["path", "pattern", "content", "input", "command", "code", "form"]),
            st.one_of(st.text(max_size=20), _JSON), max_size=3)))
    for key in draw(st.lists(st.sampled_from(["v", "profile", "candidate", "limit", "x"]), max_size=2)):
        msg[key] = draw(_JSON)
    return msg


@pytest.fixture(scope="module")
def fuzz_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("fuzzk") / "root"
    (root / ".kli").mkdir(parents=True)
    (root / ".kli" / "settings.json").write_text(
        json.dumps({"capabilities": ["file/read", "file/write", "file/edit"]}))
    (root / "a.py").write_text("x = 1\n")
    h = kernel_harness.start_harness(root)
    yield h
    kernel_harness.stop_harness(h)


def _send_and_expect_reply(h: Any, comm_id: str, data: Any) -> None:
    start = len(h.seen)
    h.send(comm_id, data)
    h.wait_for(lambda m: m["msg_type"] == "comm_msg" and m["content"].get("comm_id") == comm_id,
               timeout=30, since=start)


@pytest.mark.parametrize("target", ["kli.agent", "kli.ui"])
def test_random_requests_each_get_a_reply_and_the_kernel_keeps_answering(
    fuzz_kernel: Any, target: str
) -> None:
    h = fuzz_kernel
    comm_id, hello = h.open_comm(target, {"label": "fuzz"} if target == "kli.agent" else {"replay": 0})
    assert hello["op"] == "hello"
    outside = Path(h.root).parent
    before = sorted(os.listdir(outside))

    @settings(max_examples=examples(1))
    @given(_request())
    def run(data: Any) -> None:
        _send_and_expect_reply(h, comm_id, data)
        h.alive_check()

    run()
    h.settle(0.2)
    assert sorted(os.listdir(outside)) == before
    reply = h.call(comm_id, "read", {"path": "a.py"}) if target == "kli.agent" else None
    if reply is not None:
        assert reply["ok"] and "x = 1" in reply["text"]


def test_random_bytes_on_the_shell_socket_are_dropped_and_the_kernel_keeps_answering(
    fuzz_kernel: Any,
) -> None:
    h = fuzz_kernel
    sock = h.kc.shell_channel.socket

    @settings(max_examples=examples(1))
    @given(st.lists(st.binary(max_size=64), min_size=1, max_size=7))
    def run(frames: list[bytes]) -> None:
        sock.send_multipart(frames)
        # A frame set that looks like a Jupyter message but is not signed: also dropped.
        sock.send_multipart([b"<IDS|MSG>", b"0" * 64, *frames])
        h.alive_check()

    run()


def test_comm_messages_for_unknown_comms_and_odd_comm_opens_leave_the_kernel_up(
    fuzz_kernel: Any,
) -> None:
    h = fuzz_kernel

    @settings(max_examples=examples(0.5))
    @given(st.text(max_size=10), _JSON, st.sampled_from(["kli.agent", "kli.ui", "nope", ""]))
    def run(comm_id: str, data: Any, target: str) -> None:
        h.send_shell("comm_msg", {"comm_id": comm_id, "data": data})
        h.send_shell("comm_open", {"comm_id": comm_id or "x", "target_name": target, "data": data})
        h.send_shell("comm_close", {"comm_id": comm_id, "data": data})
        h.alive_check()

    run()
