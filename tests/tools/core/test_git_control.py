"""`.git` is the repository's control state: no writing tool creates, changes, moves or deletes
anything with a `.git` component — in a repository or in a folder with none, in every spelling
another file system reads as `.git`. `.gitignore`, `.gitattributes` and `.github/` stay
ordinary files."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.core.jail import Jail, is_git_name
from kli.tools.core.result import ToolError

GIT_PATHS = [
    ".git/config", ".git/HEAD", ".git/refs/heads/main", ".git/hooks/pre-commit",
    "sub/.git/config", ".git", "sub/.git", ".GIT/config", ".Git/HEAD", ".git./config",
    ".git /config", ".git::$INDEX_ALLOCATION/config", "GIT~1/config", ".g\u200cit/config",
]
ORDINARY = [".gitignore", ".gitattributes", ".github/workflows/ci.yml", ".gitmodules",
            "git/config", "x.git/config", ".git-blame-ignore-revs"]


@pytest.mark.parametrize("name", [".git", ".GIT", ".git.", ".git ", ".git. .", "git~1", "GIT~2",
                                  ".git::$DATA", ".gi\u200dt", "\ufeff.git"])
def test_every_spelling_of_git_is_the_control_name(name: str) -> None:
    assert is_git_name(name)


@pytest.mark.parametrize("name", [".gitignore", ".gitattributes", ".github", "git", ".gitx",
                                  "x.git", ".kli"])
def test_other_names_are_not_the_git_control_name(name: str) -> None:
    assert not is_git_name(name)


@pytest.mark.parametrize("path", GIT_PATHS)
def test_the_jail_refuses_writing_git_control_state(root: Path, path: str) -> None:
    with pytest.raises(ToolError) as caught:
        Jail(str(root)).resolve(path, write=True)
    assert caught.value.details["error"] == "control_dir"
    assert "git repository's control state" in caught.value.message
    assert "ask the person" in caught.value.message


@pytest.mark.parametrize("path", ORDINARY)
def test_git_lookalikes_stay_writable(ws: Workspace, root: Path, path: str) -> None:
    r = ws.call("ws_write", {"path": path, "content": "x\n"})
    assert r.ok, r.text
    assert (root / path).read_text() == "x\n"


def _nb() -> str:
    return json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


@pytest.mark.parametrize("path", [".git/HEAD", ".git/refs/heads/main", ".git/config", ".git",
                                  "sub/.GIT./config"])
def test_no_writing_tool_creates_git_state_in_a_folder_with_no_repository(
    ws: Workspace, root: Path, path: str
) -> None:
    (root / "nb.ipynb").write_text(_nb())
    (root / "plain.txt").write_text("plain\n")
    calls = [
        ("write", {"path": path, "content": "[core]\n\tfsmonitor = touch /tmp/x\n"}),
        ("ws_write", {"path": path, "content": "ref: refs/heads/main\n"}),
        ("ws_patch", {"patch": f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x\n"}),
        ("ws_mv", {"src": "plain.txt", "dst": path}),
        ("cells", {"path": path + "/nb.ipynb", "op": "insert", "where": "end", "source": "x"}),
    ]
    for tool, args in calls:
        r = ws.call(tool, args)
        assert not r.ok, (tool, r.text)
        assert r.details.get("error") == "control_dir", (tool, r.text)
        assert "git repository's control state" in r.text, (tool, r.text)
    assert not any(p.name.casefold().startswith((".git", "git~")) for p in root.rglob("*"))
    assert (root / "plain.txt").read_text() == "plain\n"


@pytest.fixture
def repo(root: Path) -> Path:
    subprocess.run(["git", "init", "-q", "-b", "main", "."], cwd=root, check=True)
    (root / "a.txt").write_text("a\n")
    return root


def test_no_writing_tool_changes_moves_or_deletes_an_existing_repository(
    ws: Workspace, repo: Path
) -> None:
    config = repo / ".git" / "config"
    before = config.read_bytes()
    head = (repo / ".git" / "HEAD").read_bytes()
    assert ws.call("ws_read", {"path": ".git/config"}).ok  # reading is fine
    assert ws.call("read", {"path": ".git/config"}).text.startswith("1:6a|[core]")
    calls = [
        ("edit", {"input": "@@ .git/config\n= 1:6a\n~[core]\n~\tfsmonitor = touch /tmp/x\n"}),
        ("ws_edit", {"path": ".git/config", "old_str": "[core]",
                     "new_str": "[core]\n\tfsmonitor = touch /tmp/x"}),
        ("ws_write", {"path": ".git/config", "content": "[core]\n"}),
        ("write", {"path": ".git/HEAD", "content": "ref: refs/heads/evil\n"}),
        ("ws_delete", {"path": ".git/HEAD"}),
        ("ws_delete", {"path": ".git/refs/tags"}),
        ("ws_mv", {"src": ".git/config", "dst": "config.txt"}),
        ("ws_mv", {"src": ".git", "dst": "notgit"}),
        ("ws_mv", {"src": "a.txt", "dst": ".git/hooks/pre-commit"}),
        ("ws_patch", {"patch": "--- a/.git/HEAD\n+++ b/.git/HEAD\n@@ -1 +1 @@\n"
                               "-ref: refs/heads/main\n+ref: refs/heads/x\n"}),
    ]
    for tool, args in calls:
        r = ws.call(tool, args)
        assert not r.ok and r.details.get("error") == "control_dir", (tool, r.text)
    assert config.read_bytes() == before and (repo / ".git" / "HEAD").read_bytes() == head
    assert (repo / ".git" / "refs" / "tags").is_dir() and (repo / "a.txt").exists()


def test_moving_a_folder_that_holds_a_repository_is_refused(ws: Workspace, root: Path) -> None:
    sub = root / "proj"
    sub.mkdir()
    subprocess.run(["git", "init", "-q", "."], cwd=sub, check=True)
    r = ws.call("ws_mv", {"src": "proj", "dst": "moved"})
    assert not r.ok and r.details["error"] == "control_dir"
    assert "proj/.git" in r.text and "git repository's control state" in r.text
    assert (sub / ".git").is_dir() and not (root / "moved").exists()


def test_a_checkpoint_is_not_restored_into_git_state(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("[core]\n\tfsmonitor = touch /tmp/x\n")
    deleted = ws.call("ws_delete", {"path": "a.txt"})
    assert deleted.ok
    cp = deleted.details["checkpoint"]
    r = ws.call("ws_checkpoints", {"action": "restore", "id": cp, "path": ".git/config"})
    assert not r.ok and r.details["error"] == "control_dir", r.text
    assert not (root / ".git").exists()
