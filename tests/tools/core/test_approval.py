"""Approval mode: an agent's mutating call under ``review`` becomes a pending proposal;
nothing is written or run until a person accepts it, and Accept writes exactly what was shown
(or refuses when a file changed since). Bulk decisions, notes, expiry and await_decision."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kli.tools import Workspace
from kli.tools.core import approval, undo
from kli.tools.file.anchors import line_hash
from kli.tools.registry import REGISTRY

TEXT = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


def review(root: Path, value: Any = "review") -> Workspace:
    (root / ".kli").mkdir(exist_ok=True)
    (root / ".kli" / "settings.json").write_text(json.dumps({"approval": value}))
    return Workspace(str(root))


def agent_edit(ws: Workspace, session: Any, name: str = "a.py") -> Any:
    assert ws.call("read", {"path": name}, session, source="agent").ok
    patch = f"@@ {name}\n= 2:{line_hash('    return 1')}\n~    return 10\n"
    return ws.call("edit", {"input": patch}, session, source="agent")


def test_every_tool_that_changes_files_runs_commands_or_code_names_its_kind() -> None:
    kinds = {n: t.action for n, t in REGISTRY.tools.items() if t.action}
    assert kinds == {
        "edit": "file", "write": "file", "cells": "file", "ws_edit": "file", "ws_patch": "file",
        "ws_write": "file", "ws_mv": "file", "ws_delete": "file", "ws_checkpoints": "file",
        "undo": "file", "redo": "file", "bash": "shell", "ws_shell": "shell", "eval": "eval", "redefine": "eval", "run_cells": "eval",
        "trace": "eval",
        "eval_frame": "eval", "eval_continue": "eval",
    }


def test_auto_is_the_default_and_an_agent_edit_is_written_at_once(root: Path) -> None:
    (root / "a.py").write_text(TEXT)
    ws = Workspace(str(root))
    r = agent_edit(ws, ws.open_session("agent"))
    assert r.ok and "proposal" not in r.details
    assert "return 10" in (root / "a.py").read_text()


def test_under_review_an_agent_edit_is_pending_and_nothing_is_written(root: Path) -> None:
    (root / "a.py").write_text(TEXT)
    ws = review(root)
    agent = ws.open_session("agent")
    r = agent_edit(ws, agent)
    assert r.ok and r.details["status"] == "pending", r.text
    pid = r.details["proposal"]
    assert f"Proposal {pid}" in r.text and f"await_decision id='{pid}'" in r.text
    assert "+    return 10" in r.text  # the diff is shown to the agent
    assert (root / "a.py").read_text() == TEXT
    [f] = r.details["files"]
    assert (f["status"], f["candidate"], f["path"]) == ("preview", pid, "a.py")
    assert [p.id for p in ws.pending_candidates()] == [pid]


def test_accept_writes_exactly_the_shown_after_text(root: Path) -> None:
    (root / "a.py").write_text(TEXT)
    ws = review(root)
    agent = ws.open_session("agent")
    r = agent_edit(ws, agent)
    shown = r.details["files"][0]["after"]
    a = approval.accept_any(ws, r.details["proposal"], "ui")
    assert a.ok, a.text
    assert (root / "a.py").read_text() == shown == TEXT.replace("return 1\n", "return 10\n", 1)
    assert ws.pending_candidates() == []
    # the agent's anchors follow its own accepted change: a next edit needs no re-read
    patch = f"@@ a.py\n= 2:{line_hash('    return 10')}\n~    return 11\n"
    assert ws.call("edit", {"input": patch}, agent, source="ui").ok


def test_accept_refuses_and_writes_nothing_when_the_file_changed_since(root: Path) -> None:
    (root / "a.py").write_text(TEXT)
    ws = review(root)
    r = agent_edit(ws, ws.open_session("agent"))
    (root / "a.py").write_text(TEXT + "# a person's line\n")
    a = approval.accept_any(ws, r.details["proposal"], "ui")
    assert not a.ok and a.details["error"] == approval.STALE
    assert "a.py changed since proposal" in a.text and "Nothing was written" in a.text
    assert (root / "a.py").read_text() == TEXT + "# a person's line\n"
    assert ws.pending_candidates() == []  # decided: refused


def test_magic_and_api_calls_are_never_held(root: Path) -> None:
    ws = review(root)
    for source in ("magic", "ui", "api"):
        r = ws.call("write", {"path": f"{source}.txt", "content": "x\n"}, source=source)
        assert r.ok and "proposal" not in r.details
        assert (root / f"{source}.txt").read_text() == "x\n"


def test_a_held_write_of_a_new_file_creates_it_on_accept_only(root: Path) -> None:
    ws = review(root)
    agent = ws.open_session("agent")
    r = ws.call("write", {"path": "new/b.txt", "content": "hello\n"}, agent, source="agent")
    assert r.details["status"] == "pending"
    assert not (root / "new" / "b.txt").exists()
    assert approval.accept_any(ws, r.details["proposal"], "ui").ok
    assert (root / "new" / "b.txt").read_text() == "hello\n"


def test_a_held_new_file_is_refused_when_someone_created_it_meanwhile(root: Path) -> None:
    ws = review(root)
    r = ws.call("write", {"path": "b.txt", "content": "mine\n"}, ws.open_session("a"),
                source="agent")
    (root / "b.txt").write_text("theirs\n")
    assert not approval.accept_any(ws, r.details["proposal"], "ui").ok
    assert (root / "b.txt").read_text() == "theirs\n"


def test_held_slmcode_delete_and_move_happen_on_accept_only(root: Path) -> None:
    (root / "d.txt").write_text("gone\n")
    (root / "m.txt").write_text("moved\n")
    ws = review(root, {"file": "review"})
    agent = ws.open_session("agent")
    d = ws.call("ws_delete", {"path": "d.txt"}, agent, source="agent")
    m = ws.call("ws_mv", {"src": "m.txt", "dst": "n.txt"}, agent, source="agent")
    assert d.details.get("status") == "pending", d.text
    assert m.details.get("status") == "pending", m.text
    assert (root / "d.txt").exists() and (root / "m.txt").exists() and not (root / "n.txt").exists()
    assert approval.bulk(ws, "accept", "ui", session=agent.id).ok
    assert not (root / "d.txt").exists()
    assert (root / "n.txt").read_text() == "moved\n" and not (root / "m.txt").exists()


def test_a_held_shell_command_is_not_run_until_accepted(root: Path) -> None:
    ws = review(root, {"shell": "review"})
    agent = ws.open_session("agent")
    r = ws.call("bash", {"command": "echo ran > marker.txt"}, agent, source="agent")
    assert r.details["status"] == "pending" and r.details["command"] == "echo ran > marker.txt"
    assert "Nothing was run" in r.text
    time.sleep(0.2)
    assert not (root / "marker.txt").exists()
    a = approval.accept_any(ws, r.details["proposal"], "ui")
    assert a.ok, a.text
    assert (root / "marker.txt").read_text() == "ran\n"


def test_a_held_eval_is_not_run_until_accepted(root: Path) -> None:
    ws = review(root, {"eval": "review"})
    agent = ws.open_session("agent")
    r = ws.call("eval", {"code": "x = 41 + 1"}, agent, source="agent")
    assert r.details["status"] == "pending"
    assert "x" not in ws.namespace
    assert approval.accept_any(ws, r.details["proposal"], "ui").ok
    assert ws.namespace["x"] == 42


def test_a_held_redefine_shows_what_it_redefines_not_only_its_code(root: Path) -> None:
    ws = review(root, {"eval": "review"})
    agent = ws.open_session("agent")
    args = {"definition": "def f(x):\n    return x + 1\n", "target": "mod.f", "reload": "mod",
            "code": "f(1)"}
    r = ws.call("redefine", args, agent, source="agent")
    assert r.details["status"] == "pending", r.text
    assert r.details["command"] == (
        "definition:\ndef f(x):\n    return x + 1\ntarget=mod.f\nreload=mod\ncode=f(1)")
    assert "target=mod.f" in r.text and "reload=mod" in r.text


def test_a_held_call_shows_every_argument_it_was_sent_for_every_shell_and_eval_tool() -> None:
    held = [t for t in REGISTRY.tools.values() if t.action in (approval.SHELL, approval.EVAL)]
    assert {"bash", "eval", "redefine"} <= {t.name for t in held}
    for tool in held:
        props = tool.parameters.get("properties") or {}
        args = {k: f"<{k} sent>" for k, v in props.items() if v.get("type") == "string"}
        shown = approval.command_of(approval.CallPlan(tool.name, args, str(tool.action)))
        assert all(value in shown for value in args.values()), (tool.name, shown)


def test_only_the_kinds_under_review_are_held(root: Path) -> None:
    ws = review(root, {"shell": "review"})
    agent = ws.open_session("agent")
    assert "proposal" not in ws.call("write", {"path": "w.txt", "content": "1\n"}, agent,
                                     source="agent").details
    assert ws.call("bash", {"command": "true"}, agent, source="agent").details["status"] == "pending"


def test_a_reject_note_reaches_await_decision_and_not_twice(root: Path) -> None:
    ws = review(root)
    agent = ws.open_session("agent")
    r = ws.call("write", {"path": "b.txt", "content": "x\n"}, agent, source="agent")
    pid = r.details["proposal"]
    assert approval.reject(ws, pid, "ui", "use snake_case names").ok
    w = ws.call("await_decision", {"id": pid, "timeout": 1}, agent, source="agent")
    assert w.ok and w.details["status"] == "rejected"
    assert w.details["note"] == "use snake_case names" and "use snake_case names" in w.text
    nxt = ws.call("read", {"path": "."}, agent, source="agent")
    assert "[review]" not in nxt.text
    assert not (root / "b.txt").exists()


def test_an_outcome_decided_while_the_agent_awaits_another_is_told_once(root: Path) -> None:
    # Two held calls; the person accepts p2 while the agent waits on p1, then accepts p1.
    ws = review(root)
    agent = ws.open_session("agent")
    p1, p2 = (ws.call("write", {"path": f"{n}.txt", "content": f"{n}\n"}, agent,
                      source="agent").details["proposal"] for n in ("one", "two"))
    waited: dict[str, Any] = {}
    waiting = threading.Thread(target=lambda: waited.update(r=ws.call(
        "await_decision", {"id": p1, "timeout": 20}, agent, source="agent")))
    waiting.start()
    time.sleep(0.2)
    assert approval.accept_any(ws, p2, "ui").ok
    time.sleep(0.2)
    assert approval.accept_any(ws, p1, "ui").ok
    waiting.join(20)
    told = [waited["r"].text]
    told.append(ws.call("await_decision", {"id": p2}, agent, source="agent").text)
    told.append(ws.call("ws_list", {"path": "."}, agent, source="agent").text)
    assert [t.count(f"Proposal {p2} (write) was accepted") for t in told] == [0, 1, 0]
    assert [t.count(f"Proposal {p1} (write) was accepted") for t in told] == [1, 0, 0]


def test_an_outcome_not_awaited_is_told_in_the_next_result_after_the_wait(root: Path) -> None:
    ws = review(root)
    agent = ws.open_session("agent")
    p1, p2 = (ws.call("write", {"path": f"{n}.txt", "content": f"{n}\n"}, agent,
                      source="agent").details["proposal"] for n in ("one", "two"))
    assert approval.reject(ws, p2, "ui", "not two").ok
    assert approval.accept_any(ws, p1, "ui").ok
    w = ws.call("await_decision", {"id": p1}, agent, source="agent")
    assert "[review]" not in w.text and w.details["status"] == "written"
    nxt = ws.call("ws_list", {"path": "."}, agent, source="agent")
    assert nxt.text.count(f"[review] Proposal {p2} (write) was rejected") == 1
    assert nxt.details["decisions"] == [p2]


def test_a_decision_reaches_the_agent_in_its_next_result(root: Path) -> None:
    ws = review(root)
    agent = ws.open_session("agent")
    pid = ws.call("write", {"path": "b.txt", "content": "x\n"}, agent,
                  source="agent").details["proposal"]
    approval.reject(ws, pid, "ui", "not this file")
    nxt = ws.call("ws_list", {"path": "."}, agent, source="agent")
    assert f"[review] Proposal {pid} (write) was rejected by a person. Their note: not this file" \
        in nxt.text
    assert nxt.details["decisions"] == [pid]
    assert "[review]" not in ws.call("ws_list", {"path": "."}, agent, source="agent").text


@pytest.mark.serial  # asserts a wall-clock time
def test_await_decision_blocks_until_a_person_decides(root: Path) -> None:
    ws = review(root)
    agent = ws.open_session("agent")
    pid = ws.call("write", {"path": "b.txt", "content": "x\n"}, agent,
                  source="agent").details["proposal"]
    timer = threading.Timer(0.3, lambda: approval.accept_any(ws, pid, "ui"))
    timer.start()
    started = time.monotonic()
    w = ws.call("await_decision", {"id": pid, "timeout": 10}, agent, source="agent")
    assert 0.2 < time.monotonic() - started < 5
    assert w.details["status"] == "written" and "accepted by a person" in w.text
    assert (root / "b.txt").read_text() == "x\n"


def test_await_decision_times_out_as_pending_and_an_unknown_id_is_named(root: Path) -> None:
    ws = review(root)
    agent = ws.open_session("agent")
    pid = ws.call("write", {"path": "b.txt", "content": "x\n"}, agent,
                  source="agent").details["proposal"]
    w = ws.call("await_decision", {"id": pid, "timeout": 0.1}, agent, source="agent")
    assert w.ok and w.details["status"] == "pending" and "still pending" in w.text
    u = ws.call("await_decision", {"id": "p999999"}, agent, source="agent")
    assert not u.ok and u.details["error"] == "unknown_candidate"


def test_await_decision_does_not_hold_the_session_lock(root: Path) -> None:
    ws = review(root, {"shell": "review"})
    agent = ws.open_session("agent")
    pid = ws.call("bash", {"command": "echo hi"}, agent, source="agent").details["proposal"]
    out: dict[str, Any] = {}
    t = threading.Thread(target=lambda: out.update(
        w=ws.call("await_decision", {"id": pid, "timeout": 10}, agent, source="agent")))
    t.start()
    time.sleep(0.2)
    a = approval.accept_any(ws, pid, "ui")  # runs bash in the same session: no deadlock
    t.join(10)
    assert a.ok and "hi" in a.text
    assert out["w"].details["status"] == "written"


def test_bulk_accepts_all_of_one_session_and_leaves_the_others(root: Path) -> None:
    ws = review(root)
    one, two = ws.open_session("one"), ws.open_session("two")
    for n in range(3):
        ws.call("write", {"path": f"f{n}.txt", "content": f"{n}\n"}, one, source="agent")
    other = ws.call("write", {"path": "g.txt", "content": "g\n"}, two, source="agent")
    r = approval.bulk(ws, "accept", "ui", session=one.id)
    assert r.ok and r.text.startswith("Accepted 3 of 3")
    assert [(root / f"f{n}.txt").read_text() for n in range(3)] == ["0\n", "1\n", "2\n"]
    assert [p.id for p in ws.pending_candidates()] == [other.details["proposal"]]


def test_bulk_by_file_and_bulk_reject_of_all(root: Path) -> None:
    (root / "a.py").write_text(TEXT)
    ws = review(root)
    one, two = ws.open_session("one"), ws.open_session("two")
    agent_edit(ws, one)
    ws.call("write", {"path": "b.txt", "content": "b\n"}, two, source="agent")
    assert [p.path for p in approval.matching(ws, path="a.py")] == ["a.py"]
    r = approval.bulk(ws, "reject", "ui", note="not now")
    assert r.ok and r.text.startswith("Rejected 2 of 2")
    assert (root / "a.py").read_text() == TEXT and not (root / "b.txt").exists()


def test_a_closed_session_leaves_its_proposals_expired_and_one_can_still_be_applied(
    root: Path,
) -> None:
    ws = review(root)
    agent = ws.open_session("bot")
    pid = ws.call("write", {"path": "b.txt", "content": "x\n"}, agent,
                  source="agent").details["proposal"]
    ws.close_session(agent.id)
    [p] = ws.pending_candidates()
    assert p.id == pid and p.expired == "expired — bot disconnected"
    assert approval.accept_any(ws, pid, "ui").ok
    assert (root / "b.txt").read_text() == "x\n"


def test_an_expired_command_runs_on_accept_and_is_filed_as_its_agents_not_default(
    root: Path,
) -> None:
    ws = review(root, {"shell": "review"})
    agent = ws.open_session("bot")
    pid = ws.call("bash", {"command": "echo x > e.txt"}, agent, source="agent").details["proposal"]
    ws.close_session(agent.id)
    r = approval.accept_any(ws, pid, "ui")
    assert r.ok and (root / "e.txt").read_text() == "x\n"
    [change] = undo.timeline(str(root))
    assert (change.id, change.session, change.session_label) == (r.details["change"], agent.id, "bot")
    assert agent.id not in ws.sessions  # no session comes back to life


def test_a_held_undo_accepted_after_its_agent_left_is_filed_under_that_agent(root: Path) -> None:
    # A chat's @kli undo: its connection's session closes as soon as the undo is held.
    ws = Workspace(str(root))
    turn = ws.open_session("chat a.chat turn 1")
    made = ws.call("write", {"path": "t.txt", "content": "turn\n"}, turn, source="agent")
    ws.close_session(turn.id)
    (root / ".kli" / "settings.json").write_text(json.dumps({"approval": "review"}))
    undoer = ws.open_session("kli in chat a.chat (undoing turn 1)")
    held = ws.call("undo", {"session": turn.id, "since": "0"}, undoer, source="agent")
    assert held.details["status"] == "pending", held.text
    ws.close_session(undoer.id)
    r = approval.accept_any(ws, held.details["proposal"], "ui")
    assert r.ok and not (root / "t.txt").exists(), r.text
    by_id = {c.id: c for c in undo.timeline(str(root))}
    done = by_id[r.details["change"]]
    assert (done.session, done.session_label) == (undoer.id, "kli in chat a.chat (undoing turn 1)")
    assert done.undone == [made.details["change"]]


@pytest.mark.parametrize("value", ["sometimes", {"file": "maybe"}, {"disk": "review"}, 3])
def test_a_bad_approval_setting_fails_closed_naming_the_setting(root: Path, value: Any) -> None:
    ws = review(root, value)
    r = ws.call("write", {"path": "b.txt", "content": "x\n"}, ws.open_session("a"), source="agent")
    assert not r.ok and r.details["error"] == "bad_settings" and "'approval'" in r.text
    assert not (root / "b.txt").exists()


def test_approval_switches_live_per_kind_and_for_all(root: Path) -> None:
    ws = Workspace(str(root))
    events: list[dict[str, Any]] = []
    ws.add_listener(events.append)
    agent = ws.open_session("agent")
    assert approval.set_mode(ws, "review", "file") == {"file": "review", "shell": "auto",
                                                       "eval": "auto"}
    assert events[-1] == {"kind": "approval", "modes": {"file": "review", "shell": "auto",
                                                        "eval": "auto"},
                          "origin": "kernel", "kept": None,
                          "said": "this kernel only: a restart forgets it"}
    r = ws.call("write", {"path": "b.txt", "content": "x\n"}, agent, source="agent")
    assert r.details["status"] == "pending"
    approval.set_mode(ws, "auto")
    assert approval.modes(ws.settings)[0] == {"file": "auto", "shell": "auto", "eval": "auto"}
    assert "proposal" not in ws.call("write", {"path": "c.txt", "content": "y\n"}, agent,
                                     source="agent").details
    with pytest.raises(ValueError):
        approval.set_mode(ws, "later")


def test_a_kept_choice_is_written_to_the_settings_file_and_a_new_workspace_starts_from_it(
        root: Path) -> None:
    ws = Workspace(str(root))
    assert approval.origin(ws) == approval.Origin(approval.DEFAULT)
    approval.set_mode(ws, "review", "file")
    assert approval.origin(ws).where == approval.KERNEL_ONLY  # lost at a restart, and says so
    assert Workspace(str(root)).settings.get("approval") is None
    approval.set_mode(ws, None, keep=True)
    kept = root / ".kli" / "settings.json"
    assert json.loads(kept.read_text()) == {"approval": {"file": "review", "shell": "auto",
                                                         "eval": "auto"}}
    assert approval.origin(ws) == approval.Origin(approval.KEPT, str(kept))
    assert approval.origin(ws).words(str(root)) == "kept in .kli/settings.json"
    again = Workspace(str(root))  # a restarted kernel: its calls are held
    r = again.call("write", {"path": "b.txt", "content": "x\n"}, again.open_session("a"),
                   source="agent")
    assert r.details["status"] == "pending" and not (root / "b.txt").exists()


def test_a_switch_changes_the_kept_choice_where_it_is_kept_and_no_keep_takes_it_out(
        root: Path) -> None:
    (root / ".kli").mkdir()
    kept = root / ".kli" / "settings.json"
    kept.write_text(json.dumps({"capabilities": ["file/read", "file/write"],
                                "approval": "review"}))
    ws = Workspace(str(root))
    approval.set_mode(ws, "auto", "shell")  # kept: the file changes, its other settings stay
    assert json.loads(kept.read_text()) == {
        "capabilities": ["file/read", "file/write"],
        "approval": {"file": "review", "shell": "auto", "eval": "review"}}
    assert approval.origin(ws).where == approval.KEPT
    approval.set_mode(ws, None, keep=False)  # this kernel only: the file no longer says it
    assert json.loads(kept.read_text()) == {"capabilities": ["file/read", "file/write"]}
    assert approval.origin(ws).where == approval.KERNEL_ONLY
    assert approval.modes(ws.settings)[0] == {"file": "review", "shell": "auto", "eval": "review"}
    assert approval.modes(Workspace(str(root)).settings)[0]["file"] == "auto"


def test_a_choice_is_kept_at_the_top_of_the_git_work_tree_when_no_settings_file_exists(
        root: Path) -> None:
    (root / ".git").mkdir()
    (root / "notebooks").mkdir()
    ws = Workspace(str(root / "notebooks"))
    approval.set_mode(ws, "review", keep=True)
    assert (root / ".kli" / "settings.json").is_file()
    assert not (root / "notebooks" / ".kli").exists()
    # Outside the kernel's root: named in full.
    assert approval.origin(ws).words(str(root / "notebooks")) == \
        f"kept in {root / '.kli' / 'settings.json'}"
    other = Workspace(str(root))  # another notebook of the repository starts from it
    assert approval.modes(other.settings)[0] == {"file": "review", "shell": "review",
                                                 "eval": "review"}


def test_a_choice_that_cannot_be_kept_is_switched_in_this_kernel_and_says_why(root: Path) -> None:
    (root / ".kli").mkdir()
    broken = root / ".kli" / "settings.json"
    broken.write_text("{not json")
    ws = Workspace(str(root))
    with pytest.raises(approval.KeepError, match=r"this kernel only, not kept: .*not valid JSON"):
        approval.set_mode(ws, "review", "file", keep=True)
    assert broken.read_text() == "{not json"
    assert ws.host_setting("approval") == (True, {"file": "review", "shell": "auto",
                                                  "eval": "auto"})


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "notebook"


@pytest.mark.parametrize("case", ["001_replace_line_in_code_cell",
                                  "003_two_cells_one_patch_whole"])
def test_a_held_notebook_cell_edit_writes_exactly_the_notebook_an_unheld_edit_writes(
    root: Path, case: str
) -> None:
    folder = FIXTURES / case
    (root / "nb.ipynb").write_bytes((folder / "input.ipynb").read_bytes())
    ws = review(root)
    agent = ws.open_session("agent")
    assert ws.call("read", {"path": "nb.ipynb"}, agent, source="agent").ok
    r = ws.call("edit", {"input": (folder / "patch.txt").read_text()}, agent, source="agent")
    assert r.details.get("status") == "pending", r.text
    assert (root / "nb.ipynb").read_bytes() == (folder / "input.ipynb").read_bytes()
    assert approval.accept_any(ws, r.details["proposal"], "ui").ok
    assert (root / "nb.ipynb").read_text() == (folder / "expected.ipynb").read_text()


def test_a_held_cell_edit_is_refused_when_the_notebook_changed_since(root: Path) -> None:
    folder = FIXTURES / "001_replace_line_in_code_cell"
    (root / "nb.ipynb").write_bytes((folder / "input.ipynb").read_bytes())
    ws = review(root)
    agent = ws.open_session("agent")
    assert ws.call("read", {"path": "nb.ipynb"}, agent, source="agent").ok
    r = ws.call("edit", {"input": (folder / "patch.txt").read_text()}, agent, source="agent")
    changed = (root / "nb.ipynb").read_text().replace('"metadata": {', '"metadata": {"x": 1, ', 1)
    (root / "nb.ipynb").write_text(changed)
    a = approval.accept_any(ws, r.details["proposal"], "ui")
    assert not a.ok and "nb.ipynb changed since proposal" in a.text
    assert (root / "nb.ipynb").read_text() == changed


def test_under_review_an_agents_accept_repair_leaves_the_preview_to_the_person(root: Path) -> None:
    lisp = "(defun f (x)\n  (let ((y 1))\n    (+ x y)))\n\n(defun g () 1)\n"
    (root / "a.lisp").write_text(lisp)
    ws = review(root)
    agent = ws.open_session("agent")
    assert ws.call("read", {"path": "a.lisp"}, agent, source="agent").ok
    patch = f"@@ a.lisp\n= 5:{line_hash('(defun g () 1)')}\n~(defun g () (h 1)\n~(defun h (x) x)\n"
    r = ws.call("edit", {"input": patch}, agent, source="agent")
    cid = r.details["candidate"]  # a repair preview: nothing to hold, already in the queue
    a = ws.call("edit", {"accept_repair": cid, "path": "a.lisp"}, agent, source="agent")
    assert a.details["status"] == "pending" and f"await_decision id='{cid}'" in a.text
    assert (root / "a.lisp").read_text() == lisp
    assert [p.id for p in ws.pending_candidates()] == [cid]
    assert approval.accept_any(ws, cid, "ui").ok
    assert (root / "a.lisp").read_text() != lisp


def test_a_held_call_records_no_change_until_it_is_accepted(
    root: Path,
) -> None:
    (root / "a.py").write_text(TEXT)
    ws = review(root)
    agent = ws.open_session("agent")
    r = agent_edit(ws, agent)
    assert "change" not in r.details
    assert "a.py" not in ws.call("changes", {}, source="ui").text
    a = approval.accept_any(ws, r.details["proposal"], "ui")
    assert a.ok and a.details.get("change"), a.details
    assert "a.py" in ws.call("changes", {}, source="ui").text
    assert ws.call("undo", {"change": a.details["change"]}, source="ui").ok
    assert (root / "a.py").read_text() == TEXT


def test_an_agents_undo_and_redo_are_held_and_accept_takes_the_change_back_and_forth(
    root: Path,
) -> None:
    ws = review(root)
    w = ws.call("write", {"path": "u.txt", "content": "new\n"}, source="ui")  # a person's
    change = w.details["change"]
    agent = ws.open_session("agent")
    u = ws.call("undo", {"change": change}, agent, source="agent")
    assert u.details.get("status") == "pending", u.text
    assert "Not written" in u.text and (root / "u.txt").read_text() == "new\n"
    [shown] = u.details["files"]
    assert (shown["path"], shown["before"], shown["after"]) == ("u.txt", "new\n", None)
    a = approval.accept_any(ws, u.details["proposal"], "ui")
    assert a.ok, a.text
    assert not (root / "u.txt").exists()
    undone = next(c for c in undo.timeline(str(root)) if c.id == a.details["change"])
    assert undone.undoes == change and undone.tool == "undo"
    r = ws.call("redo", {"change": change}, agent, source="agent")
    assert r.details.get("status") == "pending", r.text
    assert not (root / "u.txt").exists()
    assert approval.accept_any(ws, r.details["proposal"], "ui").ok
    assert (root / "u.txt").read_text() == "new\n"


def test_a_held_undo_since_accepted_marks_every_change_it_took_back_in_the_timeline(
    root: Path,
) -> None:
    ws = review(root)
    person = ws.open_session("person")
    ids = [ws.call("write", {"path": f"{n}.txt", "content": f"{n}\n"}, person, source="ui")
           .details["change"] for n in ("x", "y")]
    u = ws.call("undo", {"session": "person", "since": "0"}, ws.open_session("agent"),
                source="agent")
    assert u.details.get("status") == "pending", u.text
    a = approval.accept_any(ws, u.details["proposal"], "ui")
    assert a.ok, a.text
    taken = undo.undone_by(undo.timeline(str(root)))
    assert taken[ids[0]] == taken[ids[1]] == a.details["change"]


def test_a_held_undo_is_refused_on_accept_when_the_file_changed_since_it_was_proposed(
    root: Path,
) -> None:
    (root / "u.txt").write_text("old\n")
    ws = review(root)
    w = ws.call("write", {"path": "u.txt", "content": "new\n"}, source="ui")
    u = ws.call("undo", {"change": w.details["change"]}, ws.open_session("agent"), source="agent")
    assert u.details.get("status") == "pending", u.text
    (root / "u.txt").write_text("a person's\n")
    a = approval.accept_any(ws, u.details["proposal"], "ui")
    assert not a.ok and a.details["error"] == approval.STALE and "u.txt changed" in a.text
    assert (root / "u.txt").read_text() == "a person's\n"


def test_an_undo_refused_before_anything_is_proposed_says_so_and_holds_nothing(
    root: Path,
) -> None:
    ws = review(root)
    w = ws.call("write", {"path": "u.txt", "content": "new\n"}, source="ui")
    (root / "u.txt").write_text("edited\n")
    u = ws.call("undo", {"change": w.details["change"]}, ws.open_session("agent"), source="agent")
    assert not u.ok and u.details["error"] == "changed" and "u.txt" in u.text
    assert ws.pending_candidates() == []


def test_a_held_checkpoint_restore_changes_nothing_until_accept_writes_the_exact_bytes(
    root: Path,
) -> None:
    (root / "c.txt").write_bytes(b"first\r\n")
    ws = review(root)
    assert ws.call("ws_read", {"path": "c.txt"}, source="ui").ok
    assert ws.call("ws_write", {"path": "c.txt", "content": "second\n"}, source="ui").ok
    listed = ws.call("ws_checkpoints", {"action": "list"}, ws.open_session("agent"),
                     source="agent")
    assert listed.ok and "proposal" not in listed.details  # a list writes nothing: not held
    [cp] = [c for c in listed.details["checkpoints"]
            if c["path"] == "c.txt" and c["reason"] != "change"]
    store = sorted(p.name for p in (root / ".kli" / "checkpoints").iterdir())
    agent = ws.open_session("agent2")
    r = ws.call("ws_checkpoints", {"action": "restore", "id": cp["id"]}, agent, source="agent")
    assert r.details.get("status") == "pending", r.text
    assert (root / "c.txt").read_bytes() == b"second\n"
    assert sorted(p.name for p in (root / ".kli" / "checkpoints").iterdir()) == store
    a = approval.accept_any(ws, r.details["proposal"], "ui")
    assert a.ok, a.text
    assert (root / "c.txt").read_bytes() == b"first\r\n"
    assert a.details.get("change")  # recorded: undo takes the restore back
    assert ws.call("undo", {"change": a.details["change"]}, source="ui").ok
    assert (root / "c.txt").read_bytes() == b"second\n"


def test_a_held_checkpoint_restore_is_refused_when_the_file_changed_since(root: Path) -> None:
    (root / "c.txt").write_text("first\n")
    ws = review(root)
    assert ws.call("ws_read", {"path": "c.txt"}, source="ui").ok
    assert ws.call("ws_write", {"path": "c.txt", "content": "second\n"}, source="ui").ok
    [cp] = [c for c in ws.call("ws_checkpoints", {}, source="ui").details["checkpoints"]
            if c["path"] == "c.txt" and c["reason"] != "change"]
    r = ws.call("ws_checkpoints", {"action": "restore", "id": cp["id"]},
                ws.open_session("agent"), source="agent")
    assert r.details.get("status") == "pending", r.text
    (root / "c.txt").write_text("third\n")
    a = approval.accept_any(ws, r.details["proposal"], "ui")
    assert not a.ok and a.details["error"] == approval.STALE and "c.txt" in a.text
    assert (root / "c.txt").read_text() == "third\n"
