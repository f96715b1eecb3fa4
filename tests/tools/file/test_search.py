"""search: match and context rows, per-file groups, recorded anchors, skips, caps, bounds, regex
errors, and per-line semantics of the whole-buffer scan."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kli.tools import Workspace
from kli.tools.file import search as search_mod
from kli.tools.file import walk as walk_mod
from kli.tools.file.anchors import line_hash, view_hashes


def _write(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def _real(root: Path, rel: str) -> str:
    return os.path.realpath(root / rel)


def test_match_rows_are_star_prefixed_anchors(ws: Workspace, root: Path) -> None:
    _write(root, "a.py", "x = 1\ndef foo():\n    return x\n")
    r = ws.call("search", {"pattern": "foo", "path": "a.py"})
    assert r.ok
    assert r.text == f"a.py (1 matching line)\n*2:{line_hash('def foo():')}|def foo():"


def test_context_rows_are_space_prefixed(ws: Workspace, root: Path) -> None:
    _write(root, "a.py", "x = 1\ndef foo():\n    return x\ny = 2\n")
    r = ws.call("search", {"pattern": "foo", "path": "a.py", "context": 1})
    assert r.text.splitlines()[1:] == [
        f" 1:{line_hash('x = 1')}|x = 1",
        f"*2:{line_hash('def foo():')}|def foo():",
        f" 3:{line_hash('    return x')}|    return x",
    ]


def test_context_defaults_to_zero(ws: Workspace, root: Path) -> None:
    _write(root, "a.txt", "a\nhit\nb\n")
    r = ws.call("search", {"pattern": "hit", "path": "a.txt"})
    assert r.text.splitlines()[1:] == [f"*2:{line_hash('hit')}|hit"]


def test_overlapping_context_windows_merge_and_groups_are_separated(
    ws: Workspace, root: Path
) -> None:
    _write(root, "a.txt", "".join(f"{'hit' if i in (2, 3, 9) else 'l'}{i}\n" for i in range(1, 13)))
    r = ws.call("search", {"pattern": "hit", "path": "a.txt", "context": 1})
    rows = r.text.splitlines()[1:]
    numbers = [row.split("|")[0] for row in rows]
    assert numbers == [" 1:" + line_hash("l1"), "*2:" + line_hash("hit2"), "*3:" + line_hash("hit3"),
                       " 4:" + line_hash("l4"), "--", " 8:" + line_hash("l8"),
                       "*9:" + line_hash("hit9"), " 10:" + line_hash("l10")]  # fmt: skip


def test_output_is_grouped_per_file_with_headers(ws: Workspace, root: Path) -> None:
    _write(root, "src/a.py", "needle\n")
    _write(root, "src/b.py", "hay\nneedle\nneedle too\n")
    _write(root, "src/c.py", "hay\n")
    r = ws.call("search", {"pattern": "needle", "path": "src/**/*.py"})
    blocks = r.text.split("\n\n")
    assert blocks[0].splitlines()[0] == "src/a.py (1 matching line)"
    assert blocks[1].splitlines()[0] == "src/b.py (2 matching lines)"
    assert len(blocks) == 2
    assert r.details["files_matched"] == 2 and r.details["lines_matched"] == 3


def test_matching_file_is_recorded_whole_with_shown_anchors(ws: Workspace, root: Path) -> None:
    _write(root, "a.py", "one\ntwo\nthree\n")
    _write(root, "b.py", "nothing\n")
    ws.call("search", {"pattern": "two", "path": "*.py", "context": 1})
    view = ws.default_session.views[_real(root, "a.py")]
    assert view.whole is True
    assert view_hashes(view) == {1: line_hash("one"), 2: line_hash("two"), 3: line_hash("three")}
    assert not ws.default_session.has_read(_real(root, "b.py"))


def test_folder_path_searches_every_file_below_it(ws: Workspace, root: Path) -> None:
    _write(root, "pkg/a.txt", "k\n")
    _write(root, "pkg/sub/b.txt", "k\n")
    _write(root, "other.txt", "k\n")
    r = ws.call("search", {"pattern": "k", "path": "pkg"})
    assert r.details["files_matched"] == 2 and "other.txt" not in r.text


def test_pattern_is_matched_against_each_line(ws: Workspace, root: Path) -> None:
    # \s can match a newline in a whole buffer; per line it cannot.
    _write(root, "a.txt", "foo\nbar\nfoo bar\n")
    r = ws.call("search", {"pattern": r"foo\s+bar", "path": "a.txt"})
    assert r.details["lines_matched"] == 1
    assert f"*3:{line_hash('foo bar')}|foo bar" in r.text
    anchored = ws.call("search", {"pattern": "^bar$", "path": "a.txt"})
    assert anchored.details["lines_matched"] == 1


def test_empty_line_after_final_newline_is_not_a_line(ws: Workspace, root: Path) -> None:
    _write(root, "a.txt", "x\n\n")
    r = ws.call("search", {"pattern": "^$", "path": "a.txt"})
    assert r.details["lines_matched"] == 1
    assert r.text.splitlines()[1] == f"*2:{line_hash('')}|"


def _reference(pattern: str, text: str) -> list[int]:
    rx = re.compile(pattern)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [i for i, line in enumerate(lines) if rx.search(line)]


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet="ab \n\ré", max_size=60),
    pattern=st.sampled_from(
        ["a", "ab", r"a\s*b", r"b\s", "^a", "a$", "^$", r"\s", "a+b?", r"[^a]", "", r"\W", "é$"]
    ),
)
def test_buffer_scan_equals_line_by_line_reference(text: str, pattern: str) -> None:
    hits = search_mod._FileHits()
    search_mod.match_lines(re.compile(pattern, re.MULTILINE), text, 0, hits, keep=10_000)
    assert hits.hits == _reference(pattern, text)
    assert hits.count == len(hits.hits)


def test_binary_files_are_skipped_and_counted(ws: Workspace, root: Path) -> None:
    (root / "b.bin").write_bytes(b"needle\x00\x01")
    _write(root, "t.txt", "needle\n")
    r = ws.call("search", {"pattern": "needle", "path": "*"})
    assert r.details["files_matched"] == 1
    assert "[1 binary file(s) skipped.]" in r.text


def test_files_over_2_mib_are_skipped_and_counted(ws: Workspace, root: Path) -> None:
    (root / "big.txt").write_bytes(b"needle\n" + b"x" * (2 * 1024 * 1024))
    _write(root, "small.txt", "needle\n")
    r = ws.call("search", {"pattern": "needle", "path": "*.txt"})
    assert r.details["files_matched"] == 1 and r.details["skipped_too_large"] == 1
    assert "[1 file(s) over 2 MiB skipped (big.txt)" in r.text


def test_single_large_file_named_alone_is_searched_in_chunks(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [f"row {i} " + "z" * (i % 37) for i in range(1, 300_001)]
    lines[149_999] = "the needle is here"
    lines[299_999] = "needle at the end"
    (root / "big.log").write_text("\n".join(lines) + "\n")
    assert (root / "big.log").stat().st_size > 2 * 1024 * 1024
    monkeypatch.setattr(search_mod, "CHUNK_BYTES", 4096)  # many chunks, lines across edges
    r = ws.call("search", {"pattern": "needle", "path": "big.log", "context": 1})
    assert r.ok
    assert f"*150000:{line_hash('the needle is here')}|the needle is here" in r.text
    assert f" 149999:{line_hash(lines[149_998])}|{lines[149_998]}" in r.text
    assert f"*300000:{line_hash('needle at the end')}|needle at the end" in r.text
    assert ws.default_session.views[_real(root, "big.log")].whole is True


def test_read_error_for_large_file_points_to_a_search_that_works(ws: Workspace, root: Path) -> None:
    (root / "huge.txt").write_bytes(b"abc\n" * (600 * 1024))
    read = ws.call("read", {"path": "huge.txt"})
    assert not read.ok and "search" in read.text
    r = ws.call("search", {"pattern": "abc", "path": "huge.txt"})
    assert r.ok and r.details["lines_matched"] == 600 * 1024


def test_at_most_100_matching_files_with_overflow_stated(ws: Workspace, root: Path) -> None:
    for i in range(103):
        _write(root, f"d/f{i:03d}.txt", "hit\n")
    r = ws.call("search", {"pattern": "hit", "path": "d/*.txt"})
    assert r.details["files_shown"] == 100 and r.details["files_matched"] == 103
    assert "[3 more matching file(s) not shown" in r.text
    assert "d/f099.txt" in r.text and "d/f100.txt" not in r.text
    assert not ws.default_session.has_read(_real(root, "d/f100.txt"))


def test_at_most_1000_match_lines_with_overflow_stated(ws: Workspace, root: Path) -> None:
    _write(root, "a.txt", "hit\n" * 700)
    _write(root, "b.txt", "hit\n" * 700)
    r = ws.call("search", {"pattern": "hit", "path": "*.txt"})
    assert r.details["lines_shown"] == 1000 and r.details["lines_matched"] == 1400
    assert sum(1 for row in r.text.splitlines() if row.startswith("*")) == 1000
    assert "b.txt (700 matching lines, first 300 shown)" in r.text
    assert "[400 more matching line(s) not shown" in r.text


def test_spec_caps_are_the_module_constants() -> None:
    assert search_mod.MAX_FILES == 100 and search_mod.MAX_MATCH_LINES == 1000
    assert search_mod.MAX_FILE_BYTES == 2 * 1024 * 1024


def test_walk_bounds_apply_and_are_stated(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(20):
        _write(root, f"d{i}/x.txt", "hit\n")
    monkeypatch.setattr(walk_mod, "MAX_ENTRIES", 8)
    r = ws.call("search", {"pattern": "hit", "path": "**/*.txt"})
    assert "Walk stopped after visiting 8 entries" in r.text
    assert r.details["stopped"] == "entries"


def test_time_bound_covers_the_scan(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(3):
        _write(root, f"x{i}.txt", "hit\n")
    monkeypatch.setattr(walk_mod, "MAX_SECONDS", 0.0)
    r = ws.call("search", {"pattern": "hit", "path": "x0.txt"})
    assert r.details["stopped"] == "time" and "time limit" in r.text


def test_wide_matching_line_is_cut_and_recorded(ws: Workspace, root: Path) -> None:
    wide = "needle" + "q" * 3000
    _write(root, "w.txt", wide + "\n")
    r = ws.call("search", {"pattern": "needle", "path": "w.txt"})
    assert f"*1:{line_hash(wide)}|{wide[:2000]}… [+1006 chars]" in r.text
    assert ws.default_session.views[_real(root, "w.txt")].cut == {1}


def test_invalid_regex_is_an_error_with_the_regex_error_and_a_hint(
    ws: Workspace, root: Path
) -> None:
    _write(root, "a.txt", "x\n")
    r = ws.call("search", {"pattern": "foo(", "path": "a.txt"})
    assert not r.ok
    assert "invalid regular expression 'foo('" in r.text
    assert "missing ), unterminated subpattern at position 3" in r.text
    assert "escape" in r.text
    assert r.details["error"] == "bad_regex"


def test_incompatible_regex_flags_are_a_bad_regex_error_not_an_internal_one(
    ws: Workspace, root: Path
) -> None:
    """re's flag check raises ValueError, not re.error, for (?a) with (?u)."""
    _write(root, "a.txt", "x\n")
    r = ws.call("search", {"pattern": "(?a)(?u)x", "path": "a.txt"})
    assert not r.ok and r.details["error"] == "bad_regex"
    assert "ASCII and UNICODE flags are incompatible" in r.text
    g = ws.call("ws_grep", {"pattern": "(?a)(?u)x"})  # searched as a literal, and said so
    assert g.ok and "not a valid regular expression" in g.text


