"""ws_edit and ws_patch count their changed lines from what they replaced: the spans of the
edit's own plan, never a diff of the whole file; the counts equal the whole-file count."""

from __future__ import annotations

import difflib
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kli.tools import Workspace
from kli.tools.core import changes
from kli.tools.core.changes import count_changes, count_replaced, edited_lines
from kli.tools.ws import ws_edit, ws_patch

# 50,000 lines of 50 repeated ones, with one unique line in the middle.
BIG = "".join(
    f"line {i % 50} of a large file\n" if i != 25_000 else "the unique line\n"
    for i in range(50_000)
)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size (characters, both texts) of every ``count_changes`` call."""
    sizes: list[int] = []
    real = changes.count_changes

    def spy(before: str, after: str) -> tuple[int, int]:
        sizes.append(len(before) + len(after))
        return real(before, after)

    for module in (changes, ws_edit, ws_patch):
        monkeypatch.setattr(module, "count_changes", spy, raising=False)
    return sizes


def test_a_one_line_ws_edit_of_a_50000_line_file_counts_only_its_span(
    ws: Workspace, root: Path, counted: list[int]
) -> None:
    (root / "big.txt").write_text(BIG)
    r = ws.call("ws_edit", {"path": "big.txt", "old_str": "the unique line\nline 1",
                            "new_str": "the changed line\nline 1"})
    assert r.ok, r.text
    change = r.details["files"][0]
    assert (change["added"], change["removed"]) == (1, 1)
    assert counted and max(counted) < 200  # the span's lines, not the file's 1.4 MB


def test_a_replace_all_counts_each_replaced_span(
    ws: Workspace, root: Path, counted: list[int]
) -> None:
    (root / "big.txt").write_text(BIG)
    r = ws.call("ws_edit", {"path": "big.txt", "old_str": "line 7 of", "new_str": "line 7\nof",
                            "replace_all": True})
    assert r.ok, r.text
    change = r.details["files"][0]
    assert (change["added"], change["removed"]) == (2000, 1000)
    assert max(counted) < 200


def test_a_ws_edit_refusal_counts_nothing(ws: Workspace, root: Path, counted: list[int]) -> None:
    (root / "big.txt").write_text(BIG)
    r = ws.call("ws_edit", {"path": "big.txt", "old_str": "line 7 of", "new_str": "x"})
    assert r.details["error"] == "ambiguous_exact"
    change = r.details["files"][0]
    assert (change["status"], change["added"], change["removed"]) == ("rejected", 0, 0)
    assert counted == []


def test_a_one_hunk_ws_patch_of_a_50000_line_file_counts_only_its_hunk(
    ws: Workspace, root: Path, counted: list[int]
) -> None:
    (root / "big.txt").write_text(BIG)
    patch = (
        "--- a/big.txt\n+++ b/big.txt\n@@ -25001,3 +25001,3 @@\n"
        " line 0 of a large file\n-line 1 of a large file\n+line one\n line 2 of a large file\n"
    )
    r = ws.call("ws_patch", {"patch": patch})
    assert r.ok, r.text
    change = r.details["files"][0]
    assert (change["added"], change["removed"]) == (1, 1)
    assert max(counted) < 200
    assert (root / "big.txt").read_text().count("line one\n") == 1


def test_a_failed_ws_patch_counts_nothing(ws: Workspace, root: Path, counted: list[int]) -> None:
    (root / "big.txt").write_text(BIG)
    patch = "--- a/big.txt\n+++ b/big.txt\n@@ -3,1 +3,1 @@\n-not in the file\n+x\n"
    r = ws.call("ws_patch", {"patch": patch})
    assert r.details["error"] == "hunk_failed"
    assert [(c["added"], c["removed"]) for c in r.details["files"]] == [(0, 0)]
    assert counted == []


def test_edited_lines_takes_whole_lines_and_joins_edits_on_one_line() -> None:
    before = "a b\nc d\ne\n"
    runs = edited_lines(before, [(0, 1, "A"), (2, 3, "B"), (6, 7, "D")])
    assert runs == [("a b\n", "A B\n"), ("c d\n", "c D\n")]
    assert count_replaced(runs) == (2, 2)
    # An edit that ends at a line's start runs to that line's end: the rest starts a line.
    joined = edited_lines(before, [(0, 4, "z")])
    assert joined == [("a b\nc d\n", "zc d\n")] and count_replaced(joined) == (1, 2)
    assert count_replaced([([""], [])]) == (0, 1)  # a blank line removed is a line removed


LINES = ["x = 1", "", "    y", "\ty", "}", "return x", "a\r", "b"]


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(
    st.lists(st.sampled_from(LINES), min_size=1, max_size=30),
    st.integers(0, 10_000),
    st.integers(1, 40),
    st.text(alphabet="xy \n}", max_size=25),
    st.booleans(),
    st.booleans(),
)
def test_ws_edit_counts_equal_the_whole_file_count_for_one_span(
    lines: list[str], at: int, size: int, new: str, final_newline: bool, replace_all: bool
) -> None:
    text = "\n".join(lines) + ("\n" if final_newline else "")
    at %= max(len(text), 1)
    old = text[at : at + size]
    if not old.strip() or (text.count(old) != 1 and not replace_all):
        return
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "f.txt").write_bytes(text.encode())
        r = Workspace(tmp).call("ws_edit", {"path": "f.txt", "old_str": old, "new_str": new,
                                                 "replace_all": replace_all})
        if not r.ok:
            return
        after = Path(tmp, "f.txt").read_bytes().decode()
    change = r.details["files"][0]
    added, removed = count_changes(text, after)
    if r.details["replacements"] == 1:
        assert (change["added"], change["removed"]) == (added, removed), (text, after)
    else:  # each span counted on its own: never fewer, and the same growth
        assert change["added"] >= added and change["removed"] >= removed, (text, after)
        assert change["added"] - change["removed"] == added - removed, (text, after)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(LINES), min_size=1, max_size=40),
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 3),
                       st.lists(st.sampled_from(["new", "", "}", "x = 2"]), max_size=3)),
             min_size=1, max_size=4),
)
def test_ws_patch_counts_equal_the_whole_file_count_for_one_hunk(
    lines: list[str], edits: list[tuple[int, int, list[str]]]
) -> None:
    text = "\n".join(lines) + "\n"
    edited = list(lines)
    for at, drop, put in edits:
        at %= len(edited) + 1
        edited[at : at + drop] = put
    after_wanted = "\n".join(edited) + ("\n" if edited else "")
    diff = list(difflib.unified_diff(text.splitlines(True), after_wanted.splitlines(True),
                                     "a/f.txt", "b/f.txt"))
    if not diff or not edited:
        return
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "f.txt").write_bytes(text.encode())
        r = Workspace(tmp).call("ws_patch", {"patch": "".join(diff)})
        if not r.ok:
            return
        after = Path(tmp, "f.txt").read_bytes().decode()
    change = r.details["files"][0]
    added, removed = count_changes(text, after)
    if len(r.details["hunks"]) == 1:
        assert (change["added"], change["removed"]) == (added, removed), (text, after)
    else:  # each hunk's run counted on its own: never fewer, and the same growth
        assert change["added"] >= added and change["removed"] >= removed, (text, after)
        assert change["added"] - change["removed"] == added - removed, (text, after)



def test_an_exact_ws_edit_match_never_splits_the_file_into_lines(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kli.tools.ws import ladder

    splits: list[int] = []
    real = ladder.split_lines
    monkeypatch.setattr(ladder, "split_lines", lambda text: splits.append(len(text)) or real(text))
    (root / "big.txt").write_text(BIG)
    r = ws.call("ws_edit", {"path": "big.txt", "old_str": "the unique line\nline 1",
                            "new_str": "the changed line\nline 1"})
    assert r.ok and r.details["spans"] == [[25_001, 25_002]]
    assert splits == []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab\n\r ", max_size=40), st.text(alphabet="ab\n ", min_size=1, max_size=4))
def test_exact_matches_are_numbered_by_the_lines_before_them(text: str, old: str) -> None:
    from kli.tools.ws import ladder

    match = ladder.seek(text, old)
    if match.rung != ladder.EXACT or match.whole_lines:
        return
    for span in match.spans:
        assert span.first_line == text.count("\n", 0, span.start) + 1
        assert span.last_line == text.count("\n", 0, max(span.end - 1, span.start)) + 1
