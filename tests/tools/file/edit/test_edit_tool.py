"""The ``edit`` tool through ``Workspace.call``: read-before-edit state, fresh anchors, whole-or-
nothing writes (including real I/O faults), the result shape, and repair candidates."""

from __future__ import annotations

import os
import re
import resource
import signal
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.core import atomic
from kli.tools.core.approval import reject
from kli.tools.file import candidates as candidates_module
from kli.tools.file import edit as edit_module
from kli.tools.file.anchors import MAX_LINE_CHARS, line_hash, view_hashes
from kli.tools.file.candidates import accept_call

LISP = "(defun f (x)\n  (let ((y 1))\n    (+ x y)))\n\n(defun g () 1)\n"


def a(n: int, text: str) -> str:
    return f"{n}:{line_hash(text)}"


def rows(text: str) -> dict[int, tuple[str, str]]:
    """``LINE:HH|content`` rows of a result: {line: (hh, content)}."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(\d+):([0-9a-f]{2})\|(.*)$", line)
        if m:
            out[int(m.group(1))] = (m.group(2), m.group(3))
    return out


def write(root: Path, name: str, text: str) -> Path:
    p = root / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(text.encode())
    return p


def read(ws: Workspace, path: str) -> None:
    r = ws.call("read", {"path": path})
    assert r.ok, r.text


# -- read-before-edit and staleness ------------------------------------------------------------
def test_unread_file_rejects_the_patch_with_a_prompt_to_read(ws: Workspace, root: Path) -> None:
    p = write(root, "a.txt", "one\n")
    r = ws.call("edit", {"input": f"@@ a.txt\n= {a(1, 'one')}\n~ONE\n"})
    assert not r.ok
    assert "a.txt has not been read in this session. Read it first" in r.text
    assert r.details["files"][0]["status"] == "rejected"
    assert p.read_text() == "one\n"


def test_a_read_in_another_session_does_not_count(ws: Workspace, root: Path) -> None:
    write(root, "a.txt", "one\n")
    read(ws, "a.txt")
    other = ws.open_session("agent 2")
    r = ws.call("edit", {"input": f"@@ a.txt\n= {a(1, 'one')}\n~ONE\n"}, session=other)
    assert not r.ok and "has not been read in this session" in r.text


def test_search_records_anchors_so_edit_needs_no_read(ws: Workspace, root: Path) -> None:
    p = write(root, "src/m.py", "x = 1\ny = 2\n")
    s = ws.call("search", {"pattern": "y =", "path": "src/*.py"})
    assert s.ok, s.text
    r = ws.call("edit", {"input": f"@@ src/m.py\n= {a(2, 'y = 2')}\n~y = 3\n"})
    assert r.ok, r.text
    assert p.read_text() == "x = 1\ny = 3\n"


def test_change_on_disk_after_read_makes_anchor_stale(ws: Workspace, root: Path) -> None:
    p = write(root, "a.txt", "one\ntwo\nthree\n")
    read(ws, "a.txt")
    p.write_text("one\nTWO!\nthree\n")
    r = ws.call("edit", {"input": f"@@ a.txt\n= {a(2, 'two')}\n~2\n"})
    assert not r.ok
    assert f"stale anchor {a(2, 'two')} in a.txt" in r.text
    assert "Re-read line 2 of a.txt" in r.text
    assert r.details["error"] == "stale" and r.details["line"] == 2
    assert p.read_text() == "one\nTWO!\nthree\n"


def test_line_seen_only_cut_may_not_be_replaced(ws: Workspace, root: Path) -> None:
    wide = "x" * (MAX_LINE_CHARS + 50)
    p = write(root, "w.txt", f"short\n{wide}\nend\n")
    read(ws, "w.txt")
    r = ws.call("edit", {"input": f"@@ w.txt\n= {a(2, wide)}\n~narrow\n"})
    assert not r.ok
    assert "line 2, which you have only seen cut" in r.text
    r = ws.call("edit", {"input": f"@@ w.txt\n- {a(1, 'short')}..{a(3, 'end')}\n"})
    assert not r.ok and "only seen cut" in r.text
    # Inserting next to it is fine: nothing unseen is overwritten.
    r = ws.call("edit", {"input": f"@@ w.txt\n+ {a(2, wide)}\n~after\n"})
    assert r.ok, r.text
    assert p.read_text() == f"short\n{wide}\nafter\nend\n"


def test_cut_line_stays_protected_after_an_edit_moves_it(ws: Workspace, root: Path) -> None:
    wide = "y" * (MAX_LINE_CHARS + 1)
    write(root, "w.txt", f"a\n{wide}\n")
    read(ws, "w.txt")
    assert ws.call("edit", {"input": f"@@ w.txt\n< {a(1, 'a')}\n~new\n"}).ok
    r = ws.call("edit", {"input": f"@@ w.txt\n- {a(3, wide)}\n"})
    assert not r.ok and "only seen cut" in r.text


def test_a_wide_payload_line_the_model_wrote_can_be_replaced_again(
    ws: Workspace, root: Path
) -> None:
    wide = "z" * (MAX_LINE_CHARS + 10)
    write(root, "w.txt", "a\n")
    read(ws, "w.txt")
    r = ws.call("edit", {"input": f"@@ w.txt\n+ {a(1, 'a')}\n~{wide}\n"})
    assert r.ok, r.text
    r = ws.call("edit", {"input": f"@@ w.txt\n- {a(2, wide)}\n"})
    assert r.ok, r.text


# -- success text and fresh anchors ------------------------------------------------------------
def test_success_reports_counts_and_fresh_anchors(ws: Workspace, root: Path) -> None:
    write(root, "a.txt", "".join(f"l{i}\n" for i in range(1, 21)))
    read(ws, "a.txt")
    r = ws.call(
        "edit",
        {"input": f"@@ a.txt\n= {a(10, 'l10')}..{a(11, 'l11')}\n~X\n+ {a(18, 'l18')}\n~Y\n~Z\n"},
    )
    assert r.ok, r.text
    lines = r.text.splitlines()
    assert lines[0] == "Edited a.txt (+3 -2)"
    shown = rows(r.text)
    assert shown[10] == (line_hash("X"), "X")
    assert shown[18] == (line_hash("Y"), "Y") and shown[19] == (line_hash("Z"), "Z")
    assert 8 in shown and 12 in shown  # context
    assert 1 not in shown and 14 not in shown  # only changed regions
    assert "…" in lines  # two separate regions


def test_fresh_anchors_are_valid_for_a_follow_up_edit_without_read(
    ws: Workspace, root: Path
) -> None:
    p = write(root, "a.py", "def f():\n    return 1\n")
    read(ws, "a.py")
    r1 = ws.call(
        "edit", {"input": f"@@ a.py\n+ {a(2, '    return 1')}\n~\n~def g():\n~    return 2\n"}
    )
    assert r1.ok, r1.text
    hh, content = rows(r1.text)[5]
    assert content == "    return 2"
    r2 = ws.call("edit", {"input": f"@@ a.py\n= 5:{hh}\n~    return 3\n"})
    assert r2.ok, r2.text
    assert p.read_text() == "def f():\n    return 1\n\ndef g():\n    return 3\n"


def test_kept_lines_keep_their_view_renumbered(ws: Workspace, root: Path) -> None:
    write(root, "a.txt", "a\nb\nc\n")
    read(ws, "a.txt")
    assert ws.call("edit", {"input": "@@ a.txt\n<\n~0\n~00\n"}).ok
    view = ws.default_session.views[os.path.realpath(root / "a.txt")]
    assert view_hashes(view)[5] == line_hash("c")


def test_multi_file_success_reports_each_file(ws: Workspace, root: Path) -> None:
    write(root, "a.txt", "a\n")
    write(root, "b.txt", "b\n")
    read(ws, "a.txt")
    read(ws, "b.txt")
    r = ws.call("edit", {"input": f"@@ a.txt\n= {a(1, 'a')}\n~A\n@@ b.txt\n- {a(1, 'b')}\n"})
    assert r.ok, r.text
    assert "Edited a.txt (+1 -1)" in r.text and "Edited b.txt (+0 -1)" in r.text
    files = r.details["files"]
    assert [(f["path"], f["status"], f["added"], f["removed"]) for f in files] == [
        ("a.txt", "written", 1, 1),
        ("b.txt", "written", 0, 1),
    ]
    assert files[0]["before"] == "a\n" and files[0]["after"] == "A\n"


def test_crlf_file_stays_crlf_and_anchors_hash_the_cr(ws: Workspace, root: Path) -> None:
    p = write(root, "w.txt", "a\r\nb\r\n")
    read(ws, "w.txt")
    r = ws.call("edit", {"input": f"@@ w.txt\n+ {a(1, 'a' + chr(13))}\n~mid\n"})
    assert r.ok, r.text
    assert p.read_bytes() == b"a\r\nmid\r\nb\r\n"
    assert rows(r.text)[2][0] == line_hash("mid\r")


# -- whole-or-nothing --------------------------------------------------------------------------
def _two_files(ws: Workspace, root: Path) -> tuple[Path, Path, str]:
    p1 = write(root, "a.txt", "a\n")
    p2 = write(root, "b.txt", "b\n")
    read(ws, "a.txt")
    read(ws, "b.txt")
    big = "~" + "x" * 4096 + "\n"
    patch = f"@@ a.txt\n= {a(1, 'a')}\n~A\n@@ b.txt\n+ {a(1, 'b')}\n" + big * 4
    return p1, p2, patch


def test_io_failure_on_a_later_file_writes_nothing_real_fault(ws: Workspace, root: Path) -> None:
    """A real fault, root or not: RLIMIT_FSIZE makes writing b.txt's larger content fail (EFBIG)
    while a.txt's small content fits."""
    p1, p2, patch = _two_files(ws, root)
    old_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, old_limit[1]))
    try:
        r = ws.call("edit", {"input": patch})
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old_limit)
        signal.signal(signal.SIGXFSZ, old_handler)
    assert not r.ok
    assert "edit failed while writing" in r.text and "Nothing was written" in r.text
    assert p1.read_text() == "a\n" and p2.read_text() == "b\n"
    assert [f["status"] for f in r.details["files"]] == ["rejected", "rejected"]
    assert not [n for n in os.listdir(root) if n.endswith(".kli-tmp")]


