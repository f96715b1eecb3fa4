"""A background job's file changes under the root (kli.tools.core.undo's job watch over
tools/process/jobs.py): detected when the job ends, shown by bash_output and in a call event,
recorded as one change that undo takes back; bounded as a foreground call's detection is."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from kli.tools import Workspace
from kli.tools.core import snapshot, undo


def _start(ws: Workspace, command: str, session: Any = None) -> str:
    r = ws.call("bash", {"command": command, "run_in_background": True}, session)
    assert r.ok, r.text
    return str(r.details["job_id"])


def _ended(ws: Workspace, job: str, session: Any = None) -> Any:
    for _ in range(60):
        r = ws.call("bash_output", {"job_id": job, "wait": 1}, session)
        if r.details["status"] != "running":
            return r
    raise AssertionError("the job did not end")


def _paths(result: Any) -> dict[str, str]:
    details = result["details"] if isinstance(result, dict) else result.details
    return {f["path"]: f["change_kind"] for f in details.get("files", [])}


def test_a_jobs_changes_are_shown_when_it_ends_recorded_and_undone(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("one\n")
    (root / "gone.txt").write_text("bye\n")
    events: list[dict[str, Any]] = []
    ws.add_listener(events.append)
    job = _start(ws, "sleep 0.3; echo two >> a.txt; echo new > b.txt; rm gone.txt")
    out = _ended(ws, job)
    assert _paths(out) == {"a.txt": "modified", "b.txt": "created", "gone.txt": "deleted"}
    files = {f["path"]: f for f in out.details["files"]}
    assert (files["a.txt"]["before"], files["a.txt"]["after"]) == ("one\n", "one\ntwo\n")
    assert all(f["detected"] for f in files.values()) and out.details["detection"]["complete"]
    change = out.details["change"]
    assert f"job {job} changed files" in out.text and change in out.text
    [ended] = [e for e in events if e["kind"] == "call" and e["details"].get("job_completion")]
    assert ended["tool"] == "bash" and ended["args"]["job_id"] == job
    assert ended["details"]["change"] == change and _paths(ended) == _paths(out)
    again = ws.call("bash_output", {"job_id": job})
    assert "files" not in again.details and again.details["change"] == change  # shown once
    assert f"changed files: change {change}" in ws.call("bash_jobs", {}).text
    assert [c.tool for c in undo.timeline(str(root)) if c.id == change] == ["bash"]
    assert ws.call("undo", {"change": change}).ok
    assert (root / "a.txt").read_text() == "one\n" and (root / "gone.txt").read_text() == "bye\n"
    assert not (root / "b.txt").exists()


def test_a_job_that_ends_at_once_has_its_change_recorded_once(ws: Workspace, root: Path) -> None:
    r = ws.call("bash", {"command": "echo quick > q.txt", "run_in_background": True})
    out = _ended(ws, str(r.details["job_id"]))
    # the start call's own walk may see it, or the job's: never both, never neither
    seen = [p for p in (_paths(r), _paths(out)) if "q.txt" in p]
    assert len(seen) == 1
    assert [f.path for c in undo.timeline(str(root)) for f in c.files] == ["q.txt"]


def test_a_file_the_job_is_still_writing_as_its_start_returns_is_the_jobs_change_alone(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A walk after the start call (an earlier version's) could catch a file the job had made
    and not yet written, and record it twice: created by the start, modified by the job (a
    clean-clone run met it). Here the walk after the start would wait for the job's file."""
    real = snapshot.take
    walks = [0]

    def walk(*args: Any, **kwargs: Any) -> Any:
        walks[0] += 1
        if walks[0] == 2:  # the start call's second walk: once the job has made its file
            deadline = time.monotonic() + 5
            while not (root / "q.txt").exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        return real(*args, **kwargs)

    monkeypatch.setattr(snapshot, "take", walk)
    r = ws.call("bash", {"command": ": > q.txt; sleep 0.3; echo quick > q.txt",
                         "run_in_background": True})
    out = _ended(ws, str(r.details["job_id"]))
    assert _paths(r) == {} and _paths(out) == {"q.txt": "created"}
    assert [f.path for c in undo.timeline(str(root)) for f in c.files] == ["q.txt"]


