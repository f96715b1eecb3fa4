"""While an attached agent only waits in ``await_decision`` the kernel reads idle (its iopub
status), cells still run, and the decision still reaches the agent; real work keeps the
kernel's status protocol (busy, then idle). And each review outcome reaches the agent once,
through ``kli.client`` on a real kernel (docs/review.md)."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.kernel


def _states(kernel: Any, since: int) -> list[tuple[str, str]]:
    """(parent msg_id, execution_state) of each iopub status seen after ``since``."""
    return [(m["parent_header"].get("msg_id", ""), m["content"]["execution_state"])
            for m in kernel.seen[since:] if m["msg_type"] == "status"]


def _last_state(kernel: Any) -> str:
    states = [m["content"]["execution_state"] for m in kernel.seen if m["msg_type"] == "status"]
    return states[-1]


def test_an_agent_waiting_in_await_decision_leaves_the_kernel_idle(
    fresh_kernel: Any, tmp_path: Path
) -> None:
    kernel = fresh_kernel
    ui, _ = kernel.open_comm("kli.ui", {"replay": 0})
    assert kernel.request(ui, {"op": "approval", "mode": "review", "kind": "file"})["op"] == "approval"
    agent, _ = kernel.open_comm("kli.agent", {"label": "waiter"})
    held = kernel.call(agent, "write", {"path": "w.txt", "content": "w\n"})
    pid = held["details"]["proposal"]
    rid = uuid.uuid4().hex[:8]
    start = len(kernel.seen)
    kernel.send(agent, {"v": 1, "id": rid, "op": "call", "tool": "await_decision",
                        "args": {"id": pid, "timeout": 60}})
    time.sleep(1.5)
    kernel.settle(0.5)
    assert _states(kernel, start), "the request was handled (its busy, then idle)"
    assert _last_state(kernel) == "idle", _states(kernel, start)
    # a cell runs meanwhile, with the usual busy / idle around it
    ran = len(kernel.seen)
    reply, _out = kernel.execute("1 + 1")
    assert reply["status"] == "ok"
    cell = [s for _p, s in _states(kernel, ran)]
    assert cell[0] == "busy" and cell[-1] == "idle"
    assert not any(m["msg_type"] == "comm_msg" and m["content"]["data"].get("id") == rid
                   for m in kernel.seen[start:]), "the agent still waits"
    # the person decides: the waiting agent gets the outcome, and the kernel is idle after
    assert kernel.request(ui, {"op": "accept", "candidate": pid})["ok"]
    got = kernel.reply(agent, rid, start)
    assert got["ok"] and got["details"]["status"] == "written", got
    kernel.settle(0.3)
    assert _last_state(kernel) == "idle"
    kernel.close_comm(agent)
    kernel.close_comm(ui)


def test_real_work_of_an_agent_still_reads_busy_while_it_runs(fresh_kernel: Any) -> None:
    kernel = fresh_kernel
    agent, _ = kernel.open_comm("kli.agent", {"label": "worker"})
    rid = uuid.uuid4().hex[:8]
    start = len(kernel.seen)
    msg_id = kernel.send(agent, {"v": 1, "id": rid, "op": "call", "tool": "bash",
                                 "args": {"command": "sleep 5; echo done"}})
    # The request's own status, however loaded the machine: a fixed sleep once looked before
    # the kernel had taken the message, and the comm_open's idle (handled on another thread)
    # may arrive after this request's busy, so the last status of all is not the request's.
    kernel.wait_for(lambda m: m["msg_type"] == "status" and m["parent_header"].get("msg_id") == msg_id
                    and m["content"]["execution_state"] == "busy", 30, since=start)
    time.sleep(0.5)
    kernel.settle(0.2)
    assert not any(m["msg_type"] == "comm_msg" and m["content"]["data"].get("id") == rid
                   for m in kernel.seen[start:]), "the call ended before it could be looked at"
    assert [s for p, s in _states(kernel, start) if p == msg_id] == ["busy"], _states(kernel, start)
    got = kernel.reply(agent, rid, start)
    assert got["ok"], got
    kernel.wait_for(lambda m: m["msg_type"] == "status" and m["parent_header"].get("msg_id") == msg_id
                    and m["content"]["execution_state"] == "idle", 30, since=start)
    kernel.settle(0.3)
    assert _last_state(kernel) == "idle"
    kernel.close_comm(agent)


def test_the_stop_button_still_ends_an_agents_wait(fresh_kernel: Any) -> None:
    kernel = fresh_kernel
    ui, _ = kernel.open_comm("kli.ui", {"replay": 0})
    kernel.request(ui, {"op": "approval", "mode": "review", "kind": "file"})
    agent, _ = kernel.open_comm("kli.agent", {"label": "waiter"})
    pid = kernel.call(agent, "write", {"path": "s.txt", "content": "s\n"})["details"]["proposal"]
    rid = uuid.uuid4().hex[:8]
    start = len(kernel.seen)
    kernel.send(agent, {"v": 1, "id": rid, "op": "call", "tool": "await_decision",
                        "args": {"id": pid, "timeout": 60}})
    time.sleep(1.0)
    kernel.km.interrupt_kernel()
    got = kernel.reply(agent, rid, start, timeout=15)
    assert not got["ok"] and "interrupt" in got["text"], got
    kernel.alive_check()
    kernel.close_comm(agent)
    kernel.close_comm(ui)
