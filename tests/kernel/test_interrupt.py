"""A long eval called through the comm stops on an interrupt (JupyterLab's stop button) or at
its deadline, and the kernel goes on."""

from __future__ import annotations

import time
from typing import Any

import pytest

pytestmark = pytest.mark.kernel


def _start_long_eval(kernel: Any, comm_id: str, seconds: int = 30, timeout: int = 60) -> int:
    start = len(kernel.seen)
    kernel.send(comm_id, {"v": 1, "id": "long", "op": "call", "tool": "eval",
                          "args": {"code": f"import time\ntime.sleep({seconds})\nafter = 1",
                                   "timeout": timeout}})
    # the kernel is busy with our comm message once its status says so
    kernel.wait_for(lambda m: m["msg_type"] == "status"
                    and m["content"]["execution_state"] == "busy", since=start)
    time.sleep(0.3)
    return start


def _reply(kernel: Any, comm_id: str, start: int, timeout: float = 10) -> dict[str, Any]:
    msg = kernel.wait_for(lambda m: m["msg_type"] == "comm_msg"
                          and m["content"]["comm_id"] == comm_id
                          and m["content"]["data"].get("id") == "long", timeout, since=start)
    data: dict[str, Any] = msg["content"]["data"]
    return data


def test_interrupt_request_stops_a_long_eval_with_an_interrupted_result(kernel: Any) -> None:
    comm_id, _ = kernel.open_comm("kli.agent", {"label": "interrupt"})
    start = _start_long_eval(kernel, comm_id)
    began = time.monotonic()
    kernel.kc.control_channel.send(kernel.kc.session.msg("interrupt_request", {}))
    reply = _reply(kernel, comm_id, start)
    assert time.monotonic() - began < 10
    assert reply["op"] == "result" and reply["ok"] is False
    assert "interrupted" in reply["text"].lower()
    content, _ = kernel.execute("'after' in globals()")
    assert content["status"] == "ok"
    kernel.alive_check()


def test_signal_interrupt_from_the_manager_stops_a_long_eval(kernel: Any) -> None:
    comm_id, _ = kernel.open_comm("kli.agent", {"label": "sigint"})
    start = _start_long_eval(kernel, comm_id)
    kernel.km.interrupt_kernel()
    reply = _reply(kernel, comm_id, start)
    assert reply["ok"] is False and "interrupted" in reply["text"].lower()
    kernel.alive_check()


def test_eval_deadline_interrupts_through_the_comm(kernel: Any) -> None:
    comm_id, _ = kernel.open_comm("kli.agent", {"label": "deadline"})
    began = time.monotonic()
    reply = kernel.call(comm_id, "eval", {"code": "import time\ntime.sleep(20)", "timeout": 1})
    assert time.monotonic() - began < 8
    assert reply["ok"] is False and "timed out" in reply["text"]
    kernel.alive_check()


def test_agent_call_waits_for_the_running_cell(kernel: Any) -> None:
    """Comm messages on the main shell queue behind a cell: the eval sees the cell's result."""
    comm_id, _ = kernel.open_comm("kli.agent", {"label": "queue"})
    start = len(kernel.seen)
    cell = kernel.kc.execute("import time\ntime.sleep(1.0)\nqueued_marker = 'cell done'")
    kernel.send(comm_id, {"v": 1, "id": "q", "op": "call", "tool": "eval",
                          "args": {"code": "queued_marker"}})
    msg = kernel.wait_for(lambda m: m["msg_type"] == "comm_msg"
                          and m["content"]["comm_id"] == comm_id
                          and m["content"]["data"].get("id") == "q", since=start)
    assert "cell done" in msg["content"]["data"]["text"]
    kernel.wait_for(lambda m: m["parent_header"].get("msg_id") == cell
                    and m["msg_type"] == "status" and m["content"]["execution_state"] == "idle",
                    since=start)


def test_agent_call_waits_for_a_suspended_top_level_await_cell(kernel: Any) -> None:
    """ipykernel dispatches comm messages while an async cell awaits; the tool call still runs
    only after the cell."""
    comm_id, _ = kernel.open_comm("kli.agent", {"label": "async"})
    start = len(kernel.seen)
    cell = kernel.kc.execute("import asyncio\nawait asyncio.sleep(1.5)\nasync_marker = 'awaited'")
    kernel.wait_for(lambda m: m["parent_header"].get("msg_id") == cell and m["msg_type"] == "status"
                    and m["content"]["execution_state"] == "busy", since=start)
    time.sleep(0.3)
    kernel.send(comm_id, {"v": 1, "id": "a", "op": "call", "tool": "eval",
                          "args": {"code": "async_marker"}})
    msg = kernel.wait_for(lambda m: m["msg_type"] == "comm_msg"
                          and m["content"]["comm_id"] == comm_id
                          and m["content"]["data"].get("id") == "a", since=start)
    assert msg["content"]["data"]["ok"], msg["content"]["data"]["text"]
    assert "awaited" in msg["content"]["data"]["text"]
