"""Line splitting as anchors count lines; what a change keeps (the BOM, each line's ending);
the file-change shape renderers rely on."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kli.tools.core.changes import MAX_DIFF_TEXT, count_changes, file_change, language_of
from kli.tools.core.textfile import (
    BOM,
    NotText,
    break_at,
    decode,
    encode,
    ending_near,
    join_lines,
    keep_bom,
    keep_bom_lines,
    split_lines,
    with_breaks,
)
from kli.tools.core.truncate import head_tail


@pytest.mark.parametrize(
    ("text", "lines"),
    [("", []), ("a", ["a"]), ("a\n", ["a"]), ("a\nb\n", ["a", "b"]), ("a\n\n", ["a", ""]),
     ("a\r\nb\r\n", ["a\r", "b\r"]), ("\n", [""])],
)
def test_split_lines_counts_like_anchors(text: str, lines: list[str]) -> None:
    assert split_lines(text) == lines


def test_join_lines_ends_with_newline() -> None:
    assert join_lines(["a", "b"]) == "a\nb\n"
    assert join_lines([]) == ""


def test_binary_is_not_text_and_bad_utf8_round_trips() -> None:
    with pytest.raises(NotText):
        decode(b"abc\x00def")
    raw = b"caf\xe9\n"
    assert encode(decode(raw)) == raw


def test_file_change_counts_and_carries_texts() -> None:
    change = file_change("a.py", "x = 1\ny = 2\n", "x = 1\ny = 3\nz = 4\n", "written")
    assert (change["added"], change["removed"]) == (2, 1)
    assert change["language"] == "python"
    assert change["before"].startswith("x = 1") and not change["too_large"]
    json.dumps(change)


def test_file_change_drops_huge_texts_but_keeps_counts() -> None:
    big = "x\n" * (MAX_DIFF_TEXT // 2 + 1)
    change = file_change("big.txt", None, big, "written")
    assert change["too_large"] and change["after"] is None and change["added"] == MAX_DIFF_TEXT // 2 + 1


def test_file_change_refuses_unknown_status() -> None:
    with pytest.raises(ValueError):
        file_change("a", "", "", "done")


def test_language_of_lisp_and_unknown() -> None:
    assert language_of("x.LISP") == "commonlisp"
    assert language_of("Makefile") == "text"


def test_count_changes_of_identical_texts_is_zero() -> None:
    assert count_changes("a\nb\n", "a\nb\n") == (0, 0)


def test_head_tail_keeps_both_ends_and_counts_elided() -> None:
    text = "H" * 100 + "M" * 1000 + "T" * 100
    cut, elided = head_tail(text, 300, note="full text in x")
    assert cut.startswith("H" * 100) and cut.endswith("T" * 100)
    assert elided == len(text) - 300
    assert f"{elided} characters elided of {len(text)}; full text in x" in cut
    assert head_tail("short", 300) == ("short", 0)


# -- what a change keeps: the BOM and each line's ending ---------------------------------------
def test_a_new_line_takes_the_ending_of_the_line_it_is_placed_by() -> None:
    lines = ["a", "b", "c\r", "d\r"]
    assert [ending_near(lines, i) for i in range(4)] == ["", "", "\r", "\r"]
    # the last line of a text without a final newline has no ending: its neighbour's counts
    assert ending_near(["a\r", "b"], 1, final_newline=False) == "\r"
    assert ending_near([], 0) == ""
    assert ending_near(["only"], 0, final_newline=False) == ""


def test_a_break_inside_a_line_is_that_lines_break() -> None:
    text = "a\nb\r\nc"
    assert break_at(text, 0) == "\n"
    assert break_at(text, 3) == "\r\n"
    assert break_at(text, 6) == "\r\n"  # the last line has none: the one before it
    assert with_breaks("x\ny\r\nz", "\r\n") == "x\r\ny\r\nz"
    assert with_breaks("x\ny", "\n") == "x\ny"


def test_the_bom_goes_back_to_byte_0() -> None:
    before = BOM + "a\nb\n"
    assert keep_bom(before, "top\n" + before) == BOM + "top\na\nb\n"
    assert keep_bom(before, "new\nb\n") == BOM + "new\nb\n"
    assert keep_bom(before, before) == before
    assert keep_bom("a\n", "top\na\n") == "top\na\n"
    assert keep_bom(before, "") == ""
    assert keep_bom_lines([BOM + "a"], ["x", BOM + "a"]) == [BOM + "x", "a"]


@given(st.lists(st.sampled_from(["", "x", "y", BOM + "x"]), max_size=6),
       st.lists(st.sampled_from(["", "x", "z"]), max_size=6))
def test_keep_bom_starts_with_one_bom_and_otherwise_keeps_the_text(body: list[str], extra: list[str]) -> None:
    before = BOM + "first\n" + "\n".join(body)
    after = "\n".join([*extra, BOM + "first", *body])
    kept = keep_bom(before, after)
    assert kept.startswith(BOM)
    assert kept.replace(BOM, "") == after.replace(BOM, "")
    assert kept.count(BOM) == after.count(BOM)  # moved, never doubled
