"""Repair candidates as data: one lookup and one error code, the plan and the decision kept on
the candidate, and exactly one ``resolved`` event per decision, whoever made it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kli.tools import Workspace
from kli.tools.core import approval
from kli.tools.core.proposal import UNKNOWN, Decision
from kli.tools.file import candidates
from kli.tools.file.anchors import line_hash
from kli.tools.file.plan import FilePlan

LISP = "(defun f (x)\n  (let ((y 1))\n    (+ x y)))\n\n(defun g () 1)\n"
CANDIDATE = LISP.replace("(defun g () 1)", "(defun g () (h 1))\n(defun h (x) x)")


def preview(ws: Workspace, root: Path, name: str = "a.lisp", session: Any = None) -> str:
    (root / name).write_text(LISP)
    assert ws.call("read", {"path": name}, session=session).ok
    patch = f"@@ {name}\n= 5:{line_hash('(defun g () 1)')}\n~(defun g () (h 1)\n~(defun h (x) x)\n"
    r = ws.call("edit", {"input": patch}, session=session)
    assert r.details["reason"] == "form_count_changed", r.text
    return str(r.details["candidate"])


def resolved(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == "resolved"]


def listen(ws: Workspace) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    ws.add_listener(events.append)
    return events


def test_the_candidate_keeps_its_plan_as_made(ws: Workspace, root: Path) -> None:
    cid = preview(ws, root)
    cand = ws.find_candidate(cid)
    assert cand is not None and cand.status == "pending" and cand.decision is None
    assert isinstance(cand.plan, candidates.RepairPlan)
    assert isinstance(cand.plan.file, FilePlan) and cand.plan.repair.text == CANDIDATE
    assert cand.after == CANDIDATE and cand.before == LISP and cand.kind == "repair"


def test_accept_records_the_decision_on_the_candidate_and_emits_one_resolved(
    ws: Workspace, root: Path
) -> None:
    cid = preview(ws, root)
    cand = ws.find_candidate(cid)
    events = listen(ws)
    r = ws.call("edit", {"accept_repair": cid, "path": "a.lisp"}, source="magic")
    assert r.ok, r.text
    assert cand is not None and cand.status == "written"
    assert cand.decision == Decision("written", "accepted", "magic", r.text)
    (note,) = resolved(events)
    assert (note["candidate"], note["status"], note["reason"], note["by"]) == (
        cid, "written", "accepted", "magic")
    assert note["text"] == r.text and note["path"] == "a.lisp"
    assert r.details["resolved"] == {"candidate": cid, "status": "written", "reason": "accepted",
                                     "by": "magic"}


def test_reject_emits_one_resolved_event(ws: Workspace, root: Path) -> None:
    cid = preview(ws, root)
    events = listen(ws)
    r = approval.reject(ws, cid, "ui")
    assert r.ok and (root / "a.lisp").read_text() == LISP
    (note,) = resolved(events)
    assert (note["status"], note["reason"], note["by"]) == ("rejected", "rejected", "ui")
    assert r.details["resolved"] == {"candidate": cid, "status": "rejected", "reason": "rejected",
                                     "by": "ui"}


def test_a_reject_from_a_host_is_one_call_event_and_one_resolved_as_an_accept_is(
        ws: Workspace, root: Path) -> None:
    cid = preview(ws, root)
    owner = ws.find_candidate(cid)
    assert owner is not None
    events = listen(ws)
    r = approval.reject(ws, cid, "ui", "  not like this ")
    assert r.ok, r.text
    calls = [e for e in events if e["kind"] == "call"]
    assert [(e["tool"], e["source"], e["args"], e["session"]) for e in calls] == [
        ("edit", "ui", {"reject_repair": cid, "note": "not like this"}, owner.session_id)]
    assert calls[0]["details"]["resolved"]["status"] == "rejected"
    (note,) = resolved(events)
    assert (note["candidate"], note["by"], note["note"]) == (cid, "ui", "not like this")


def test_an_agent_withdraws_its_own_preview_with_reject_repair_but_not_another_sessions(
        ws: Workspace, root: Path) -> None:
    cid = preview(ws, root)
    other = ws.open_session("other")
    refused = ws.call("edit", {"reject_repair": cid}, other, source="agent")
    assert not refused.ok and refused.details["error"] == "not_yours"
    assert ws.find_candidate(cid) is not None
    mine = ws.call("edit", {"reject_repair": cid}, source="agent")
    assert mine.ok and ws.find_candidate(cid) is None
    assert (root / "a.lisp").read_text() == LISP


def test_a_refused_accept_is_decided_with_the_error_code_as_reason(ws: Workspace, root: Path) -> None:
    cid = preview(ws, root)
    (root / "a.lisp").write_text(LISP + "(x)\n")
    events = listen(ws)
    r = ws.call("edit", {"accept_repair": cid, "path": "a.lisp"}, source="agent")
    assert not r.ok and r.details["error"] == "stale_candidate"
    (note,) = resolved(events)
    assert (note["status"], note["reason"], note["by"]) == ("refused", "stale_candidate", "agent")


def test_a_failed_accept_that_leaves_the_candidate_pending_decides_nothing(
    ws: Workspace, root: Path
) -> None:
    cid = preview(ws, root)
    (root / "other.lisp").write_text("(x)\n")
    events = listen(ws)
    r = ws.call("edit", {"accept_repair": cid, "path": "other.lisp"})
    assert not r.ok and r.details["error"] == "wrong_path"
    assert resolved(events) == [] and ws.find_candidate(cid) is not None


def test_closing_a_session_leaves_its_candidates_pending_as_expired_with_one_event(
    ws: Workspace, root: Path
) -> None:
    agent = ws.open_session("agent")
    first = preview(ws, root, "a.lisp", agent)
    second = preview(ws, root, "b.lisp", agent)
    events = listen(ws)
    ws.close_session(agent.id)
    assert resolved(events) == []
    [note] = [e for e in events if e["kind"] == "expired"]
    assert note["candidates"] == [first, second] and note["session_label"] == "agent"
    assert note["text"] == "expired — agent disconnected"
    pending = {p.id: p for p in ws.pending_candidates()}
    assert set(pending) == {first, second}
    assert pending[first].expired == "expired — agent disconnected"


def test_an_expired_candidate_can_still_be_accepted_by_hand_when_the_file_is_unchanged(
    ws: Workspace, root: Path
) -> None:
    agent = ws.open_session("agent")
    cid = preview(ws, root, "a.lisp", agent)
    ws.close_session(agent.id)
    r = ws.call("edit", {"accept_repair": cid, "path": "a.lisp"}, source="ui")
    assert r.ok, r.text
    assert (root / "a.lisp").read_text() == CANDIDATE
    assert ws.pending_candidates() == []


def test_a_candidate_dropped_by_the_session_bound_is_announced_as_discarded(
    ws: Workspace, root: Path
) -> None:
    ids = [preview(ws, root) for _ in range(candidates.MAX_PENDING_CANDIDATES)]
    events = listen(ws)
    preview(ws, root)
    (note,) = resolved(events)
    assert note["candidate"] == ids[0] and note["reason"] == "discarded"


def test_an_unknown_id_is_one_code_from_accept_and_reject(ws: Workspace, root: Path) -> None:
    (root / "a.lisp").write_text(LISP)
    accept = ws.call("edit", {"accept_repair": "c999999", "path": "a.lisp"})
    reject = approval.reject(ws, "c999999", "ui")
    assert accept.details["error"] == reject.details["error"] == UNKNOWN
    assert "no pending repair candidate 'c999999'" in accept.text
    assert "no pending repair candidate 'c999999'" in reject.text
