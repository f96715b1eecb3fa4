"""Programs a tool starts by name are never found in the workspace: PATH entries under the root,
and relative ones, are left out of every lookup (git, the syntax checkers, the shells)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.core.programs import trusted_path, trusted_which


def _fake(folder: Path, name: str, sentinel: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / name
    exe.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(sentinel))}\nexit 0\n")
    exe.chmod(0o755)
    return exe


def test_trusted_path_leaves_out_relative_entries_and_the_root(root: Path, tmp_path: Path) -> None:
    link = tmp_path / "link-to-root"
    link.symlink_to(root)
    given = os.pathsep.join(
        [str(root / "bin"), ".", "", "node_modules/.bin", str(link / "venv" / "bin"), str(root),
         "/usr/bin", str(tmp_path / "elsewhere")]
    )
    assert trusted_path(str(root), given) == os.pathsep.join(["/usr/bin", str(tmp_path / "elsewhere")])
    assert trusted_path(None, given).split(os.pathsep)[:2] == [str(root / "bin"), str(link / "venv" / "bin")]


def test_trusted_which_skips_a_program_planted_in_the_root(root: Path, tmp_path: Path) -> None:
    sentinel = tmp_path / "ran"
    planted = _fake(root / ".venv" / "bin", "sh", sentinel)
    path = os.pathsep.join([str(planted.parent), os.environ["PATH"]])
    found = trusted_which("sh", str(root), path=path)
    assert found is not None and not found.startswith(str(root))
    assert trusted_which("sh", None, path=path) == str(planted)  # no workspace: only relatives
    assert trusted_which(str(planted), str(root)) is None
    assert trusted_which("./sh", str(root)) is None
    assert trusted_which("/bin/sh", str(root)) == "/bin/sh"


@pytest.mark.parametrize(("name", "path", "content"), [
    ("node", "m.js", "let a = 1;\n"),
    ("gofmt", "m.go", "package m\n"),
])
def test_a_syntax_checker_planted_in_the_root_never_runs(
    ws: Workspace, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    name: str, path: str, content: str,
) -> None:
    sentinel = tmp_path / f"{name}-ran"
    bin_dir = root / "node_modules" / ".bin"
    _fake(bin_dir, name, sentinel)
    _fake(root, name, sentinel)
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), ".", os.environ["PATH"]]))
    monkeypatch.chdir(root)
    r = ws.call("ws_write", {"path": path, "content": content})
    assert r.ok, r.text
    broken = ws.call("ws_write", {"path": "b" + path, "content": content + "func (\n"})
    assert broken.ok
    assert not sentinel.exists()


@pytest.mark.parametrize(("tool", "args"), [
    ("bash", {"command": "true", "shell": "sh"}),
    ("ws_shell", {"command": "true"}),
])
def test_the_shell_is_not_taken_from_the_root(
    ws: Workspace, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    tool: str, args: dict[str, object],
) -> None:
    sentinel = tmp_path / "shell-ran"
    bin_dir = root / "bin"
    for shell in ("sh", "bash"):
        _fake(bin_dir, shell, sentinel)
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.environ["PATH"]]))
    r = ws.call(tool, args)
    assert r.ok, r.text
    assert not sentinel.exists()
