"""The kernel's stop button reaches the file tools an agent's comm call runs on a tool subshell
(SIGINT itself lands on the main thread only): a slow search answers a tool result saying it
was interrupted, well before its 10 s bound, and the kernel, the subshell and the comm go on."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.kernel

# (a|aa)+b backtracks on every line of a's: about 0.1 s of matching per file here, so 300 files
# run into search's 10 s bound.
SLOW = {"pattern": "(a|aa)+b", "path": "slow"}
NO_RG = ("from kli.tools.file.firstpass import binaries as _fp_binaries\n"
         "_rg_locate = _fp_binaries.locate\n"
         "_fp_binaries.locate = lambda jail: (None, 'switched off by the test')")
WITH_RG = "_fp_binaries.locate = _rg_locate"


@pytest.fixture(scope="module")
def slow_tree(kernel: Any, kroot: Path) -> Iterator[Path]:
    """300 files a backtracking pattern is slow on, searched by Python alone: rg's first pass
    (linear time) would settle them at once, and these tests are about stopping Python's."""
    folder = kroot / "slow"
    folder.mkdir(exist_ok=True)
    for i in range(300):
        (folder / f"f{i:03}.txt").write_text(("a" * 22 + "\n") * 2)
    kernel.execute(NO_RG)
    try:
        yield folder
    finally:
        kernel.execute(WITH_RG)


def _start(kernel: Any, comm_id: str, rid: str, tool: str, args: dict[str, Any]) -> int:
    start = len(kernel.seen)
    kernel.send(comm_id, {"v": 1, "id": rid, "op": "call", "tool": tool, "args": args})
    return start


def _running(kernel: Any, comm_id: str, rid: str, start: int) -> None:
    """The call has been running a while (no reply yet) before the stop button is pressed."""
    time.sleep(1.5)
    assert not [d for d in kernel.comm_data(comm_id, start) if d.get("id") == rid]


def _interrupt_a_sleeping_command(kernel: Any, comm_id: str) -> None:
    """A ``sleep 30`` through ``bash`` on the comm's tool subshell, stopped by the stop button:
    it answers an interrupted (or cancelled) result."""
    start = _start(kernel, comm_id, "sleep", "bash", {"command": "sleep 30", "timeout": 60})
    _running(kernel, comm_id, "sleep", start)
    kernel.km.interrupt_kernel()
    reply = kernel.reply(comm_id, "sleep", start, timeout=10)
    assert reply["op"] == "result" and reply["ok"] is False, reply
    assert reply["details"]["error"] in ("interrupted", "cancelled"), reply["details"]


@pytest.mark.serial  # asserts a wall-clock time
@pytest.mark.parametrize("how", ["signal", "interrupt_request"])
def test_an_interrupt_stops_a_slow_search_on_a_tool_subshell_with_a_tool_result(
    kernel: Any, slow_tree: Path, how: str
) -> None:
    comm_id, _ = kernel.open_comm("kli.agent", {"label": f"stop-{how}"})
    start = _start(kernel, comm_id, "slow", "search", SLOW)
    began = time.monotonic()
    _running(kernel, comm_id, "slow", start)
    pressed = time.monotonic()
    if how == "signal":
        kernel.km.interrupt_kernel()
    else:
        kernel.kc.control_channel.send(kernel.kc.session.msg("interrupt_request", {}))
    reply = kernel.reply(comm_id, "slow", start, timeout=15)
    stopped_after = time.monotonic() - pressed
    # the search's own bound is 10 s from its start; the stop comes well before
    assert stopped_after < 4 and time.monotonic() - began < 7, stopped_after
    assert reply["op"] == "result" and reply["ok"] is False, reply
    assert reply["details"]["error"] == "interrupted"
    assert reply["text"].startswith("interrupted: search was stopped by an interrupt")
    kernel.alive_check()
    # the subshell and the comm go on: the next call answers, and nothing stops it late
    again = kernel.call(comm_id, "search", {"pattern": "a+", "path": "slow/f000.txt"})
    assert again["ok"] is True and "f000.txt" in again["text"]
    content, _ = kernel.execute("1 + 1")
    assert content["status"] == "ok"


def test_an_interrupt_stops_a_shell_command_on_a_tool_subshell(kernel: Any) -> None:
    comm_id, _ = kernel.open_comm("kli.agent", {"label": "stop-bash"})
    _interrupt_a_sleeping_command(kernel, comm_id)
    kernel.alive_check()


def test_an_interrupt_while_nothing_runs_changes_nothing(kernel: Any) -> None:
    comm_id, _ = kernel.open_comm("kli.agent", {"label": "idle-stop"})
    kernel.km.interrupt_kernel()
    time.sleep(0.5)
    kernel.alive_check()
    reply = kernel.call(comm_id, "search", {"pattern": "x", "path": "."})
    assert reply["op"] == "result", reply
    content, _ = kernel.execute("2 + 2")
    assert content["status"] == "ok"


def test_an_interrupt_during_a_top_level_await_cell_stops_the_cell_and_the_subshell_call(
    kernel: Any,
) -> None:
    """ipykernel runs an await cell under its own SIGINT handler: the cell is cancelled at once
    (before, only when what it awaited was done: 28 s here) and the agent's call on a tool
    subshell is stopped too (before, it ran on)."""
    comm_id, _ = kernel.open_comm("kli.agent", {"label": "stop-await"})
    cell_start = len(kernel.seen)
    cell = kernel.send_shell("execute_request", {
        "code": "import asyncio\nawait asyncio.sleep(30)", "silent": False, "store_history": False,
        "user_expressions": {}, "allow_stdin": False, "stop_on_error": True})
    kernel.wait_for(lambda m: m["parent_header"].get("msg_id") == cell
                    and m["msg_type"] == "execute_input", since=cell_start)
    _interrupt_a_sleeping_command(kernel, comm_id)
    error = kernel.wait_for(lambda m: m["parent_header"].get("msg_id") == cell
                            and m["msg_type"] == "error", 8, since=cell_start)
    assert error["content"]["ename"] == "CancelledError"
    kernel.alive_check()
    content, _ = kernel.execute("3 + 3")
    assert content["status"] == "ok"
