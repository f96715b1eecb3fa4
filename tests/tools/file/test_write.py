"""write: whole replacement as given, parent folders, atomic and mode-keeping, the control-dir
jail, prior content for the diff view, and the session view it forgets."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.core import changes


def _real(root: Path, rel: str) -> str:
    return os.path.realpath(root / rel)


def test_write_replaces_file_whole(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("old line 1\nold line 2\n")
    r = ws.call("write", {"path": "a.txt", "content": "new\n"})
    assert r.ok
    assert (root / "a.txt").read_bytes() == b"new\n"
    assert r.text.startswith("Replaced a.txt (1 line(s), 4 bytes; +1 -2)")


def test_content_is_written_exactly_as_given(ws: Workspace, root: Path) -> None:
    (root / "w.txt").write_bytes(b"a\r\nb\r\n")
    ws.call("write", {"path": "w.txt", "content": "x\ny"})
    assert (root / "w.txt").read_bytes() == b"x\ny"


def test_missing_parent_folders_are_created(ws: Workspace, root: Path) -> None:
    r = ws.call("write", {"path": "a/b/c/new.py", "content": "x = 1\n"})
    assert r.ok and (root / "a/b/c/new.py").read_text() == "x = 1\n"
    assert "Created a/b/c/new.py" in r.text and "created missing parent folders" in r.text
    assert r.details["existed"] is False


def test_prior_content_rides_in_details_for_the_diff_view(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    r = ws.call("write", {"path": "a.py", "content": "x = 2\n"})
    (change,) = r.details["files"]
    assert change["path"] == "a.py" and change["status"] == "written"
    assert change["before"] == "x = 1\n" and change["after"] == "x = 2\n"
    assert change["language"] == "python"
    assert (change["added"], change["removed"]) == (1, 1)


def test_new_file_has_no_prior_content(ws: Workspace, root: Path) -> None:
    r = ws.call("write", {"path": "n.txt", "content": "a\nb\n"})
    (change,) = r.details["files"]
    assert change["before"] is None and change["after"] == "a\nb\n"
    assert (change["added"], change["removed"]) == (2, 0)


def test_huge_prior_content_is_bounded_in_details(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kli.tools.file import write as write_mod

    monkeypatch.setattr(write_mod, "MAX_DIFF_TEXT", 100)
    monkeypatch.setattr(changes, "MAX_DIFF_TEXT", 100)
    (root / "big.txt").write_text("line\n" * 50)  # 250 bytes
    r = ws.call("write", {"path": "big.txt", "content": "short\n"})
    (change,) = r.details["files"]
    assert change["too_large"] is True and change["before"] is None
    assert change["existed"] is True
    assert (change["added"], change["removed"]) == (1, 50)
    assert (root / "big.txt").read_text() == "short\n"


def test_binary_prior_content_is_not_carried(ws: Workspace, root: Path) -> None:
    (root / "b.bin").write_bytes(b"\x00\x01\x02")
    r = ws.call("write", {"path": "b.bin", "content": "text\n"})
    assert r.ok
    (change,) = r.details["files"]
    assert change["before"] is None and change["existed"] is True


def test_write_keeps_existing_file_mode(ws: Workspace, root: Path) -> None:
    script = root / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o750)
    ws.call("write", {"path": "run.sh", "content": "#!/bin/sh\necho hi\n"})
    assert stat.S_IMODE(script.stat().st_mode) == 0o750


def test_write_leaves_no_temporary_files(ws: Workspace, root: Path) -> None:
    ws.call("write", {"path": "d/a.txt", "content": "x"})
    ws.call("write", {"path": "d/a.txt", "content": "y"})
    assert os.listdir(root / "d") == ["a.txt"]


def test_write_under_control_dir_is_refused(ws: Workspace, root: Path) -> None:
    r = ws.call("write", {"path": ".kli/settings.json", "content": "{}"})
    assert not r.ok and "write refused" in r.text and ".kli/scratch/" in r.text
    assert not (root / ".kli" / "settings.json").exists()


def test_write_under_scratch_is_allowed(ws: Workspace, root: Path) -> None:
    r = ws.call("write", {"path": ".kli/scratch/notes.txt", "content": "n\n"})
    assert r.ok and (root / ".kli/scratch/notes.txt").read_text() == "n\n"


def test_write_outside_root_is_refused(ws: Workspace, tmp_path: Path) -> None:
    r = ws.call("write", {"path": "../escape.txt", "content": "x"})
    assert not r.ok and not (tmp_path / "escape.txt").exists()


def test_write_to_a_directory_is_an_error(ws: Workspace, root: Path) -> None:
    (root / "d").mkdir()
    r = ws.call("write", {"path": "d", "content": "x"})
    assert not r.ok and "is a directory" in r.text


def test_write_forgets_the_stale_view(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    ws.call("read", {"path": "a.txt"})
    assert ws.default_session.has_read(_real(root, "a.txt"))
    ws.call("write", {"path": "a.txt", "content": "b\n"})
    assert not ws.default_session.has_read(_real(root, "a.txt"))
    assert "Read it before editing" in ws.call("write", {"path": "a.txt", "content": "c\n"}).text


def test_write_is_denied_without_file_write_gate(root: Path) -> None:
    ws = Workspace(str(root), settings={"capabilities": ["file/read"]})
    r = ws.call("write", {"path": "a.txt", "content": "x"})
    assert not r.ok and "file/write" in r.text and not (root / "a.txt").exists()


def test_non_utf8_bytes_round_trip_through_read_content(ws: Workspace, root: Path) -> None:
    (root / "l1.txt").write_bytes(b"caf\xe9\n")
    content = (root / "l1.txt").read_bytes().decode("utf-8", "surrogateescape")
    ws.call("write", {"path": "copy.txt", "content": content})
    assert (root / "copy.txt").read_bytes() == b"caf\xe9\n"


def test_edit_after_write_needs_a_read_then_works(ws: Workspace, root: Path) -> None:
    from kli.tools.file.anchors import line_hash

    (root / "a.txt").write_text("p\n")
    ws.call("read", {"path": "a.txt"})
    ws.call("write", {"path": "a.txt", "content": "q\n"})
    patch = f"@@ a.txt\n= 1:{line_hash('q')}..1:{line_hash('q')}\n~z\n"
    refused = ws.call("edit", {"input": patch})
    assert not refused.ok and "read" in refused.text
    ws.call("read", {"path": "a.txt"})
    assert ws.call("edit", {"input": patch}).ok
    assert (root / "a.txt").read_text() == "z\n"


def test_write_through_a_symlink_replaces_the_target_and_keeps_the_link(
    ws: Workspace, root: Path
) -> None:
    (root / "target.txt").write_text("old\n")
    (root / "link.txt").symlink_to("target.txt")
    r = ws.call("write", {"path": "link.txt", "content": "new\n"})
    assert r.ok
    assert (root / "link.txt").is_symlink()
    assert (root / "target.txt").read_text() == "new\n"


def test_write_below_a_file_is_an_error_naming_the_problem(ws: Workspace, root: Path) -> None:
    (root / "f").write_text("x")
    r = ws.call("write", {"path": "f/child.txt", "content": "y"})
    assert not r.ok and "cannot write f/child.txt" in r.text
    assert (root / "f").read_text() == "x"
