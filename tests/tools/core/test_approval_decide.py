"""Only a person decides a held call, and Accept runs only what was shown (issue 23,
docs/review.md): ``edit accept_repair`` of a held id is refused for every source and mode with
nothing written; a held call's sources are compared by what they name and their sha256."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kli.tools import Workspace
from kli.tools.core import approval


def _review(root: Path, value: Any) -> Workspace:
    (root / ".kli").mkdir(exist_ok=True)
    (root / ".kli" / "settings.json").write_text(json.dumps({"approval": value}))
    return Workspace(str(root))


def test_accept_repair_of_a_held_write_is_refused_in_every_mode_and_the_person_still_decides(
        root: Path) -> None:
    ws = _review(root, {"file": "review"})
    agent = ws.open_session("agent")
    held = ws.call("write", {"path": "new.txt", "content": "held\n"}, agent, source="agent")
    pid = held.details["proposal"]
    under_review = ws.call("edit", {"accept_repair": pid, "path": "new.txt"}, agent,
                           source="agent")
    assert "a person decides held calls" in under_review.text
    ws.set_setting("approval", {"file": "auto"})  # the person switched files back
    other = ws.open_session("agent")
    for session, source in ((other, "agent"), (agent, "agent"), (ws.default_session, "api")):
        r = ws.call("edit", {"accept_repair": pid, "path": "new.txt"}, session, source=source)
        assert not r.ok and r.details["error"] == "held_call", r.text
        assert not (root / "new.txt").exists()
        assert ws.find_candidate(pid) is not None
    agent_text = ws.call("edit", {"accept_repair": pid, "path": "x"}, other, source="agent").text
    assert "only a person decides it" in agent_text and f"await_decision id='{pid}'" in agent_text
    assert f"%kli accept {pid}" in r.text  # the API / magic caller is told the person's way
    assert approval.accept_any(ws, pid, "ui").ok
    assert (root / "new.txt").read_text() == "held\n"


def test_a_changed_source_is_named_whether_changed_added_or_gone() -> None:
    def cell(cid: str, text: str, kind: str = "code") -> dict[str, Any]:
        return approval.source_entry(f"nb.ipynb#{cid}", text.encode(), cell=cid, type=kind)

    shown = [cell("a", "1"), cell("b", "2")]
    assert approval.changed_source(shown, [cell("a", "1"), cell("b", "2")]) is None
    assert approval.changed_source(shown, [cell("a", "1"), cell("b", "3")]) == "nb.ipynb#b"
    assert approval.changed_source(shown, [cell("a", "1"), cell("b", "2", "markdown")]) \
        == "nb.ipynb#b"
    assert approval.changed_source(shown, [cell("a", "1")]) == "nb.ipynb#b"
    assert approval.changed_source(shown, [*shown, cell("c", "")]) == "nb.ipynb#c"
    assert approval.changed_source(shown, [cell("b", "2"), cell("a", "1")]) == "nb.ipynb#a"


def test_every_call_made_inside_an_agents_call_is_the_agents(root: Path) -> None:
    ws = Workspace(str(root))
    seen: list[bool] = []
    ws.namespace["seen"] = seen
    ws.namespace["ws"] = ws
    ws.call("eval", {"code": "import kli.tools.core.approval as a\nseen.append(a.by_agent())\n"
                     "ws.call('eval', {'code': 'seen.append(a.by_agent())'}, source='magic')"},
            source="agent")
    ws.call("eval", {"code": "seen.append(a.by_agent())"}, source="magic")
    assert seen == [True, True, False]
    assert not approval.by_agent()


def test_a_held_eval_runs_once_however_many_accepts_and_a_reject_while_it_runs_is_refused(
        root: Path) -> None:
    import threading
    import time

    ws = _review(root, {"eval": "review"})
    runs: list[int] = []
    ws.namespace["runs"] = runs
    agent = ws.open_session("agent")
    held = ws.call("eval", {"code": "import time\nruns.append(1)\ntime.sleep(1.0)"}, agent,
                   source="agent")
    pid = held.details["proposal"]
    first: list[Any] = []
    worker = threading.Thread(target=lambda: first.append(approval.accept_any(ws, pid, "ui")))
    worker.start()
    deadline = time.monotonic() + 10
    while not runs and time.monotonic() < deadline:
        time.sleep(0.01)
    second = approval.accept_any(ws, pid, "widget")
    rejected = approval.reject(ws, pid, "ui", "stop")
    worker.join(10)
    assert not second.ok and second.details["error"] == "running", second.text
    assert not rejected.ok  # running, or (its session busy until the run ended) decided
    assert first[0].ok and runs == [1]
    decision = ws.decided[pid].decision
    assert decision is not None and decision.by == "ui" and decision.code == "written"
    again = approval.accept_any(ws, pid, "ui")
    assert not again.ok and runs == [1]


def test_an_agents_eval_calling_the_persons_accept_or_reject_is_refused(root: Path) -> None:
    ws = _review(root, {"file": "review"})
    agent = ws.open_session("agent")
    pid = ws.call("write", {"path": "new.txt", "content": "x\n"}, agent,
                  source="agent").details["proposal"]
    ws.namespace["ws"] = ws
    for code in (f"approval.accept_any(ws, {pid!r}, 'ui').text",
                 "approval.bulk(ws, 'accept', 'ui').text",
                 f"approval.reject(ws, {pid!r}, 'ui').text"):
        r = ws.call("eval", {"code": f"from kli.tools.core import approval\n{code}"}, agent,
                    source="agent")
        assert "only a person decides a proposal" in r.text, r.text
    assert not (root / "new.txt").exists() and ws.find_candidate(pid) is not None
    assert approval.accept_any(ws, pid, "ui").ok  # the person's own Accept


def test_deciding_a_held_call_already_decided_says_what_became_of_it(root: Path) -> None:
    ws = _review(root, {"shell": "review"})
    agent = ws.open_session("agent")
    pid = ws.call("bash", {"command": "echo ran > ran.txt"}, agent, source="agent").details["proposal"]
    assert approval.accept_any(ws, pid, "ui").ok
    assert (root / "ran.txt").read_text() == "ran\n"
    for late in (approval.reject(ws, pid, "ui", "too late"), approval.accept_any(ws, pid, "ui")):
        assert not late.ok and late.details["status"] == "written", late.text
        assert f"{pid} is no longer pending" in late.text and "was accepted by a person" in late.text
        assert "repair candidate" not in late.text
    assert (root / "ran.txt").read_text() == "ran\n"  # the second Accept ran nothing