def test_replace_failure_on_second_file_restores_the_first(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p1, p2, patch = _two_files(ws, root)
    real_replace = os.replace
    calls = []

    def flaky(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(5, "Input/output error", dst)
        real_replace(src, dst)

    monkeypatch.setattr(atomic, "_renameat2", None)  # the os.replace path (no renameat2)
    monkeypatch.setattr(os, "replace", flaky)
    r = ws.call("edit", {"input": patch})
    monkeypatch.undo()
    assert not r.ok and "Nothing was written" in r.text
    assert calls[0].endswith("a.txt")  # a.txt had been replaced, then was restored
    assert p1.read_text() == "a\n" and p2.read_text() == "b\n"


def test_directory_in_place_of_a_later_file_writes_nothing(ws: Workspace, root: Path) -> None:
    p1 = write(root, "a.txt", "a\n")
    write(root, "b.txt", "b\n")
    read(ws, "a.txt")
    read(ws, "b.txt")
    os.unlink(root / "b.txt")
    (root / "b.txt").mkdir()
    r = ws.call("edit", {"input": f"@@ a.txt\n= {a(1, 'a')}\n~A\n@@ b.txt\n= {a(1, 'b')}\n~B\n"})
    assert not r.ok and "b.txt is a directory" in r.text
    assert p1.read_text() == "a\n"


# -- repair candidates -------------------------------------------------------------------------
def _preview(ws: Workspace, root: Path, session=None) -> tuple[Path, str]:
    p = write(root, "a.lisp", LISP)
    assert ws.call("read", {"path": "a.lisp"}, session=session).ok
    patch = f"@@ a.lisp\n= {a(5, '(defun g () 1)')}\n~(defun g () (h 1)\n~(defun h (x) x)\n"
    r = ws.call("edit", {"input": patch}, session=session)
    assert not r.ok and r.details["reason"] == "form_count_changed"
    cid = r.details["candidate"]
    assert accept_call(cid, "a.lisp") in r.text
    assert p.read_text() == LISP
    return p, cid


CANDIDATE = LISP.replace("(defun g () 1)", "(defun g () (h 1))\n(defun h (x) x)")


def test_preview_details_carry_candidate_marks_and_reason(ws: Workspace, root: Path) -> None:
    _p, cid = _preview(ws, root)
    r_files = ws.default_session.candidates[cid].change
    assert r_files["status"] == "preview" and r_files["candidate"] == cid
    assert r_files["after"] == CANDIDATE and r_files["before"] == LISP
    (mark,) = r_files["marks"]
    assert CANDIDATE[mark["from"] : mark["to"]] == ")" and mark["line"] == 5
    assert ws.find_candidate(cid) is ws.default_session.candidates[cid]


def test_accept_repair_writes_the_candidate_once(ws: Workspace, root: Path) -> None:
    p, cid = _preview(ws, root)
    r = ws.call("edit", {"accept_repair": cid, "path": "a.lisp"})
    assert r.ok, r.text
    assert r.text.startswith("Edited a.lisp (+2 -1)\nAccepted repair candidate")
    assert p.read_text() == CANDIDATE
    assert r.details["resolved"] == {
        "candidate": cid, "status": "written", "reason": "accepted", "by": "api"
    }
    assert r.details["files"][0]["status"] == "written"
    again = ws.call("edit", {"accept_repair": cid, "path": "a.lisp"})
    assert not again.ok and "no pending repair candidate" in again.text
    # The accepted result's anchors are fresh.
    hh, content = rows(r.text)[6]
    assert content == "(defun h (x) x)"
    assert ws.call("edit", {"input": f"@@ a.lisp\n= 6:{hh}\n~(defun h (x) (* 2 x))\n"}).ok


def test_accept_is_refused_when_the_file_changed_since_the_preview(
    ws: Workspace, root: Path
) -> None:
    p, cid = _preview(ws, root)
    p.write_text(LISP + "(defun k () 3)\n")
    r = ws.call("edit", {"accept_repair": cid, "path": "a.lisp"})
    assert not r.ok
    assert f"a.lisp changed since preview {cid} was made" in r.text
    assert "Re-read a.lisp and redo the edit" in r.text
    assert r.details["resolved"] == {
        "candidate": cid, "status": "refused", "reason": "stale_candidate", "by": "api"
    }
    assert p.read_text() == LISP + "(defun k () 3)\n"
    assert ws.find_candidate(cid) is None


def test_accept_rechecks_that_the_candidate_still_balances(ws: Workspace, root: Path) -> None:
    p, cid = _preview(ws, root)
    cand = ws.find_candidate(cid)
    assert cand is not None
    cand.after = cand.after + "(oops\n"
    r = ws.call("edit", {"accept_repair": cid, "path": "a.lisp"})
    assert not r.ok and "no longer parses" in r.text
    assert p.read_text() == LISP


def test_host_can_accept_for_the_owning_session_but_path_must_match(
    ws: Workspace, root: Path
) -> None:
    agent = ws.open_session("agent")
    p, cid = _preview(ws, root, session=agent)
    host = ws.open_session("ui")
    write(root, "other.lisp", "(x)\n")
    wrong = ws.call("edit", {"accept_repair": cid, "path": "other.lisp"}, session=host)
    assert not wrong.ok and f"candidate {cid} is for a.lisp" in wrong.text
    r = ws.call("edit", {"accept_repair": cid, "path": "a.lisp"}, session=host)
    assert r.ok, r.text
    assert p.read_text() == CANDIDATE
    assert cid not in agent.candidates
    # The owner's view is refreshed too: it can edit the new lines at once.
    hh = line_hash("(defun h (x) x)")
    assert ws.call("edit", {"input": f"@@ a.lisp\n- 6:{hh}\n"}, session=agent).ok


def test_reject_candidate_discards_it(ws: Workspace, root: Path) -> None:
    p, cid = _preview(ws, root)
    assert reject(ws, cid, "api").ok is True
    again = reject(ws, cid, "api")
    assert again.ok is False and again.details["error"] == "unknown_candidate"
    r = ws.call("edit", {"accept_repair": cid, "path": "a.lisp"})
    assert not r.ok
    assert p.read_text() == LISP


def test_candidate_ids_are_unique_across_sessions_and_workspaces(tmp_path: Path) -> None:
    seen = set()
    for i in range(2):
        root = tmp_path / f"r{i}"
        root.mkdir()
        ws = Workspace(str(root))
        for session in (ws.default_session, ws.open_session()):
            (root / "a.lisp").write_text(LISP)
            _p, cid = _preview(ws, root, session=session)
            seen.add(cid)
    assert len(seen) == 4


def test_accept_needs_path_and_excludes_input(ws: Workspace, root: Path) -> None:
    _p, cid = _preview(ws, root)
    r = ws.call("edit", {"accept_repair": cid})
    assert not r.ok and "accept_repair needs path" in r.text
    r = ws.call("edit", {"accept_repair": cid, "path": "a.lisp", "input": "@@ a.lisp\n+\n~x\n"})
    assert not r.ok and "either input" in r.text
    r = ws.call("edit", {})
    assert not r.ok and "edit needs input" in r.text


def test_requested_preview_is_ok_and_forced_preview_is_not(ws: Workspace, root: Path) -> None:
    write(root, "a.lisp", LISP)
    read(ws, "a.lisp")
    patch = f"@@ a.lisp\n= {a(3, '    (+ x y)))')}\n~    (* x y))\n"
    asked = ws.call("edit", {"input": patch, "repair": "preview"})
    assert asked.ok and asked.details["reason"] == "policy_preview"
    assert asked.details["decisions"][0]["classification"] == "repaired_local_stable"
    assert (root / "a.lisp").read_text() == LISP


def test_python_unparseable_edit_is_refused_with_line_and_column(ws: Workspace, root: Path) -> None:
    p = write(root, "m.py", "def f():\n    return 1\n")
    read(ws, "m.py")
    r = ws.call("edit", {"input": f"@@ m.py\n= {a(2, '    return 1')}\n~    return 1 +\n"})
    assert not r.ok
    assert "(line 2, column" in r.text and r.details["reason"] == "unrepairable"
    assert r.details["files"][0]["status"] == "rejected"
    assert p.read_text() == "def f():\n    return 1\n"


def test_edit_is_gated_by_file_edit(root: Path) -> None:
    write(root, "a.txt", "a\n")
    ws = Workspace(str(root), settings={"capabilities": ["file/read"]})
    read(ws, "a.txt")
    r = ws.call("edit", {"input": f"@@ a.txt\n= {a(1, 'a')}\n~b\n"})
    assert not r.ok and "file/edit" in r.text
    assert (root / "a.txt").read_text() == "a\n"


def test_module_constants_match_the_spec() -> None:
    assert edit_module.DEFAULT_POLICY == "safe"
    assert edit_module.TOOL.parameters["properties"]["repair"]["enum"] == [
        "safe",
        "preview",
        "reject",
    ]


def test_pending_candidates_per_session_are_bounded(ws: Workspace, root: Path) -> None:
    ids = []
    for _ in range(candidates_module.MAX_PENDING_CANDIDATES + 3):
        _p, cid = _preview(ws, root)
        ids.append(cid)
    pending = ws.default_session.candidates
    assert len(pending) == candidates_module.MAX_PENDING_CANDIDATES
    assert ids[0] not in pending and ids[-1] in pending


# -- through other faces and paths -------------------------------------------------------------
def test_read_then_edit_across_requests_of_kli_serve_stdio(root: Path) -> None:
    import json
    import subprocess
    import sys

    p = write(root, "a.lisp", LISP)
    requests = [
        {"id": 1, "tool": "read", "args": {"path": "a.lisp"}},
        {
            "id": 2,
            "tool": "edit",
            "args": {"input": f"@@ a.lisp\n= {a(3, '    (+ x y)))')}\n~    (* x y))\n"},
        },
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "kli.tools.cli", "serve", "--stdio", "--root", str(root)],
        input="".join(json.dumps(r) + "\n" for r in requests),
        capture_output=True,
        text=True,
        timeout=60,
    )
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2], proc.stderr
    assert replies[1]["ok"], replies[1]["text"]
    assert replies[1]["details"]["reason"] == "repaired_local_stable"
    assert p.read_text() == LISP.replace("(+ x y)))", "(* x y)))")


