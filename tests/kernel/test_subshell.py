"""Comm traffic on a subshell thread (JupyterLab ≥ 4.4 sends some there): a UI accept is
served while a cell runs (it touches only the file, under the file lock); an agent's tool call
is handed to the main thread and runs after the cell (docs/concurrency.md)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from kli.tools.file.anchors import line_hash

pytestmark = pytest.mark.kernel


def _subshell(kernel: Any) -> str:
    msg = kernel.kc.session.msg("create_subshell_request", {})
    kernel.kc.control_channel.send(msg)
    reply = kernel.kc.control_channel.get_msg(timeout=10)
    while reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
        reply = kernel.kc.control_channel.get_msg(timeout=10)
    if reply["content"].get("status") != "ok":
        pytest.skip("this ipykernel has no subshells")
    return str(reply["content"]["subshell_id"])


def _send_on(kernel: Any, subshell: str, comm_id: str, data: dict[str, Any]) -> None:
    msg = kernel.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
    msg["header"]["subshell_id"] = subshell
    kernel.kc.shell_channel.send(msg)


def _open_on(kernel: Any, subshell: str, target: str) -> str:
    """Open a comm from the subshell: ipykernel then routes its traffic to that subshell."""
    import uuid

    comm_id = uuid.uuid4().hex
    start = len(kernel.seen)
    msg = kernel.kc.session.msg("comm_open", {"comm_id": comm_id, "target_name": target,
                                              "data": {"label": f"{target} on subshell"}})
    msg["header"]["subshell_id"] = subshell
    kernel.kc.shell_channel.send(msg)
    kernel.wait_for(lambda m: m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == comm_id,
                    since=start)
    return comm_id


def _reply(kernel: Any, comm_id: str, rid: str, since: int) -> tuple[float, dict[str, Any]]:
    msg = kernel.wait_for(lambda m: m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == comm_id
                          and m["content"]["data"].get("id") == rid, since=since)
    return time.monotonic(), msg["content"]["data"]


def test_subshell_ui_accept_runs_during_a_cell_and_agent_call_waits_for_it(kernel: Any) -> None:
    sub = _subshell(kernel)
    (kernel.root / "sub.py").write_text("a = 1\nb = 2\nc = 3\n")
    maker, _ = kernel.open_comm("kli.agent", {"label": "main-shell agent"})
    kernel.call(maker, "read", {"path": "sub.py"})
    h = line_hash("b = 2")
    preview = kernel.call(maker, "edit", {"input": f"@@ sub.py\n= 2:{h}..2:{h}\n~b = max(2, 3\n",
                                          "repair": "preview"})
    cid = preview["details"]["files"][0]["candidate"]
    # opened after the preview: no broadcast from the main thread re-routes them to main
    agent = _open_on(kernel, sub, "kli.agent")
    ui = _open_on(kernel, sub, "kli.ui")

    start = len(kernel.seen)
    cell = kernel.kc.execute("import time\ntime.sleep(2.5)\nsubshell_cell_done = True")
    kernel.wait_for(lambda m: m["parent_header"].get("msg_id") == cell and m["msg_type"] == "status"
                    and m["content"]["execution_state"] == "busy", since=start)
    began = time.monotonic()
    _send_on(kernel, sub, ui, {"v": 1, "id": "acc", "op": "accept", "candidate": cid})
    _send_on(kernel, sub, agent, {"v": 1, "id": "ev", "op": "call", "tool": "eval",
                                  "args": {"code": "subshell_cell_done"}})
    accepted_at, accepted = _reply(kernel, ui, "acc", start)
    assert accepted["ok"], accepted["text"]
    assert accepted_at - began < 2.0, "the UI accept waited for the cell"
    assert (kernel.root / "sub.py").read_text() == "a = 1\nb = max(2, 3)\nc = 3\n"
    evaluated_at, evaluated = _reply(kernel, agent, "ev", start)
    cell_idle = kernel.wait_for(lambda m: m["parent_header"].get("msg_id") == cell
                                and m["msg_type"] == "status"
                                and m["content"]["execution_state"] == "idle", since=start)
    assert cell_idle is not None
    assert evaluated["ok"] and "True" in evaluated["text"], evaluated["text"]
    assert evaluated_at - began >= 2.0
