"""Random input to ``kli mcp`` over stdio: garbage lines, random JSON, random JSON-RPC shapes
and random tool calls. Every request (a JSON-RPC object with a method and an id) gets a reply
naming its id — a result or an error, ``-32600`` when the line is valid JSON but not a valid
message (``params: []`` on ``tools/list``). The server answers ``ping`` after every case.

The server's root denies ``process/exec`` and ``image/eval``, so no random call runs code.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kli.tools.registry import REGISTRY

from .conftest import examples

pytest.importorskip("mcp", reason="the mcp SDK is an optional dependency (kli-kernel[mcp])")
pytestmark = pytest.mark.kernel

REPLY_TIMEOUT = 60.0
_ids = itertools.count(10_000)

_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=10))
_JSON = st.recursive(_SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8)
_METHODS = st.sampled_from(["tools/call", "tools/list", "ping", "initialize", "resources/list",
                            "prompts/list", "notifications/initialized", "notifications/cancelled",
                            "logging/setLevel", "completion/complete", "no/such", ""])


@st.composite
def _line(draw: st.DrawFn) -> tuple[str, Any]:
    """A line to send, and the id a reply must name (None when no reply is owed)."""
    kind = draw(st.integers(0, 6))
    if kind == 0:
        return draw(st.text(max_size=40).map(lambda t: t.replace("\n", " "))), None
    if kind == 1:
        return json.dumps(draw(_JSON)), None
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": draw(_METHODS)}
    rid: Any = next(_ids)
    msg["id"] = rid
    if msg["method"] == "tools/call" or kind >= 4:
        msg["method"] = "tools/call"
        name = draw(st.one_of(st.sampled_from(sorted(REGISTRY.tools)), st.text(max_size=6)))
        msg["params"] = {"name": name, "arguments": draw(st.one_of(
            _JSON, st.dictionaries(st.sampled_from(["path", "pattern", "content", "command", "code"]),
                                   st.one_of(st.text(max_size=20), _JSON), max_size=3)))}
    elif draw(st.booleans()):
        msg["params"] = draw(_JSON)
    if msg["method"].startswith("notifications/") or msg["method"] in ("initialize",):
        msg.pop("id")  # a notification (or a second initialize, sent as one): no reply owed
        rid = None
    return json.dumps(msg), rid


class _Server:
    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "kli.tools.cli", "mcp", "--root",
                                      str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, env=env)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def wait_ids(self, wanted: set[Any]) -> None:
        """Wait for a reply naming each id in ``wanted`` (replies with id null — parse errors
        for garbage lines — owe nothing to anyone and are passed over)."""
        deadline = time.monotonic() + REPLY_TIMEOUT
        while wanted:
            left = deadline - time.monotonic()
            assert left > 0 and self.proc.poll() is None, f"no reply for {wanted}"
            try:
                data = json.loads(self.lines.get(timeout=min(left, 1.0)))
            except queue.Empty:
                continue
            if not isinstance(data, dict):
                continue
            if data.get("id") in wanted:
                assert "result" in data or "error" in data, data
                wanted.discard(data["id"])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Server]:
    tmp = tmp_path_factory.mktemp("mcpfuzz")
    root = tmp / "root"
    (root / ".kli").mkdir(parents=True)
    (root / ".kli" / "settings.json").write_text(
        json.dumps({"capabilities": ["file/read", "file/write", "file/edit"]}))
    (root / "a.py").write_text("x = 1\n")
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(tmp / "xdg")
    env["JUPYTER_RUNTIME_DIR"] = str(tmp / "runtime")
    env.pop("PYTEST_CURRENT_TEST", None)
    srv = _Server(root, env)
    try:
        srv.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "0"}}}))
        srv.wait_ids({1})
        srv.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        yield srv
    finally:
        assert srv.proc.stdin is not None
        srv.proc.stdin.close()
        try:
            srv.proc.wait(30)
        except subprocess.TimeoutExpired:
            srv.proc.kill()
            srv.proc.wait(10)


def test_random_lines_get_replies_and_the_server_keeps_answering(server: _Server) -> None:
    @settings(max_examples=examples(1))
    @given(_line())
    def run(case: tuple[str, Any]) -> None:
        line, rid = case
        server.send(line)
        ping = next(_ids)
        server.send(json.dumps({"jsonrpc": "2.0", "id": ping, "method": "ping"}))
        server.wait_ids({ping} | ({rid} if rid is not None else set()))

    run()
    listed = next(_ids)
    server.send(json.dumps({"jsonrpc": "2.0", "id": listed, "method": "tools/list"}))
    server.wait_ids({listed})