def test_no_match_says_how_many_files_were_searched(ws: Workspace, root: Path) -> None:
    _write(root, "a.txt", "x\n")
    _write(root, "b.txt", "y\n")
    r = ws.call("search", {"pattern": "zzz", "path": "*.txt"})
    assert r.ok and r.text == "No matches for 'zzz' in 2 file(s) searched."


def test_missing_single_file_is_an_error(ws: Workspace) -> None:
    r = ws.call("search", {"pattern": "x", "path": "nope.txt"})
    assert not r.ok and "does not exist" in r.text


def test_glob_outside_root_is_refused(ws: Workspace) -> None:
    r = ws.call("search", {"pattern": "x", "path": "../**/*.py"})
    assert not r.ok and "'..' segment" in r.text


def test_vcs_folders_are_not_searched(ws: Workspace, root: Path) -> None:
    _write(root, ".git/config", "hit\n")
    _write(root, "a.txt", "hit\n")
    r = ws.call("search", {"pattern": "hit", "path": "**"})
    assert r.details["files_matched"] == 1 and ".git" not in r.text


def test_literal_path_with_glob_characters_is_searched_as_a_file(ws: Workspace, root: Path) -> None:
    _write(root, "a[1].txt", "hit\n")
    r = ws.call("search", {"pattern": "hit", "path": "a[1].txt"})
    assert r.details["files_matched"] == 1


