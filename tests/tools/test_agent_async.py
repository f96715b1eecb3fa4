"""kli.tools.agent.run_agent_async with the real litellm client (kli.tools.agentmodels).

The model is the one thing faked: a scripted OpenAI-compatible server on 127.0.0.1
(tests/endpoint.py, NOT a model) answers with tool calls, streamed as OpenAI streams them.
litellm, the workspace, its tools, approval mode and the shell commands are all real.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kli.tools import Workspace
from kli.tools.agent import (
    CallStarted,
    Decided,
    Event,
    Finished,
    Held,
    Outcome,
    Reply,
    SessionHost,
    Stopped,
    run_agent_async,
)
from kli.tools.agentmodels import litellm_model
from kli.tools.core import approval
from tests.endpoint import ScriptedEndpoint, answer, calls
from tests.processes import alive as _alive

pytest.importorskip("litellm")

CALC = "def add(a, b):\n    return a - b\n"


def _turn(request: dict[str, Any]) -> int:
    return sum(1 for m in request["messages"] if m["role"] == "tool")


def _fix_calc(request: dict[str, Any]) -> dict[str, Any]:
    """read calc.py → edit the wrong line by its anchor → answer (a reply with no tools)."""
    tools_offered = request.get("tools")
    n = _turn(request)
    last = request["messages"][-1].get("content") or ""
    if n == 0:
        return calls(("read", {"path": "calc.py", "start": None, "end": None, "raw": None}))
    if n == 1 and tools_offered:
        anchor = re.search(r"^(\d+:[0-9a-f]{2})\|    return a - b$", last, re.M)
        assert anchor, last
        return calls(("edit", {"input": f"@@ calc.py\n= {anchor.group(1)}\n~    return a + b\n",
                               "repair": None, "accept_repair": None, "reject_repair": None,
                               "note": None, "path": None}), n=1)
    return answer("add now adds. " + ("[review] seen" if "[review]" in last else ""))


def _model(url: str, **options: Any) -> Any:
    return litellm_model("openai/scripted", api_base=url, api_key="sk-test", **options)


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_a_read_edit_answer_run_reports_each_step_in_order(root: Path) -> None:
    (root / "calc.py").write_text(CALC)
    events: list[Event] = []
    texts: list[str] = []
    with ScriptedEndpoint(_fix_calc) as url:
        run = _run(run_agent_async("fix add", _model(url, on_text=texts.append),
                                   Workspace(str(root)), on_event=events.append))
    assert [e.kind for e in events] == ["reply", "call", "outcome", "reply", "call", "outcome",
                                       "reply", "answer"]
    reply, call, read, _, _, edit, last, done = events
    assert isinstance(reply, Reply) and reply.calls == ["read"] and reply.turn == 1
    assert reply.usage["total"] == reply.usage["prompt"] + reply.usage["completion"] > 0
    assert isinstance(call, CallStarted) and (call.tool, call.target) == ("read", "calc.py")
    assert isinstance(read, Outcome) and read.status == "ok" and read.target == "calc.py"
    assert isinstance(edit, Outcome) and (edit.tool, edit.status) == ("edit", "ok")
    assert (edit.added, edit.removed) == (1, 1) and edit.target == "calc.py"
    assert isinstance(last, Reply) and last.text.startswith("add now adds")
    assert isinstance(done, Finished) and done.stopped == "answered" and done.turns == 3
    assert done.usage["total"] == sum(e.usage["total"] for e in events if isinstance(e, Reply))
    assert run.usage == done.usage and run.answer == done.answer
    assert "".join(texts).startswith("add now adds")  # the streamed text, as it came
    assert (root / "calc.py").read_text() == CALC.replace("a - b", "a + b")
    json_kinds = [e.to_json()["kind"] for e in events]
    assert json_kinds[-1] == "answer" and done.to_json()["answer"] == run.answer
    assert edit.line() == "[2] edit calc.py: ok +1 -1"


def test_the_model_id_and_endpoint_come_from_the_environment(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (root / "calc.py").write_text(CALC)
    endpoint = ScriptedEndpoint(_fix_calc)
    monkeypatch.setenv("KLI_AGENT_MODEL", "openai/from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", endpoint.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    with endpoint:
        run = _run(run_agent_async("fix add", litellm_model(stream=False), Workspace(str(root))))
    server_requests = endpoint.requests
    assert run.stopped == "answered"
    assert [r["model"] for r in server_requests] == ["from-env"] * 3
    assert {k.lower(): v for k, v in endpoint.headers[0].items()}["authorization"] == "Bearer sk-env"
    assert "stream" not in server_requests[0]


def test_one_tool_call_per_turn_in_the_async_loop(root: Path) -> None:
    def script(request: dict[str, Any]) -> dict[str, Any]:
        if _turn(request) == 0:
            return calls(("write", {"path": "first.txt", "content": "1\n"}),
                         ("write", {"path": "second.txt", "content": "2\n"}),
                         ("bash", {"command": "touch third.txt", "directory": None,
                                   "input": None, "shell": None, "timeout": None,
                                   "run_in_background": None}))
        return answer("done")

    endpoint = ScriptedEndpoint(script)
    events: list[Event] = []
    with endpoint as url:
        run = _run(run_agent_async("make files", _model(url), Workspace(str(root)),
                                   on_event=events.append))
    assert (root / "first.txt").exists()
    assert not (root / "second.txt").exists() and not (root / "third.txt").exists()
    assert run.dropped_calls == 2
    first = events[0]
    assert isinstance(first, Reply) and first.calls == ["write", "write", "bash"]
    assert [e.kind for e in events].count("call") == 1
    sent = endpoint.requests[1]["messages"]
    assert [c["function"]["name"] for c in sent[2]["tool_calls"]] == ["write"]
    assert "only the first call ran; 2 more (write, bash) were dropped" in sent[3]["content"]


@pytest.mark.serial  # asserts a wall-clock time
def test_cancelling_during_a_60s_bash_ends_the_run_and_kills_the_command(root: Path) -> None:
    def script(request: dict[str, Any]) -> dict[str, Any]:
        return calls(("bash", {"command": "echo $$ > pid; exec sleep 60", "directory": None,
                               "input": None, "shell": None, "timeout": 120,
                               "run_in_background": None}))

    events: list[Event] = []

    async def scenario() -> float:
        task = asyncio.create_task(run_agent_async("wait", _model(url), Workspace(str(root)),
                                                   on_event=events.append))
        while not (root / "pid").exists() or not (root / "pid").read_text().strip():
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    with ScriptedEndpoint(script) as url:
        took = _run(scenario())
    pid = int((root / "pid").read_text())
    deadline = time.monotonic() + 2.0
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert took < 2.0
    assert not _alive(pid), "the 60 s command still runs after the run was cancelled"
    assert isinstance(events[-1], Stopped) and events[-1].during == "bash"


def _review_ws(root: Path) -> tuple[Workspace, SessionHost]:
    ws = Workspace(str(root))
    approval.set_mode(ws, "review", "file")
    return ws, SessionHost(ws, ws.open_session("agent: fix add"))


def _decide_when_held(ws: Workspace, events: list[Event], decide: Any) -> threading.Thread:
    """A person, on another thread, deciding the first held proposal once it is shown."""

    def person() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            held = [e for e in list(events) if isinstance(e, Held)]
            if held:
                time.sleep(0.3)  # the run is waiting in await_decision by now
                decide(held[0].proposal)
                return
            time.sleep(0.05)

    thread = threading.Thread(target=person, daemon=True)
    thread.start()
    return thread


def test_a_held_edit_waits_for_the_persons_accept_then_the_run_goes_on(root: Path) -> None:
    (root / "calc.py").write_text(CALC)
    ws, host = _review_ws(root)
    events: list[Event] = []
    person = _decide_when_held(ws, events, lambda pid: approval.accept_any(ws, pid, "ui"))
    endpoint = ScriptedEndpoint(_fix_calc)
    with endpoint as url:
        run = _run(run_agent_async("fix add", _model(url), host, on_event=events.append,
                                   review_wait=30))
    person.join(5)
    kinds = [e.kind for e in events]
    assert kinds == ["reply", "call", "outcome", "reply", "call", "held", "decided", "reply",
                     "answer"]
    held = events[5]
    assert isinstance(held, Held) and held.proposal.startswith("p") and held.target == "calc.py"
    assert (held.added, held.removed, held.wait) == (1, 1, 30)
    decided = events[6]
    assert isinstance(decided, Decided) and decided.status == "accepted"
    assert (root / "calc.py").read_text() == CALC.replace("a - b", "a + b")
    told = endpoint.requests[2]["messages"][-1]["content"]
    assert told.startswith("Not written") and "[review]" in told
    assert run.stopped == "answered" and run.answer is not None and "[review] seen" in run.answer


def test_a_reject_note_reaches_the_model(root: Path) -> None:
    (root / "calc.py").write_text(CALC)
    ws, host = _review_ws(root)
    events: list[Event] = []
    _decide_when_held(ws, events, lambda pid: approval.reject(ws, pid, "ui", "use sum() instead"))
    endpoint = ScriptedEndpoint(_fix_calc)
    with endpoint as url:
        _run(run_agent_async("fix add", _model(url), host, on_event=events.append,
                             review_wait=30))
    decided = next(e for e in events if isinstance(e, Decided))
    assert decided.status == "rejected" and decided.note == "use sum() instead"
    assert "use sum() instead" in endpoint.requests[2]["messages"][-1]["content"]
    assert (root / "calc.py").read_text() == CALC


def test_no_decision_within_the_wait_stops_the_run_when_so_configured(root: Path) -> None:
    (root / "calc.py").write_text(CALC)
    _, host = _review_ws(root)
    events: list[Event] = []
    endpoint = ScriptedEndpoint(_fix_calc)
    with endpoint as url:
        run = _run(run_agent_async("fix add", _model(url), host, on_event=events.append,
                                   review_wait=0.5, on_review_timeout="stop"))
    decided = next(e for e in events if isinstance(e, Decided))
    assert decided.status == "pending"
    assert run.stopped == "held for review" and run.turns == 3
    final = endpoint.requests[-1]
    assert "tools" not in final and "still waiting for the person's review" in \
        final["messages"][-1]["content"]
    assert (root / "calc.py").read_text() == CALC


def test_kli_tools_does_not_import_litellm() -> None:
    code = ("import sys, kli.tools, kli.tools.agent, kli.tools.agentmodels; "
            "print('litellm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ})
    assert out.stdout.strip() == "False"


def test_run_agent_the_synchronous_wrapper_waits_for_review_too(root: Path) -> None:
    """The same loop, every call on this thread: a held edit, a person's Accept from another
    thread, then the run goes on (the model a plain function calling the scripted server)."""
    import json
    import urllib.request

    (root / "calc.py").write_text(CALC)
    ws, host = _review_ws(root)
    events: list[Event] = []
    _decide_when_held(ws, events, lambda pid: approval.accept_any(ws, pid, "ui"))
    endpoint = ScriptedEndpoint(_fix_calc)

    def model(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Any:
        body = json.dumps({"model": "scripted", "messages": messages,
                           **({"tools": tools} if tools else {})}).encode()
        request = urllib.request.Request(endpoint.url + "/chat/completions", body,
                                         {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    from kli.tools.agent import run_agent

    with endpoint:
        run = run_agent("fix add", model, host, on_event=events.append, review_wait=30)
    assert [e.kind for e in events if e.kind in ("held", "decided")] == ["held", "decided"]
    assert run.stopped == "answered" and (root / "calc.py").read_text() == CALC.replace(
        "a - b", "a + b")


def test_run_agent_refuses_a_model_that_must_be_awaited(ws: Workspace) -> None:
    from kli.tools.agent import run_agent

    async def model(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"choices": [{"message": {"role": "assistant", "content": "hi"}}]}

    with pytest.raises(TypeError, match="run_agent_async"):
        run_agent("x", model, ws)  # type: ignore[arg-type]
