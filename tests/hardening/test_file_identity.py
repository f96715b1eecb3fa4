"""A write keeps what the file is (issue 19): its protection, owner, set-id bits and extended
attributes, for every writing tool of both profiles. The tests run as root, as the kernel may.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from kli.tools import Workspace

ORIGINAL = "alpha\nbeta\n"


def _writing_calls(path: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("write", {"path": path, "content": "new\n"}),
        ("edit", {"input": f"@@ {path}\n+\n~new\n"}),
        ("ws_write", {"path": path, "content": "new\n", "allow_shrink": True}),
        ("ws_edit", {"path": path, "old_str": "beta", "new_str": "gamma"}),
        ("ws_patch", {"path": path, "patch": "<<<<<<< SEARCH\nbeta\n=======\ngamma\n>>>>>>> REPLACE\n"}),
        ("ws_delete", {"path": path}),
        ("ws_mv", {"src": path, "dst": "moved.txt"}),
    ]


@pytest.mark.parametrize("mode", [0o444, 0o400, 0o555])
def test_a_read_only_file_is_refused_by_every_writing_tool_saying_how_to_proceed(
    root: Path, mode: int
) -> None:
    target = root / "ro.txt"
    target.write_text(ORIGINAL)
    target.chmod(mode)
    ws = Workspace(str(root))
    ws.call("read", {"path": "ro.txt"})
    ws.call("ws_read", {"path": "ro.txt"})
    for tool, args in _writing_calls("ro.txt"):
        r = ws.call(tool, args)
        assert not r.ok, (tool, r.text)
        assert r.details.get("error") == "read_only", (tool, r.text)
        assert "ro.txt is read-only" in r.text and "chmod u+w ro.txt" in r.text, (tool, r.text)
    assert target.read_text() == ORIGINAL
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert sorted(p.name for p in root.iterdir()) == ["ro.txt"]
    # Once the person makes it writable, the same call goes through.
    target.chmod(0o644)
    assert ws.call("ws_edit", {"path": "ro.txt", "old_str": "beta", "new_str": "gamma"}).ok


def test_a_file_of_another_owner_that_root_may_write_is_not_read_only(root: Path) -> None:
    """Root is in the "other" class for a file it does not own: any write bit lets it write
    (the way a container's root edits a mounted folder's files), none refuses it."""
    target = root / "theirs.txt"
    target.write_text(ORIGINAL)
    os.chown(target, 65534, 65534)
    target.chmod(0o644)
    ws = Workspace(str(root))
    ws.call("read", {"path": "theirs.txt"})
    assert ws.call("write", {"path": "theirs.txt", "content": "new\n"}).ok
    target.chmod(0o444)
    r = ws.call("write", {"path": "theirs.txt", "content": "newer\n"})
    assert r.details.get("error") == "read_only", r.text


def test_a_symlink_to_a_read_only_file_can_itself_be_moved_and_deleted(root: Path) -> None:
    (root / "ro.txt").write_text(ORIGINAL)
    (root / "ro.txt").chmod(0o444)
    (root / "link").symlink_to("ro.txt")
    ws = Workspace(str(root))
    assert ws.call("ws_mv", {"src": "link", "dst": "link2"}).ok
    assert ws.call("ws_delete", {"path": "link2"}).ok
    assert (root / "ro.txt").read_text() == ORIGINAL
