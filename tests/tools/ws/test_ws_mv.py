"""ws_mv: git mv in a git work tree for tracked files, rename otherwise; jailed both ends;
never overwrites; reserved names and .kli/ refused."""

from __future__ import annotations

import subprocess
from pathlib import Path

from kli.tools import Workspace


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
        cwd=root, check=True, capture_output=True, text=True,
    ).stdout


def _repo(root: Path) -> None:
    _git(root, "init", "-q", ".")
    (root / "a.py").write_text("x = 1\n")
    _git(root, "add", "a.py")
    _git(root, "commit", "-qm", "init")


def test_tracked_file_moves_with_git_mv(ws: Workspace, root: Path) -> None:
    _repo(root)
    r = ws.call("ws_mv", {"src": "a.py", "dst": "pkg/b.py"})
    assert r.ok, r.text
    assert r.text == "moved a.py → pkg/b.py (git mv)"
    assert (root / "pkg/b.py").read_text() == "x = 1\n" and not (root / "a.py").exists()
    # git recorded the rename in the index.
    assert "R  a.py -> pkg/b.py" in _git(root, "status", "--porcelain=v1")
    change = r.details["files"][0]
    assert change["status"] == "moved" and change["from_path"] == "a.py"


def test_untracked_file_in_a_repo_is_renamed(ws: Workspace, root: Path) -> None:
    _repo(root)
    (root / "u.txt").write_text("u\n")
    r = ws.call("ws_mv", {"src": "u.txt", "dst": "v.txt"})
    assert r.ok and r.details["method"] == "rename"
    assert (root / "v.txt").read_text() == "u\n"


def test_outside_git_it_renames(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    r = ws.call("ws_mv", {"from": "a.txt", "to": "d/e/a.txt"})
    assert r.ok and r.details["method"] == "rename"
    assert (root / "d/e/a.txt").read_text() == "a\n"


def test_folder_moves(ws: Workspace, root: Path) -> None:
    (root / "old").mkdir()
    (root / "old/f.txt").write_text("f\n")
    assert ws.call("ws_mv", {"src": "old", "dst": "new"}).ok
    assert (root / "new/f.txt").read_text() == "f\n"


def test_existing_target_is_never_overwritten(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    r = ws.call("ws_mv", {"src": "a.txt", "dst": "b.txt"})
    assert not r.ok and r.details["error"] == "target_exists"
    assert 'ws_delete {"path":"b.txt"}' in r.text
    assert (root / "b.txt").read_text() == "b\n" and (root / "a.txt").exists()


def test_missing_source_suggests_recovery(ws: Workspace, root: Path) -> None:
    r = ws.call("ws_mv", {"src": "nope.txt", "dst": "b.txt"})
    assert not r.ok and "no such file: nope.txt" in r.text and "ws_glob" in r.text


def test_both_ends_are_jailed(ws: Workspace, root: Path, tmp_path: Path) -> None:
    (root / "a.txt").write_text("a\n")
    r = ws.call("ws_mv", {"src": "a.txt", "dst": "../out.txt"})
    assert not r.ok and "escapes the workspace root" in r.text
    (tmp_path / "outside.txt").write_text("o\n")
    r = ws.call("ws_mv", {"src": "../outside.txt", "dst": "in.txt"})
    assert not r.ok and (tmp_path / "outside.txt").exists()


def test_control_dir_and_reserved_names_are_refused(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    r = ws.call("ws_mv", {"src": "a.txt", "dst": ".kli/hooks.json"})
    assert not r.ok
    assert r.text.startswith("write refused — .kli/hooks.json is harness control state")
    r = ws.call("ws_mv", {"src": "a.txt", "dst": "con.txt"})
    assert not r.ok and r.details["error"] == "reserved_name"
    assert (root / "a.txt").exists()


def test_a_read_carries_over_to_the_new_name(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    ws.call("ws_read", {"path": "a.txt"})
    ws.call("ws_mv", {"src": "a.txt", "dst": "b.txt"})
    assert ws.call("ws_write", {"path": "b.txt", "content": "b\n"}).ok
