"""``%kli agent TASK`` in a real kli kernel (jupyter_client), with the real litellm client.

The model is the one thing faked: a scripted OpenAI-compatible server on 127.0.0.1
(tests/endpoint.py, NOT a model) answers with tool calls, streamed as OpenAI streams them.
The kernel, its Workspace, the tools, the shell command and the stop button are real.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kli.kernel.magics import MagicUsageError, parse_agent_args
from tests.endpoint import ScriptedEndpoint, answer, calls
from tests.kernel.conftest import Harness, start_harness, stop_harness
from tests.processes import alive as _alive

pytestmark = pytest.mark.kernel
pytest.importorskip("litellm")

CALC = "def add(a, b):\n    return a - b\n"


def _fix_calc(request: dict[str, Any]) -> dict[str, Any]:
    n = sum(1 for m in request["messages"] if m["role"] == "tool")
    last = request["messages"][-1].get("content") or ""
    if n == 0:
        return calls(("read", {"path": "calc.py", "start": None, "end": None, "raw": None}))
    if n == 1:
        anchor = re.search(r"^(\d+:[0-9a-f]{2})\|    return a - b$", last, re.M)
        assert anchor, last
        return calls(("edit", {"input": f"@@ calc.py\n= {anchor.group(1)}\n~    return a + b\n",
                               "repair": None, "accept_repair": None, "reject_repair": None,
                               "note": None, "path": None}), n=1)
    return answer("add now adds")


def _sleeper(request: dict[str, Any]) -> dict[str, Any]:
    return calls(("bash", {"command": "echo $$ > pid; exec sleep 60", "directory": None,
                           "input": None, "shell": None, "timeout": 120,
                           "run_in_background": None}))


@pytest.fixture
def agent_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                 request: pytest.FixtureRequest) -> Iterator[tuple[Harness, ScriptedEndpoint]]:
    endpoint = ScriptedEndpoint(request.param)
    monkeypatch.setenv("KLI_AGENT_MODEL", "openai/scripted")
    monkeypatch.setenv("OPENAI_BASE_URL", endpoint.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    root = tmp_path / "root"
    root.mkdir()
    (root / "calc.py").write_text(CALC)
    with endpoint:
        h = start_harness(root)
        try:
            yield h, endpoint
        finally:
            stop_harness(h)


def _shown(h: Harness, msg_id: str) -> str:
    """The last text/plain the cell's steps display shows (created, then updated in place)."""
    texts = [m["content"]["data"].get("text/plain", "") for m in h.seen
             if m["parent_header"].get("msg_id") == msg_id
             and m["msg_type"] in ("display_data", "update_display_data")]
    return texts[-1] if texts else ""


@pytest.mark.parametrize("agent_kernel", [_fix_calc], indirect=True)
def test_the_magic_shows_each_step_in_the_cell_and_the_edit_lands(
        agent_kernel: tuple[Harness, ScriptedEndpoint]) -> None:
    h, endpoint = agent_kernel
    start = len(h.seen)
    reply, _ = h.execute("%kli agent fix add", timeout=120)
    assert reply["status"] == "ok"
    msg_id = next(m["parent_header"]["msg_id"] for m in h.seen[start:]
                  if m["msg_type"] == "display_data")
    updates = [m for m in h.seen[start:] if m["msg_type"] == "update_display_data"]
    assert len(updates) >= 6  # shown as the steps came, not once at the end
    shown = _shown(h, msg_id)
    assert shown.splitlines()[0].startswith("kli agent (agent: fix add, openai/scripted)")
    assert "[1] read calc.py: ok" in shown and "[2] edit calc.py: ok +1 -1" in shown
    assert shown.rstrip().endswith("add now adds") and "tokens" in shown
    assert (h.root / "calc.py").read_text() == CALC.replace("a - b", "a + b")
    assert [r["model"] for r in endpoint.requests] == ["scripted"] * 3
    assert all(r.get("stream") for r in endpoint.requests)


