"""A cancel of an agent's running eval stops that eval alone (interrupts.stop_main_call), even
while other work runs beside it: another agent's command on a tool subshell goes on to its end.
Before, a client interrupted the kernel only when the eval was all it ran, and an eval beside
other work ran to its own timeout."""

from __future__ import annotations

import time
from typing import Any

import pytest

pytestmark = pytest.mark.kernel


@pytest.mark.serial  # asserts a wall-clock time
def test_a_cancelled_eval_stops_while_another_agents_command_runs_on(kernel: Any) -> None:
    other, _ = kernel.open_comm("kli.agent", {"label": "other"})
    mine, _ = kernel.open_comm("kli.agent", {"label": "mine"})
    start = len(kernel.seen)
    kernel.send(other, {"v": 1, "id": "cmd", "op": "call", "tool": "bash",
                        "args": {"command": "sleep 4; echo finished", "timeout": 60}})
    kernel.send(mine, {"v": 1, "id": "long", "op": "call", "tool": "eval",
                       "args": {"code": "import time\ntime.sleep(100)", "timeout": 200}})
    time.sleep(1.5)
    assert not [d for d in kernel.comm_data(mine, start) if d.get("id") == "long"]
    pressed = time.monotonic()
    kernel.send(mine, {"v": 1, "id": "stop", "op": "cancel", "request": "long"})
    assert kernel.reply(mine, "stop", start, 10)["found"] is True
    stopped = kernel.reply(mine, "long", start, 15)
    assert time.monotonic() - pressed < 4
    assert stopped["op"] == "result" and stopped["ok"] is False, stopped
    assert stopped["details"]["error"] == "interrupted", stopped["details"]
    ran_on = kernel.reply(other, "cmd", start, 30)
    assert ran_on["ok"] is True and "finished" in ran_on["text"], ran_on
    after = kernel.call(mine, "eval", {"code": "'idle again'"})
    assert after["ok"] and "idle again" in after["text"]
    content, _ = kernel.execute("1 + 1")
    assert content["status"] == "ok"


def test_a_cancel_arriving_after_its_eval_ended_stops_nothing_that_runs_next(
        kernel: Any) -> None:
    mine, _ = kernel.open_comm("kli.agent", {"label": "late"})
    done = kernel.call(mine, "eval", {"code": "21 * 2"})
    assert done["ok"]
    start = len(kernel.seen)
    kernel.send(mine, {"v": 1, "id": "next", "op": "call", "tool": "eval",
                       "args": {"code": "import time\ntime.sleep(1.5)\n'slept'"}})
    time.sleep(0.5)
    kernel.send(mine, {"v": 1, "id": "stale", "op": "cancel", "request": "long-gone"})
    assert kernel.reply(mine, "stale", start, 10)["found"] is False
    slept = kernel.reply(mine, "next", start, 15)
    assert slept["ok"] is True and "slept" in slept["text"], slept
