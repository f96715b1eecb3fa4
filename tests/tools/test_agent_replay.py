"""A recorded model (``kli.tools.agentmodels``: ``RecordingModel`` records a run, ``ReplayModel``
plays it back, ``replay:PATH`` names one).

Recordings here are made from real runs of the loop on real Workspaces, with the real model
client (litellm) talking to tests/endpoint.py — a scripted OpenAI-compatible server, NOT a
model. The replays run with that server shut: nothing is asked of any endpoint.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from kli.tools import Workspace
from kli.tools.agent import Held, SessionHost, run_agent, run_agent_async
from kli.tools.agentmodels import (
    REPLAY_FORMAT,
    LitellmModel,
    RecordingModel,
    ReplayDeparted,
    ReplayModel,
    agent_model,
)
from kli.tools.core import approval
from tests.endpoint import ScriptedEndpoint, answer, calls

pytest.importorskip("litellm")

CALC = "def add(a, b):\n    return a - b\n"
TASK = "add in calc.py subtracts; fix it"


def _fix_calc(request: dict[str, Any]) -> dict[str, Any]:
    done = sum(1 for m in request["messages"] if m["role"] == "tool")
    last = request["messages"][-1].get("content") or ""
    if done == 0:
        return calls(("read", {"path": "calc.py"}))
    if done == 1:
        anchor = re.search(r"^(\d+:[0-9a-f]{2})\|    return a - b$", last, re.M)
        assert anchor, last
        return calls(("edit", {"input": f"@@ calc.py\n= {anchor.group(1)}\n~    return a + b\n"}),
                     n=1)
    return answer("add now adds" + (" (accepted)" if "accepted by a person" in last else ""))


def _workspace(root: Path, text: str = CALC) -> Workspace:
    root.mkdir()
    (root / "calc.py").write_text(text)
    return Workspace(str(root))


def _record(tmp_path: Path, *, review: bool = False) -> Path:
    """A real run recorded: litellm → the scripted endpoint; with ``review``, the edit is
    held and a thread Accepts it as the panel would. The recording's path."""
    ws = _workspace(tmp_path / "recorded")
    if review:
        approval.set_mode(ws, "review", "file")
    session = ws.open_session("agent: recorded")

    def person(event: Any) -> None:
        if isinstance(event, Held):
            threading.Timer(0.1, approval.accept_any, (ws, event.proposal, "ui")).start()

    with ScriptedEndpoint(_fix_calc) as url:
        model = RecordingModel(LitellmModel("openai/scripted", api_base=url, api_key="sk-x"),
                               about="a test's run")
        run = asyncio.run(run_agent_async(TASK, model, SessionHost(ws, session),
                                          review_wait=30, on_event=person))
    assert run.answer is not None and run.answer.startswith("add now adds")
    path = tmp_path / "run.replay.json"
    model.save(path)
    return path


def test_a_recorded_run_replays_to_the_same_edit_and_answer_with_no_endpoint_nor_litellm(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _record(tmp_path)
    recording = json.loads(path.read_text())
    assert recording["format"] == REPLAY_FORMAT and recording["task"] == TASK
    assert [t["request"]["tools"] for t in recording["turns"]] == [True, True, True]
    ws = _workspace(tmp_path / "replayed")
    monkeypatch.setitem(sys.modules, "litellm", None)  # as on Binder: not installed
    # the endpoint is shut: nothing to ask
    run = run_agent(TASK, agent_model(f"replay:{path}"), ws)  # type: ignore[arg-type]
    assert run.answer == "add now adds" and run.stopped == "answered"
    assert [s.tool for s in run.steps] == ["read", "edit"] and all(s.result.ok for s in run.steps)
    assert (Path(ws.root) / "calc.py").read_text() == CALC.replace("a - b", "a + b")
    assert run.usage == {}  # a replay spends nothing and says so


def test_the_replay_refuses_a_tool_result_it_did_not_record_and_names_the_difference(
        tmp_path: Path) -> None:
    path = _record(tmp_path)
    changed = "# calc\n" + CALC
    ws = _workspace(tmp_path / "replayed", changed)
    with pytest.raises(ReplayDeparted) as refused:
        run_agent(TASK, ReplayModel(path), ws)
    text = str(refused.value)
    assert text.startswith(f"The replay {path.name} stops at reply 2: the tool's result is "
                           "not the one recorded")
    assert "# calc" in text.split("this run has", 1)[1]  # the run's side, at the difference
    assert (Path(ws.root) / "calc.py").read_text() == changed  # the recorded edit never ran


def test_the_replay_refuses_another_task_and_a_turn_past_its_recording(tmp_path: Path) -> None:
    path = _record(tmp_path)
    model = ReplayModel(path)
    with pytest.raises(ReplayDeparted, match=r"stops at reply 1: this recording answers the "
                                             r"task «add in calc.py subtracts; fix it»"):
        run_agent("tidy calc.py", model, _workspace(tmp_path / "other"))
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": TASK}]
    messages += [{"role": "assistant", "content": "x"}] * 3
    with pytest.raises(ReplayDeparted, match="the recording has 3 replies, and the run asks "
                                             "for one more"):
        model(messages, None)


def test_a_held_and_accepted_edit_replays_though_the_proposal_id_differs(
        tmp_path: Path) -> None:
    path = _record(tmp_path, review=True)
    held_then = re.search(r"Proposal (p\d+) holds",
                          json.loads(path.read_text())["turns"][2]["request"]["last"]["content"])
    assert held_then is not None
    ws = _workspace(tmp_path / "replayed")
    approval.set_mode(ws, "review", "file")
    (Path(ws.root) / "other.py").write_text("x = 1\n")
    earlier = ws.call("write", {"path": "other.py", "content": "x = 2\n"}, ws.open_session("a"),
                      source="agent")
    assert earlier.details.get("status") == "pending"  # a call held before: ids move on
    session = ws.open_session("agent: replayed")
    seen: list[str] = []

    def person(event: Any) -> None:
        if isinstance(event, Held):
            seen.append(event.proposal)
            threading.Timer(0.1, approval.accept_any, (ws, event.proposal, "ui")).start()

    run = asyncio.run(run_agent_async(TASK, ReplayModel(path), SessionHost(ws, session),
                                      review_wait=30, on_event=person))
    assert len(seen) == 1 and seen[0] != held_then.group(1)
    assert run.answer == "add now adds (accepted)"
    assert (Path(ws.root) / "calc.py").read_text() == CALC.replace("a - b", "a + b")


def test_a_replay_id_names_the_recording_and_an_unusable_file_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _record(tmp_path)
    monkeypatch.chdir(tmp_path)
    model = agent_model(f"replay:{path.name}")
    assert isinstance(model, ReplayModel) and model.model == f"replay:{path.name}"
    assert "a recorded model (replay), not a live one" in model.label
    monkeypatch.setenv("KLI_AGENT_MODEL", f"replay:{path.name}")
    assert isinstance(agent_model(), ReplayModel)
    assert isinstance(agent_model("openai/gpt-4.1-mini"), LitellmModel)
    with pytest.raises(ValueError, match=r"cannot be read.*relative to the kernel's working"):
        agent_model("replay:missing.json")
    (tmp_path / "other.json").write_text('{"turns": []}')
    with pytest.raises(ValueError, match="is not a replay file"):
        agent_model("replay:other.json")