def test_symlinked_match_records_view_under_real_path(ws: Workspace, root: Path) -> None:
    _write(root, "t.txt", "hit\n")
    (root / "l.txt").symlink_to("t.txt")
    ws.call("search", {"pattern": "hit", "path": "l.txt"})
    assert ws.default_session.has_read(_real(root, "t.txt"))


def test_folder_path_with_glob_characters_is_searched_literally(ws: Workspace, root: Path) -> None:
    _write(root, "a[1]/x.txt", "hit\n")
    _write(root, "a1/y.txt", "hit\n")
    r = ws.call("search", {"pattern": "hit", "path": "a[1]"})
    assert r.details["files_matched"] == 1 and "a[1]/x.txt" in r.text


def test_edit_after_search_needs_no_read(ws: Workspace, root: Path) -> None:
    _write(root, "a.txt", "one\nneedle\nthree\n")
    unread = ws.call(
        "edit", {"input": f"@@ a.txt\n= 2:{line_hash('needle')}..2:{line_hash('needle')}\n~pin\n"}
    )
    assert not unread.ok  # the edit tool's read-before-edit rule is live
    ws.call("search", {"pattern": "needle", "path": "*.txt"})
    r = ws.call(
        "edit", {"input": f"@@ a.txt\n= 2:{line_hash('needle')}..2:{line_hash('needle')}\n~pin\n"}
    )
    assert r.ok, r.text
    assert (root / "a.txt").read_text() == "one\npin\nthree\n"


