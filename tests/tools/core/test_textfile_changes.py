"""Line splitting as anchors count lines; the file-change shape renderers rely on."""

from __future__ import annotations

import json

import pytest

from kli.tools.core.changes import MAX_DIFF_TEXT, count_changes, file_change, language_of
from kli.tools.core.textfile import NotText, decode, encode, join_lines, split_lines
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
