"""git_status and git_diff: real git in a temporary repository; outside a repo, a clear
message."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kli.tools import Workspace


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=root,
                   check=True, capture_output=True)


@pytest.fixture
def repo(root: Path) -> Path:
    _git(root, "init", "-q", "-b", "main", ".")
    (root / "a.py").write_text("x = 1\n")
    (root / "b.py").write_text("y = 1\n")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "init")
    return root


def test_status_of_a_clean_tree(ws: Workspace, repo: Path) -> None:
    r = ws.call("git_status", {})
    assert r.ok and r.text == "## main\n(working tree clean — nothing to commit)"


def test_status_shows_porcelain_lines(ws: Workspace, repo: Path) -> None:
    (repo / "a.py").write_text("x = 2\n")
    (repo / "new.txt").write_text("n\n")
    (repo / "b.py").write_text("y = 2\n")
    _git(repo, "add", "b.py")
    r = ws.call("git_status", {})
    lines = r.text.splitlines()
    assert lines[0] == "## main"
    assert " M a.py" in lines and "M  b.py" in lines and "?? new.txt" in lines
    assert r.details["changed"] == 3


def test_diff_unstaged_and_cached(ws: Workspace, repo: Path) -> None:
    (repo / "a.py").write_text("x = 2\n")
    r = ws.call("git_diff", {})
    assert r.ok and "-x = 1\n+x = 2" in r.text and r.text.startswith("diff --git a/a.py b/a.py")
    empty = ws.call("git_diff", {"cached": True})
    assert empty.ok and empty.text.startswith("(no staged changes")
    _git(repo, "add", "a.py")
    assert "+x = 2" in ws.call("git_diff", {"cached": True}).text
    assert ws.call("git_diff", {}).text.startswith("(no unstaged changes")


def test_diff_path_limits(ws: Workspace, repo: Path) -> None:
    (repo / "a.py").write_text("x = 2\n")
    (repo / "b.py").write_text("y = 2\n")
    r = ws.call("git_diff", {"path": "b.py"})
    assert "b.py" in r.text and "a.py" not in r.text


def test_git_tools_are_read_only(ws: Workspace, repo: Path) -> None:
    (repo / "a.py").write_text("x = 2\n")
    ws.call("git_status", {})
    ws.call("git_diff", {})
    assert not (repo / ".git" / "index.lock").exists()
    out = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=repo, capture_output=True, text=True)
    assert out.stdout == ""  # nothing was staged by the tools


def test_outside_a_repository_is_a_clear_message(ws: Workspace, root: Path) -> None:
    r = ws.call("git_status", {})
    assert not r.ok and r.details["error"] == "not_a_repo"
    assert "not a git repository" in r.text and "ws_list" in r.text
    assert "not a git repository" in ws.call("git_diff", {}).text