@pytest.mark.serial  # asserts a wall-clock time
@pytest.mark.parametrize("agent_kernel", [_sleeper], indirect=True)
def test_the_stop_button_ends_the_run_and_kills_the_command_in_flight(
        agent_kernel: tuple[Harness, ScriptedEndpoint]) -> None:
    h, _ = agent_kernel
    start = len(h.seen)
    msg_id = h.kc.execute("%kli agent wait a minute --steps 3")
    pid_file = h.root / "pid"
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline, "the agent's command never started"
        time.sleep(0.05)
    pid = int(pid_file.read_text())
    time.sleep(0.3)
    pressed = time.monotonic()
    h.km.interrupt_kernel()
    h.wait_for(lambda m: m["parent_header"].get("msg_id") == msg_id
               and m["msg_type"] == "status" and m["content"]["execution_state"] == "idle",
               timeout=10, since=start)
    took = time.monotonic() - pressed
    while _alive(pid) and time.monotonic() < pressed + 2.0:
        time.sleep(0.05)
    assert took < 2.0, f"the cell ran on {took:.1f} s after the stop button"
    assert not _alive(pid), "the 60 s command still runs after the stop button"
    shown = _shown(h, msg_id)
    assert "Stopped (the kernel's stop button)" in shown
    h.settle(0.2)
    h.alive_check()


def test_agent_options_and_the_task_are_parsed() -> None:
    assert parse_agent_args("--model openai/x --steps 4 --wait=10 fix the --flag bug") == (
        {"model": "openai/x", "steps": 4, "wait": 10.0}, "fix the --flag bug")
    assert parse_agent_args("--profile slmcode", "fix it\n") == ({"profile": "slmcode"},
                                                                  "fix it")
    for bad in ("", "--steps x fix", "--profile lisp fix", "--colour red fix", "--steps 0 x"):
        with pytest.raises(MagicUsageError):
            parse_agent_args(bad)


@pytest.mark.parametrize("wait", ["-1", "601", "nan", "inf"])
def test_agent_wait_past_the_one_cap_is_refused_as_the_persona_refuses_it(wait: str) -> None:
    from kli.kernel.ai.settings import Settings
    from kli.tools.agent import MAX_REVIEW_WAIT

    assert MAX_REVIEW_WAIT == 600
    with pytest.raises(MagicUsageError, match="seconds from 0 to 600"):
        parse_agent_args(f"--wait {wait} fix it")
    with pytest.raises(ValueError, match="seconds from 0 to 600"):
        Settings().update({"review_wait": wait})
    assert parse_agent_args("--wait 600 fix it")[0] == {"wait": 600.0}


@pytest.mark.parametrize("agent_kernel", [_fix_calc], indirect=True)
def test_a_held_edit_is_accepted_from_the_panel_while_the_magic_waits(
        agent_kernel: tuple[Harness, ScriptedEndpoint]) -> None:
    """The person's Accept arrives on the UI comm while the cell runs the agent: it is served
    (not queued behind the cell), and the run goes on with the edit written."""
    h, endpoint = agent_kernel
    h.execute("%kli approval review file")
    ui, _ = h.open_comm("kli.ui", {"replay": 0})
    start = len(h.seen)
    msg_id = h.kc.execute("%kli agent --wait 60 fix add")
    held = h.wait_for(lambda m: m["parent_header"].get("msg_id") == msg_id
                      and m["msg_type"] == "update_display_data"
                      and "held for review as p" in m["content"]["data"]["text/plain"],
                      timeout=60, since=start)
    pid = re.search(r"held for review as (p\d+)", held["content"]["data"]["text/plain"])
    assert pid is not None
    time.sleep(0.3)
    accepted = h.request(ui, {"op": "accept", "candidate": pid.group(1)}, timeout=10)
    assert accepted["ok"], accepted
    h.wait_for(lambda m: m["parent_header"].get("msg_id") == msg_id
               and m["msg_type"] == "status" and m["content"]["execution_state"] == "idle",
               timeout=60, since=start)
    shown = _shown(h, msg_id)
    assert f"[2] {pid.group(1)}: accepted" in shown and shown.rstrip().endswith("add now adds")
    assert (h.root / "calc.py").read_text() == CALC.replace("a - b", "a + b")
    assert "[review]" in endpoint.requests[2]["messages"][-1]["content"]