def test_a_file_another_call_changed_meanwhile_is_that_calls_not_the_jobs(
    ws: Workspace, root: Path
) -> None:
    job = _start(ws, "sleep 0.6; echo job > j.txt")
    w = ws.call("write", {"path": "w.txt", "content": "mine\n"})
    assert w.ok and w.details.get("change")
    out = _ended(ws, job)
    assert _paths(out) == {"j.txt": "created"}


def test_a_killed_job_and_a_job_of_a_closed_session_have_their_changes_recorded(
    ws: Workspace, root: Path
) -> None:
    job = _start(ws, "sleep 0.3; echo a > k.txt; sleep 30")
    time.sleep(1.0)
    killed = ws.call("bash_kill", {"job_id": job})
    assert killed.ok, killed.text
    out = _ended(ws, job)
    assert _paths(out) == {"k.txt": "created"}
    agent = ws.open_session("agent")
    events: list[dict[str, Any]] = []
    ws.add_listener(events.append)
    _start(ws, "sleep 0.3; echo b > s.txt; sleep 30", agent)
    time.sleep(1.0)
    ws.close_session(agent.id)
    [ended] = [e for e in events if e["kind"] == "call" and e["details"].get("job_completion")]
    assert _paths(ended) == {"s.txt": "created"} and ended["session_label"] == "agent"
    assert ws.call("undo", {"change": ended["details"]["change"]}).ok
    assert not (root / "s.txt").exists()


def test_a_jobs_watch_is_bounded_as_a_calls_detection_is(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot, "MAX_ENTRIES", 5)
    for i in range(10):
        (root / f"f{i}.txt").write_text(f"{i}\n")
    ws = Workspace(str(root))
    out = _ended(ws, _start(ws, "sleep 0.2; echo x >> f0.txt"))
    assert out.details["detection"]["complete"] is False
    assert out.details["detection"]["reason"] == "over 5 files"


def test_no_watch_when_change_detection_is_off(root: Path) -> None:
    ws = Workspace(str(root), {"change_detection": False})
    out = _ended(ws, _start(ws, "sleep 0.2; echo x > new.txt"))
    assert "files" not in out.details and "change" not in out.details
    assert "changed files" not in out.text


def test_a_running_jobs_changes_so_far_are_shown_and_recorded_by_each_read(
    ws: Workspace, root: Path
) -> None:
    events: list[dict[str, Any]] = []
    ws.add_listener(events.append)
    job = _start(ws, "sleep 0.3; echo 1 > f.txt; echo a > p1.txt; sleep 1.5; echo 2 >> f.txt;"
                     " echo b > p2.txt")
    time.sleep(1.0)
    early = ws.call("bash_output", {"job_id": job})
    assert early.details["status"] == "running", early.text
    assert _paths(early) == {"f.txt": "created", "p1.txt": "created"}
    first = early.details["change"]
    assert f"job {job} (so far) changed files" in early.text and first in early.text
    quiet = ws.call("bash_output", {"job_id": job})  # nothing new since: nothing shown
    assert "files" not in quiet.details and quiet.details["change"] == first
    out = _ended(ws, job)
    assert _paths(out) == {"f.txt": "modified", "p2.txt": "created"}
    files = {f["path"]: f for f in out.details["files"]}
    assert (files["f.txt"]["before"], files["f.txt"]["after"]) == ("1\n", "1\n2\n")
    second = out.details["change"]
    assert second != first
    kinds = [k for e in events if e["kind"] == "call"
             for k in ("job_progress", "job_completion") if e["details"].get(k)]
    assert kinds == ["job_progress", "job_completion"]
    assert ws.call("undo", {"change": second}).ok
    assert (root / "f.txt").read_text() == "1\n" and not (root / "p2.txt").exists()
    assert ws.call("undo", {"change": first}).ok
    assert not (root / "f.txt").exists() and not (root / "p1.txt").exists()