def test_edit_through_a_symlink_changes_the_target(ws: Workspace, root: Path) -> None:
    target = write(root, "real/a.txt", "a\n")
    os.symlink(target, root / "link.txt")
    read(ws, "link.txt")
    r = ws.call("edit", {"input": f"@@ link.txt\n= {a(1, 'a')}\n~b\n"})
    assert r.ok, r.text
    assert r.text.startswith("Edited real/a.txt")
    assert target.read_text() == "b\n" and os.path.islink(root / "link.txt")


def test_scratch_is_editable_but_control_state_is_not(ws: Workspace, root: Path) -> None:
    write(root, ".kli/scratch/n.txt", "a\n")
    write(root, ".kli/settings.json", "{}\n")
    read(ws, ".kli/scratch/n.txt")
    assert ws.call("edit", {"input": f"@@ .kli/scratch/n.txt\n= {a(1, 'a')}\n~b\n"}).ok
    r = ws.call("edit", {"input": "@@ .kli/settings.json\n+\n~x\n"})
    assert not r.ok and "write refused" in r.text
    assert (root / ".kli/settings.json").read_text() == "{}\n"


def test_file_mode_is_kept(ws: Workspace, root: Path) -> None:
    p = write(root, "run.sh", "echo a\n")
    p.chmod(0o751)
    read(ws, "run.sh")
    assert ws.call("edit", {"input": f"@@ run.sh\n= {a(1, 'echo a')}\n~echo b\n"}).ok
    assert (p.stat().st_mode & 0o777) == 0o751


def test_a_pipe_put_in_place_of_a_read_file_is_refused_without_blocking(
    ws: Workspace, root: Path
) -> None:
    write(root, "a.txt", "a\n")
    read(ws, "a.txt")
    os.unlink(root / "a.txt")
    os.mkfifo(root / "a.txt")
    r = ws.call("edit", {"input": f"@@ a.txt\n= {a(1, 'a')}\n~b\n"})
    assert not r.ok and "not a regular file" in r.text
