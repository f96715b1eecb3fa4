"""ws_list: entries of one folder, explicit messages for empty, missing and file paths."""

from __future__ import annotations

from pathlib import Path

from kli.tools import Workspace


def test_lists_folders_first_then_files_with_sizes(ws: Workspace, root: Path) -> None:
    (root / "src").mkdir()
    (root / "b.txt").write_text("bb\n")
    (root / "A.md").write_text("a\n")
    r = ws.call("ws_list", {})
    assert r.ok
    assert r.text.splitlines() == [".: 1 folder(s), 2 file(s)", "src/", "A.md  (2 B)", "b.txt  (3 B)"]


def test_empty_directory_is_said_explicitly(ws: Workspace, root: Path) -> None:
    (root / "empty").mkdir()
    r = ws.call("ws_list", {"path": "empty"})
    assert r.ok and r.text == "(directory empty is empty — it has no files or folders)"


def test_missing_directory_is_said_explicitly(ws: Workspace, root: Path) -> None:
    r = ws.call("ws_list", {"path": "nope/sub"})
    assert not r.ok and r.details["error"] == "not_found"
    assert "directory nope/sub does not exist" in r.text and 'ws_list {"path":"nope"}' in r.text


def test_file_path_points_at_read(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    r = ws.call("ws_list", {"path": "a.txt"})
    assert not r.ok and 'ws_read {"path":"a.txt"}' in r.text


def test_jailed(ws: Workspace) -> None:
    assert "escapes the workspace root" in ws.call("ws_list", {"path": ".."}).text


def test_many_entries_are_capped(ws: Workspace, root: Path) -> None:
    from kli.tools.ws.ws_list import LIST_MAX_ENTRIES

    for i in range(LIST_MAX_ENTRIES + 5):
        (root / f"f{i:04d}").write_text("")
    r = ws.call("ws_list", {}, session=ws.open_session())
    assert f"[showing {LIST_MAX_ENTRIES} of {LIST_MAX_ENTRIES + 5} entries" in r.text
