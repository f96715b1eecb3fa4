"""Malformed input gets an error reply naming the problem; nothing else happens; the kernel
keeps answering."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def agent(kernel: Any) -> str:
    comm_id, _ = kernel.open_comm("kli.agent", {"label": "malformed"})
    return comm_id


@pytest.fixture(scope="module")
def ui(kernel: Any) -> str:
    comm_id, _ = kernel.open_comm("kli.ui", {"replay": 0})
    return comm_id


def _only_reply(kernel: Any, comm_id: str, ui: str, data: Any) -> dict[str, Any]:
    """Send ``data``; the one message that comes back on ``comm_id``, with no UI event."""
    start = len(kernel.seen)
    kernel.send(comm_id, data)
    kernel.wait_for(lambda m: m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == comm_id,
                    since=start)
    kernel.settle(0.3)
    replies = kernel.comm_data(comm_id, start)
    assert len(replies) == 1, replies
    assert kernel.comm_data(ui, start) == [], "a malformed request must not reach the tools"
    return replies[0]


@pytest.mark.parametrize(
    ("data", "code", "named"),
    [
        ("not an object", "bad_json", "JSON object"),
        ([1, 2, 3], "bad_json", "JSON object"),
        ({"op": "call", "tool": "read", "args": {"path": "x"}}, "bad_request", "'id'"),
        ({"id": True, "op": "ping"}, "bad_request", "'id'"),
        ({"id": [1], "op": "ping"}, "bad_request", "'id'"),
        ({"id": 1, "op": "explode"}, "unknown_op", "explode"),
        ({"id": 2, "op": "call"}, "bad_request", "'tool'"),
        ({"id": 3, "op": "call", "tool": 7}, "bad_request", "'tool'"),
        ({"id": 4, "op": "call", "tool": "read", "args": "path=a.py"}, "bad_request", "'args'"),
        ({"id": 5, "op": "list", "profile": "nope"}, "bad_request", "profile"),
    ],
)
def test_malformed_agent_request_gets_one_error_reply(kernel: Any, agent: str, ui: str, data: Any,
                                                      code: str, named: str) -> None:
    reply = _only_reply(kernel, agent, ui, data)
    assert reply["op"] == "error" and reply["error"] == code
    assert named in reply["text"]
    if isinstance(data, dict) and isinstance(data.get("id"), int) and data["id"] is not True:
        assert reply["id"] == data["id"]


def test_unknown_tool_is_an_error_result_naming_the_tool(kernel: Any, agent: str) -> None:
    reply = kernel.call(agent, "reed", {"path": "a.py"})
    assert reply["op"] == "result" and reply["ok"] is False
    assert reply["details"]["error"] == "unknown_tool" and "'reed'" in reply["text"]
    assert "read" in reply["text"]  # the suggestion


def test_wrong_argument_types_are_an_error_result_and_write_nothing(kernel: Any, kroot: Path,
                                                                    agent: str) -> None:
    reply = kernel.call(agent, "write", {"path": "typed.txt", "content": 12})
    assert reply["ok"] is False and reply["details"]["error"] == "bad_arguments"
    assert "content" in reply["text"] and "string" in reply["text"]
    assert not (kroot / "typed.txt").exists()
    reply = kernel.call(agent, "read", {"path": "a.py", "start": "three"})
    assert reply["details"]["error"] == "bad_arguments" and "start" in reply["text"]


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ("garbage", "bad_json"),
        ({"op": "accept", "candidate": "c1"}, "bad_request"),
        ({"id": 1, "op": "call", "tool": "bash"}, "unknown_op"),
        ({"id": 2, "op": "accept"}, "bad_request"),
        ({"id": 3, "op": "reject", "candidate": 5}, "bad_request"),
    ],
)
def test_malformed_ui_request_gets_one_error_reply(kernel: Any, ui: str, data: Any, code: str) -> None:
    start = len(kernel.seen)
    kernel.send(ui, data)
    kernel.wait_for(lambda m: m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == ui,
                    since=start)
    kernel.settle(0.3)
    (reply,) = kernel.comm_data(ui, start)
    assert reply["op"] == "error" and reply["error"] == code


def test_garbage_on_the_shell_socket_leaves_the_kernel_answering(kernel: Any) -> None:
    socket = kernel.kc.shell_channel.socket
    socket.send_multipart([b"<IDS|MSG>", b"not-a-signature", b"{", b"}", b"{}", b"{}"])
    socket.send_multipart([b"complete garbage"])
    kernel.send_shell("comm_msg", {"comm_id": "no-such-comm", "data": {"id": 1, "op": "ping"}})
    kernel.send_shell("comm_open", {"comm_id": "x1", "target_name": "kli.nothing", "data": {}})
    kernel.send_shell("no_such_request", {})
    kernel.alive_check()
    content, _ = kernel.execute("1 + 1")
    assert content["status"] == "ok"


BAD_INPUTS: list[Any] = [
    "not an object",
    [1, 2, 3],
    None,
    {"op": "call", "tool": "read", "args": {"path": "x"}},
    {"id": True, "op": "ping"},
    {"id": 1, "op": "explode"},
    {"id": 2, "op": "call"},
    {"id": 3, "tool": 7},
    {"id": 4, "tool": "read", "args": "path=a.py"},
    {"id": 5, "op": "list", "profile": "nope"},
    {"id": "six", "op": "accept", "candidate": "c1"},
]


def test_the_kernel_comm_and_serve_stdio_answer_the_same_bad_inputs_identically(
    kernel: Any, agent: str, ui: str, tmp_path: Path
) -> None:
    import json
    import subprocess
    import sys

    lines = "".join(json.dumps(d) + "\n" for d in BAD_INPUTS)
    out = subprocess.run(
        [sys.executable, "-m", "kli.tools.cli", "serve", "--stdio", "--root", str(tmp_path)],
        input=lines, capture_output=True, text=True, timeout=120, check=True)
    stdio = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(stdio) == len(BAD_INPUTS)
    for data, answer in zip(BAD_INPUTS, stdio, strict=True):
        reply = _only_reply(kernel, agent, ui, data)
        assert reply["op"] == "error" and answer["ok"] is False, (data, reply, answer)
        assert (reply["id"], reply["error"], reply["text"]) == (
            answer["id"], answer["error"], answer["text"]), data
