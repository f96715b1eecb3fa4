"""Applied means kept, for every writing tool: another program that writes the file after the
tool verified it and before the tool replaces it (here: right after the tool staged its new
file) is never overwritten — the tool answers ``stale`` and the other program's bytes stay."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kli.tools import Workspace
from kli.tools.core import atomic
from kli.tools.file.anchors import line_hash

THEIRS = "written by another program\n"


def _edit(ws: Workspace) -> dict[str, Any]:
    ws.call("read", {"path": "f.py"})
    return {"input": f"@@ f.py\n= 1:{line_hash('x = 1')}\n~x = 2\n"}


def _ws_write(ws: Workspace) -> dict[str, Any]:
    ws.call("ws_read", {"path": "f.py"})  # ws_write overwrites only a file read first
    return {"path": "f.py", "content": "x = 2\n"}


CALLS: dict[str, Callable[[Workspace], dict[str, Any]]] = {
    "edit": _edit,
    "write": lambda ws: {"path": "f.py", "content": "x = 2\n"},
    "ws_write": _ws_write,
    "ws_edit": lambda ws: {"path": "f.py", "old_str": "x = 1", "new_str": "x = 2"},
    "ws_patch": lambda ws: {"patch": "--- a/f.py\n+++ b/f.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"},
}


@pytest.mark.parametrize("tool", sorted(CALLS))
def test_a_file_written_by_another_program_mid_write_is_kept_and_the_tool_refuses(
    ws: Workspace, root: Path, tool: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = root / "f.py"
    target.write_text("x = 1\n")
    args = CALLS[tool](ws)
    real_stage = atomic._stage

    def stage_then_another_program_writes(path: str, data: bytes, made: Any = None) -> str:
        tmp = real_stage(path, data, made)
        if not path.endswith(THEIRS):  # once, for the tool's own file
            target.write_text(THEIRS)
        return tmp

    monkeypatch.setattr(atomic, "_stage", stage_then_another_program_writes)
    r = ws.call(tool, args)
    monkeypatch.undo()
    assert not r.ok and r.details.get("error") == "stale", r.text
    assert "Nothing was written" in r.text
    assert target.read_text() == THEIRS
    assert not [p for p in root.iterdir() if p.name.endswith(atomic.TMP_SUFFIX)]


def test_ws_delete_keeps_a_file_changed_after_its_checkpoint(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kli.tools.ws import checkpoints

    target = root / "f.py"
    target.write_text("x = 1\n")
    real = checkpoints.save_before

    def checkpoint_then_another_program_writes(*a: Any, **k: Any) -> Any:
        cp = real(*a, **k)
        target.write_text(THEIRS)
        return cp

    monkeypatch.setattr(checkpoints, "save_before", checkpoint_then_another_program_writes)
    r = ws.call("ws_delete", {"path": "f.py"})
    assert not r.ok and r.details.get("error") == "stale", r.text
    assert target.read_text() == THEIRS


def test_ws_mv_never_lands_on_a_destination_created_meanwhile(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kli.tools.ws import ws_mv

    (root / "a.py").write_text("a = 1\n")
    dst = root / "b.py"

    def not_a_work_tree_and_b_appears(path: str) -> bool:
        dst.write_text(THEIRS)
        return False

    monkeypatch.setattr(ws_mv, "in_work_tree", not_a_work_tree_and_b_appears)
    r = ws.call("ws_mv", {"src": "a.py", "dst": "b.py"})
    assert not r.ok and r.details.get("error") == "target_exists", r.text
    assert dst.read_text() == THEIRS and (root / "a.py").read_text() == "a = 1\n"


def test_a_checkpoint_restore_keeps_a_file_changed_mid_restore(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = root / "f.py"
    target.write_text("x = 1\n")
    ws.call("ws_read", {"path": "f.py"})
    assert ws.call("ws_write", {"path": "f.py", "content": "x = 3\n"}).ok  # checkpoints x = 1
    listed = ws.call("ws_checkpoints", {"action": "list"})
    ids = [c["id"] for c in listed.details.get("checkpoints", [])]
    assert ids, json.dumps(listed.details)
    real_stage = atomic._stage

    def stage_then_another_program_writes(path: str, data: bytes, made: Any = None) -> str:
        tmp = real_stage(path, data, made)
        if path.endswith("f.py"):
            target.write_text(THEIRS)
        return tmp

    monkeypatch.setattr(atomic, "_stage", stage_then_another_program_writes)
    r = ws.call("ws_checkpoints", {"action": "restore", "id": ids[0]})
    monkeypatch.undo()
    assert not r.ok and r.details.get("error") == "stale", r.text
    assert target.read_text() == THEIRS


def test_accepting_a_repair_candidate_keeps_a_file_changed_mid_write(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = root / "f.py"
    target.write_text("x = 1\n")
    ws.call("read", {"path": "f.py"})
    preview = ws.call(
        "edit", {"input": f"@@ f.py\n= 1:{line_hash('x = 1')}\n~x = (1\n", "repair": "preview"}
    )
    cid = preview.details.get("candidate")
    assert cid, preview.text
    real_stage = atomic._stage

    def stage_then_another_program_writes(path: str, data: bytes, made: Any = None) -> str:
        tmp = real_stage(path, data, made)
        target.write_text(THEIRS)
        return tmp

    monkeypatch.setattr(atomic, "_stage", stage_then_another_program_writes)
    r = ws.call("edit", {"accept_repair": cid, "path": "f.py"})
    monkeypatch.undo()
    assert not r.ok and r.details.get("error") == "stale_candidate", r.text
    assert target.read_text() == THEIRS
