"""read: LINE:HH|content rows, ranges, raw, size/binary/empty rules, paging, wide lines, and the
view it records for edit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.file import read as read_mod
from kli.tools.file.anchors import line_hash, view_hashes


def _real(root: Path, rel: str) -> str:
    return os.path.realpath(root / rel)


def test_rows_are_line_hash_content_with_kli_fixture_hashes(ws: Workspace, root: Path) -> None:
    (root / "h.lisp").write_text("(defun hello ())\n\n")
    r = ws.call("read", {"path": "h.lisp"})
    assert r.ok
    assert r.text == "1:21|(defun hello ())\n2:c5|"


def test_start_and_end_are_inclusive_and_one_based(ws: Workspace, root: Path) -> None:
    (root / "f.txt").write_text("".join(f"line{i}\n" for i in range(1, 11)))
    r = ws.call("read", {"path": "f.txt", "start": 3, "end": 5})
    assert r.ok
    assert [row.split("|", 1)[1] for row in r.text.splitlines()] == ["line3", "line4", "line5"]
    assert r.text.splitlines()[0].startswith("3:")


def test_start_past_end_of_file_is_an_error(ws: Workspace, root: Path) -> None:
    (root / "f.txt").write_text("a\nb\n")
    r = ws.call("read", {"path": "f.txt", "start": 3})
    assert not r.ok
    assert "start 3 is past the end of f.txt, which has 2 line(s)" in r.text


def test_end_past_end_of_file_clamps_to_last_line(ws: Workspace, root: Path) -> None:
    (root / "f.txt").write_text("a\nb\nc\n")
    r = ws.call("read", {"path": "f.txt", "start": 2, "end": 99})
    assert r.ok
    assert r.text == f"2:{line_hash('b')}|b\n3:{line_hash('c')}|c"
    assert r.details["end"] == 3


def test_end_before_start_is_an_error_with_a_retry_hint(ws: Workspace, root: Path) -> None:
    (root / "f.txt").write_text("a\nb\nc\n")
    r = ws.call("read", {"path": "f.txt", "start": 3, "end": 2})
    assert not r.ok and "end >= start" in r.text


def test_raw_returns_content_without_prefix(ws: Workspace, root: Path) -> None:
    (root / "f.txt").write_text("alpha\nbeta\n")
    r = ws.call("read", {"path": "f.txt", "raw": True})
    assert r.ok and r.text == "alpha\nbeta"


def test_file_over_2_mib_is_an_error_naming_search(ws: Workspace, root: Path) -> None:
    (root / "big.txt").write_bytes(b"x" * (2 * 1024 * 1024 + 1))
    r = ws.call("read", {"path": "big.txt"})
    assert not r.ok
    assert "search" in r.text and "2 MiB" in r.text
    assert r.details["error"] == "too_large"


def test_file_of_exactly_2_mib_reads(ws: Workspace, root: Path) -> None:
    (root / "edge.txt").write_bytes((b"y" * 1023 + b"\n") * 2048)
    r = ws.call("read", {"path": "edge.txt", "start": 1, "end": 1})
    assert r.ok and r.text.startswith("1:")


def test_empty_file_reads_as_empty_file(ws: Workspace, root: Path) -> None:
    (root / "e.txt").write_text("")
    r = ws.call("read", {"path": "e.txt"})
    assert r.ok and r.text == "(empty file)"
    assert ws.default_session.has_read(_real(root, "e.txt"))


def test_binary_file_is_a_clear_error(ws: Workspace, root: Path) -> None:
    (root / "b.bin").write_bytes(b"\x7fELF\x00\x01\x02")
    r = ws.call("read", {"path": "b.bin"})
    assert not r.ok and "binary" in r.text
    assert not ws.default_session.has_read(_real(root, "b.bin"))


def test_missing_file_and_directory_errors_suggest_find(ws: Workspace, root: Path) -> None:
    (root / "d").mkdir()
    missing = ws.call("read", {"path": "nope.py"})
    assert not missing.ok and "does not exist" in missing.text and "find" in missing.text
    folder = ws.call("read", {"path": "d"})
    assert not folder.ok and "is a directory" in folder.text and "find" in folder.text


def test_path_outside_root_is_refused(ws: Workspace) -> None:
    r = ws.call("read", {"path": "../secret"})
    assert not r.ok and "escapes the workspace root" in r.text


def test_read_records_hashes_of_lines_shown(ws: Workspace, root: Path) -> None:
    (root / "f.txt").write_text("a\nb\nc\nd\n")
    ws.call("read", {"path": "f.txt", "start": 2, "end": 3})
    view = ws.default_session.views[_real(root, "f.txt")]
    assert view_hashes(view) == {2: line_hash("b"), 3: line_hash("c")}
    assert view.whole is False
    assert view.cut == set()


def test_whole_read_records_whole_view(ws: Workspace, root: Path) -> None:
    (root / "f.txt").write_text("a\nb\n")
    ws.call("read", {"path": "f.txt"})
    view = ws.default_session.views[_real(root, "f.txt")]
    assert view.whole is True and set(view_hashes(view)) == {1, 2}


def test_paging_builds_up_one_view(ws: Workspace, root: Path) -> None:
    (root / "f.txt").write_text("a\nb\nc\nd\n")
    ws.call("read", {"path": "f.txt", "start": 1, "end": 2})
    ws.call("read", {"path": "f.txt", "start": 3, "end": 4})
    view = ws.default_session.views[_real(root, "f.txt")]
    assert set(view_hashes(view)) == {1, 2, 3, 4} and view.whole is True


def test_paging_forgets_earlier_pages_once_the_file_changed(ws: Workspace, root: Path) -> None:
    # Line 1 still reads "a", but a changed file's old rows prove nothing (a line may have moved).
    (root / "f.txt").write_text("a\nb\nc\nd\n")
    ws.call("read", {"path": "f.txt", "start": 1, "end": 2})
    (root / "f.txt").write_text("a\nB\nc\nd\n")
    ws.call("read", {"path": "f.txt", "start": 3, "end": 4})
    view = ws.default_session.views[_real(root, "f.txt")]
    assert set(view.texts) == {3, 4}


def test_views_are_per_session(ws: Workspace, root: Path) -> None:
    (root / "f.txt").write_text("a\n")
    other = ws.open_session("other")
    ws.call("read", {"path": "f.txt"}, session=other)
    assert other.has_read(_real(root, "f.txt"))
    assert not ws.default_session.has_read(_real(root, "f.txt"))


def test_long_read_is_clamped_with_exact_next_page_call(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(read_mod, "MAX_LINES", 5)
    (root / "f.txt").write_text("".join(f"{i}\n" for i in range(1, 13)))
    r = ws.call("read", {"path": "f.txt"})
    assert r.ok
    rows = [row for row in r.text.splitlines() if not row.startswith("[")]
    assert len(rows) == 5
    assert "Next page: read path='f.txt' start=6 end=10" in r.text
    assert r.details["clamped"] is True and r.details["end"] == 5
    follow = ws.call("read", {"path": "f.txt", "start": 6, "end": 10})
    assert follow.text.splitlines()[0].startswith("6:")


def test_read_of_default_limit_is_2000_lines(ws: Workspace, root: Path) -> None:
    (root / "f.txt").write_text("x\n" * 2500)
    r = ws.call("read", {"path": "f.txt"})
    assert r.details["end"] == 2000
    assert "start=2001 end=2500" in r.text


def test_character_budget_also_clamps_a_read(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(read_mod, "MAX_OUTPUT_CHARS", 100)
    (root / "f.txt").write_text(("y" * 40 + "\n") * 10)
    r = ws.call("read", {"path": "f.txt"})
    assert r.details["clamped"] is True
    assert r.details["end"] == 3
    assert "start=4" in r.text


def test_wide_line_is_cut_with_marker_and_recorded_as_cut(ws: Workspace, root: Path) -> None:
    wide = "w" * 2500
    (root / "f.txt").write_text(f"short\n{wide}\n")
    r = ws.call("read", {"path": "f.txt"})
    rows = r.text.splitlines()
    assert rows[1] == f"2:{line_hash(wide)}|{'w' * 2000}… [+500 chars]"
    assert "edit refuses to replace a line that was shown cut" in r.text
    view = ws.default_session.views[_real(root, "f.txt")]
    assert view.cut == {2}
    assert view_hashes(view)[2] == line_hash(wide)  # the hash is of the whole line
    assert r.details["cut"] == [2]


def test_crlf_line_keeps_carriage_return_in_hash(ws: Workspace, root: Path) -> None:
    (root / "w.txt").write_bytes(b"a\r\nb\r\n")
    r = ws.call("read", {"path": "w.txt"})
    assert r.text.split("\n")[0] == f"1:{line_hash('a' + chr(13))}|a\r"


def test_symlink_inside_root_records_view_under_real_path(ws: Workspace, root: Path) -> None:
    (root / "t.txt").write_text("t\n")
    (root / "l.txt").symlink_to("t.txt")
    assert ws.call("read", {"path": "l.txt"}).ok
    assert ws.default_session.has_read(_real(root, "t.txt"))


def test_denied_gate_runs_nothing(root: Path) -> None:
    (root / "f.txt").write_text("a\n")
    ws = Workspace(str(root), settings={"capabilities": []})
    r = ws.call("read", {"path": "f.txt"})
    assert not r.ok and "file/read" in r.text
    assert ws.default_session.views == {}


def test_edit_refuses_to_replace_a_line_read_cut(ws: Workspace, root: Path) -> None:
    wide = "x" * 2500
    (root / "w.txt").write_text(f"{wide}\nshort\n")
    ws.call("read", {"path": "w.txt"})
    hh = line_hash(wide)
    r = ws.call("edit", {"input": f"@@ w.txt\n= 1:{hh}..1:{hh}\n~y\n"})
    assert not r.ok and "cut" in r.text
    assert (root / "w.txt").read_text() == f"{wide}\nshort\n"
    ok = ws.call(
        "edit", {"input": f"@@ w.txt\n= 2:{line_hash('short')}..2:{line_hash('short')}\n~long\n"}
    )
    assert ok.ok, ok.text


def test_fifo_is_refused_without_blocking(ws: Workspace, root: Path) -> None:
    os.mkfifo(root / "pipe")
    r = ws.call("read", {"path": "pipe"})
    assert not r.ok and "not a regular file" in r.text