def test_fifo_is_refused_or_skipped_without_blocking(ws: Workspace, root: Path) -> None:
    os.mkfifo(root / "pipe")
    _write(root, "a.txt", "hit\n")
    named = ws.call("search", {"pattern": "hit", "path": "pipe"})
    assert not named.ok and "not a regular file" in named.text
    walked = ws.call("search", {"pattern": "hit", "path": "**"})
    assert walked.ok and walked.details["files_matched"] == 1


def test_context_is_clamped_to_the_stated_maximum(ws: Workspace, root: Path) -> None:
    _write(root, "a.txt", "".join(f"l{i}\n" for i in range(200)) + "hit\n" + "tail\n" * 200)
    r = ws.call("search", {"pattern": "^hit$", "path": "a.txt", "context": 500})
    assert "[context clamped to 50 lines.]" in r.text
    rows = [row for row in r.text.splitlines()[1:] if row[:1] in ("*", " ")]
    assert len(rows) == 101


def test_search_after_a_partial_read_keeps_the_read_anchors(ws: Workspace, root: Path) -> None:
    _write(root, "a.txt", "a\nb\nc\nd\n")
    ws.call("read", {"path": "a.txt", "start": 1, "end": 1})
    ws.call("search", {"pattern": "d", "path": "a.txt"})
    view = ws.default_session.views[_real(root, "a.txt")]
    assert view_hashes(view) == {1: line_hash("a"), 4: line_hash("d")} and view.whole is True
