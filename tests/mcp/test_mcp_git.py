"""Issue 23 through a real ``kli mcp`` process (stdio, ``--profile all``): an agent with the file
tools only cannot make git run a program — it cannot write `.git/` state (in a repository or in
a folder with none), and git_status in a repository whose configuration already names a
hostile fsmonitor (as a cloned or hand-made one could) runs nothing and still answers. With
files on `auto` and shell on `review`, the same runs no command and makes no proposal."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .helpers import client_info, run, stdio_params, text_of

pytestmark = [pytest.mark.kernel, pytest.mark.mcp]

FILE_ONLY = {"capabilities": ["file/read", "file/write", "file/edit"]}
FILES_AUTO_SHELL_REVIEW = {"approval": {"file": "auto", "shell": "review"}}


def _root(tmp_path: Path, settings: dict[str, Any]) -> Path:
    root = tmp_path / "root"
    (root / ".kli").mkdir(parents=True)
    (root / ".kli" / "settings.json").write_text(json.dumps(settings))
    return root


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _hostile_repo(root: Path, sentinel: Path) -> None:
    """A repository whose configuration already runs a command on every git status."""
    (root / ".gitignore").write_text(".kli/\n")
    (root / "a.py").write_text("x = 1\n")
    _git(root, "init", "-q", "-b", "main", ".")
    _git(root, "add", ".")
    _git(root, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    _git(root, "config", "core.fsmonitor", f"touch {shlex.quote(str(sentinel))}; false")
    (root / "a.py").write_text("x = 2\n")


def _agent_writes_git_state(root: Path, sentinel: Path) -> list[tuple[str, dict[str, Any]]]:
    config = f"[core]\n\tfsmonitor = touch {sentinel}; false\n"
    return [
        ("write", {"path": ".git/config", "content": config}),
        ("ws_write", {"path": ".git/config", "content": config}),
        ("write", {"path": ".git/HEAD", "content": "ref: refs/heads/main\n"}),
        ("ws_write", {"path": ".git/refs/heads/main", "content": "0" * 40 + "\n"}),
        ("ws_write", {"path": ".GIT/config", "content": config}),
        ("ws_write", {"path": "sub/.git/config", "content": config}),
        ("ws_write", {"path": ".git", "content": f"gitdir: {root.parent}\n"}),
    ]


async def _refused(c: Any, calls: list[tuple[str, dict[str, Any]]]) -> None:
    for tool, args in calls:
        r = await c.call_tool(tool, args)
        assert r.is_error, (tool, args, text_of(r))
        assert "git repository's control state" in text_of(r), (tool, text_of(r))
        assert "pending" not in text_of(r).lower()


@pytest.mark.parametrize("settings", [FILE_ONLY, FILES_AUTO_SHELL_REVIEW],
                         ids=["file-tools-only", "files-auto-shell-review"])
def test_an_agent_cannot_make_git_status_run_a_command_in_a_repository(
        tmp_path: Path, settings: dict[str, Any]) -> None:
    from mcp import Client

    root = _root(tmp_path, settings)
    sentinel = tmp_path / "ran"
    _hostile_repo(root, sentinel)
    config_before = (root / ".git" / "config").read_bytes()

    async def body() -> None:
        params = stdio_params(tmp_path, "--start", "--root", str(root), "--profile", "all")
        async with Client(params, client_info=client_info()) as c:
            await _refused(c, _agent_writes_git_state(root, sentinel))
            status = await c.call_tool("git_status", {})
            assert not status.is_error, text_of(status)
            assert text_of(status).startswith("## main") and " M a.py" in text_of(status)
            diff = await c.call_tool("git_diff", {})
            assert not diff.is_error and "+x = 2" in text_of(diff)

    run(body)
    assert not sentinel.exists()
    assert (root / ".git" / "config").read_bytes() == config_before
    assert not (root / ".GIT").exists() and not (root / "sub").exists()


@pytest.mark.parametrize("settings", [FILE_ONLY, FILES_AUTO_SHELL_REVIEW],
                         ids=["file-tools-only", "files-auto-shell-review"])
def test_an_agent_cannot_make_a_repository_in_a_folder_with_none(
        tmp_path: Path, settings: dict[str, Any]) -> None:
    from mcp import Client

    root = _root(tmp_path, settings)
    sentinel = tmp_path / "ran"
    (root / "a.py").write_text("x = 1\n")

    async def body() -> None:
        params = stdio_params(tmp_path, "--start", "--root", str(root), "--profile", "all")
        async with Client(params, client_info=client_info()) as c:
            await _refused(c, _agent_writes_git_state(root, sentinel))
            status = await c.call_tool("git_status", {})
            assert status.is_error and "not a git repository" in text_of(status)

    run(body)
    assert not sentinel.exists()
    assert sorted(p.name for p in root.iterdir()) == [".kli", "a.py"]
