"""Calls that do not touch the image are answered while a cell runs (they are routed to a
subshell of the kernel); image calls wait for the cell; a ping says what keeps it busy."""

from __future__ import annotations

import time
from typing import Any

import pytest

pytestmark = pytest.mark.kernel


def _reply(kernel: Any, comm: str, rid: str, since: int, timeout: float = 60) -> dict[str, Any]:
    msg = kernel.wait_for(lambda m: m["msg_type"] == "comm_msg"
                          and m["content"].get("comm_id") == comm
                          and m["content"]["data"].get("id") == rid, timeout, since=since)
    data: dict[str, Any] = msg["content"]["data"]
    return data


def test_read_is_answered_during_a_30_second_cell_and_eval_waits_for_it(kernel: Any) -> None:
    (kernel.root / "notes.txt").write_text("alpha\nbeta\n")
    agent, _ = kernel.open_comm("kli.agent", {"label": "busy"})
    start = len(kernel.seen)
    cell = kernel.kc.execute("import time\nbusy_cell_started = True\ntime.sleep(30)\n"
                             "busy_cell_done = True")
    kernel.wait_for(lambda m: m["parent_header"].get("msg_id") == cell
                    and m["msg_type"] == "status"
                    and m["content"]["execution_state"] == "busy", since=start)
    time.sleep(0.3)
    began = time.monotonic()
    kernel.send(agent, {"v": 1, "id": "ev", "op": "call", "tool": "eval",
                        "args": {"code": "busy_cell_done"}})
    kernel.send(agent, {"v": 1, "id": "rd", "op": "call", "tool": "read",
                        "args": {"path": "notes.txt"}})
    kernel.send(agent, {"v": 1, "id": "pg", "op": "ping"})
    read = _reply(kernel, agent, "rd", start)
    read_at = time.monotonic() - began
    assert read["ok"] and "beta" in read["text"], read["text"]
    assert read_at < 5, f"read waited {read_at:.1f} s for the cell"
    pong = _reply(kernel, agent, "pg", start)
    status = pong["status"]
    assert status["busy"] is True
    assert status["running"]["kind"] == "cell"
    assert "time.sleep(30)" in status["running"]["code"]
    assert status["running"]["seconds"] > 0
    assert status["waiting_calls"] >= 0
    # the eval has not been answered: it waits for the cell
    time.sleep(1.0)
    assert not [d for d in kernel.comm_data(agent, start) if d.get("id") == "ev"]
    kernel.km.interrupt_kernel()  # end the cell early; the eval then runs after it
    evaluated = _reply(kernel, agent, "ev", start)
    assert not evaluated["ok"] and "NameError" in evaluated["text"], evaluated["text"]
    assert time.monotonic() - began > read_at + 1.0
    kernel.wait_for(lambda m: m["parent_header"].get("msg_id") == cell
                    and m["msg_type"] == "status"
                    and m["content"]["execution_state"] == "idle", since=start)
    idle = kernel.request(agent, {"op": "ping"})
    assert idle["status"]["busy"] is False


@pytest.mark.serial  # asserts a wall-clock time
def test_background_job_tools_run_while_a_cell_runs(kernel: Any) -> None:
    agent, _ = kernel.open_comm("kli.agent", {"label": "busy jobs"})
    job = kernel.call(agent, "bash", {"command": "echo early; sleep 30",
                                      "run_in_background": True})
    start = len(kernel.seen)
    cell = kernel.kc.execute("import time\ntime.sleep(4)")
    kernel.wait_for(lambda m: m["parent_header"].get("msg_id") == cell
                    and m["msg_type"] == "status"
                    and m["content"]["execution_state"] == "busy", since=start)
    began = time.monotonic()
    out = kernel.call(agent, "bash_output", {"job_id": job["details"]["job_id"], "wait": 1})
    killed = kernel.call(agent, "bash_kill", {"job_id": job["details"]["job_id"]})
    assert time.monotonic() - began < 3.5
    assert "early" in out["text"] and killed["details"]["status"] == "killed"
    kernel.wait_for(lambda m: m["parent_header"].get("msg_id") == cell
                    and m["msg_type"] == "status"
                    and m["content"]["execution_state"] == "idle", since=start)


@pytest.mark.serial  # asserts a wall-clock time
def test_an_agent_attaching_during_a_cell_gets_its_hello_and_reads_at_once(kernel: Any) -> None:
    (kernel.root / "late.txt").write_text("late\n")
    start = len(kernel.seen)
    cell = kernel.kc.execute("import time\ntime.sleep(5)")
    kernel.wait_for(lambda m: m["parent_header"].get("msg_id") == cell
                    and m["msg_type"] == "status"
                    and m["content"]["execution_state"] == "busy", since=start)
    began = time.monotonic()
    agent, hello = kernel.open_comm("kli.agent", {"label": "late"})
    assert hello["op"] == "hello" and "read" in hello["tools"]
    read = kernel.call(agent, "read", {"path": "late.txt"})
    assert read["ok"] and time.monotonic() - began < 3, read
    pong = kernel.request(agent, {"op": "ping"})
    assert pong["status"]["busy"] and pong["status"]["running"]["kind"] == "cell"
    ev = kernel.call(agent, "eval", {"code": "'after the cell'"})
    assert "after the cell" in ev["text"] and time.monotonic() - began >= 4
