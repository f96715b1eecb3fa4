"""Held means nothing changed (issue 23, rule 2), through a real ``kli mcp`` process (stdio,
``--profile all``) attached to a notebook's kernel, files under review: an agent's ``ws_mv`` of
a git-tracked file leaves the file and git's index as they were, its ``ws_delete`` of an empty
folder leaves the folder, its ``ws_mv`` into ``new/sub/`` makes no folder — until the person
accepts in the activity panel (the ``kli.ui`` comm), which then does each move."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from .helpers import Notebook, client_info, run, stdio_params, text_of

pytestmark = [pytest.mark.kernel, pytest.mark.mcp]


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=root,
                          capture_output=True, text=True, check=True).stdout


def tree(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (None if p.is_dir() else p.read_bytes())
            for p in sorted(root.rglob("*"))}


def test_held_moves_and_folder_delete_change_nothing_until_the_person_accepts(
        tmp_path: Path, notebook: Notebook) -> None:
    from mcp import Client

    root = tmp_path / "root"
    git(root, "init", "-q")
    (root / "t.py").write_text("x = 1\n")
    (root / "u.txt").write_text("untracked\n")
    (root / "empty").mkdir()
    git(root, "add", "t.py")
    git(root, "commit", "-qm", "one")
    (root / ".kli").mkdir()
    (root / ".kli" / "settings.json").write_text(json.dumps({"approval": {"file": "review"}}))
    before = tree(root)

    async def agent() -> list[str]:
        params = stdio_params(tmp_path, "--connection-file", notebook.connection_file,
                              "--profile", "all")
        async with Client(params, client_info=client_info()) as c:
            texts = []
            for hole, tool, args in (
                ("git mv ran at once", "ws_mv", {"src": "t.py", "dst": "t2.py"}),
                ("rmdir ran at once", "ws_delete", {"path": "empty"}),
                ("folders made at once", "ws_mv", {"src": "u.txt", "dst": "new/sub/u.txt"}),
            ):
                texts.append(text_of(await c.call_tool(tool, args)))
                changed = sorted(p for p in set(before) | set(tree(root))
                                 if before.get(p) != tree(root).get(p))
                assert not changed, (hole, changed)  # no byte, no folder, not .git/index
            return texts

    texts = run(agent)
    for text in texts:
        assert text.startswith("Not written: this ws_"), text
    assert "git mv t.py t2.py (the file and its entry in git's index)" in texts[0]
    assert "remove empty folder empty" in texts[1]
    assert "make folder new/sub" in texts[2]
    assert tree(root) == before
    for text in texts:  # the person accepts each in the activity panel
        pid = re.search(r"Proposal (p\d+)", text)
        assert pid is not None, text
        reply = notebook.accept(pid.group(1))
        assert reply["ok"], reply
    assert not (root / "t.py").exists() and (root / "t2.py").read_text() == "x = 1\n"
    assert git(root, "status", "--porcelain", "--", "t.py", "t2.py") == "R  t.py -> t2.py\n"
    assert not (root / "empty").exists()
    assert (root / "new" / "sub" / "u.txt").read_text() == "untracked\n"
    assert not (root / "u.txt").exists()
