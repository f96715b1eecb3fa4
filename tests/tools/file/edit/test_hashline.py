"""The patch grammar parser (pure): text → sections of ops. Error cases are fixture folders
(tests/fixtures/hashline/0NN_error_*); these tests pin the parsed structure."""

from __future__ import annotations

import pytest

from kli.tools.file.hashline import (
    APPEND,
    DELETE,
    INSERT_AFTER,
    INSERT_BEFORE,
    PREPEND,
    REPLACE,
    Anchor,
    PatchSyntaxError,
    parse,
)


def test_every_op_kind_parses_with_its_anchors_and_payload() -> None:
    patch = parse(
        "@@ a.py\n+ 1:aa\n~x\n+\n~y\n< 2:bb\n~z\n<\n~w\n- 3:cc..4:dd\n= 5:ee..6:ff\n~v\n= 7:0a..7:0a\n"
    )
    (section,) = patch.sections
    assert section.path == "a.py"
    got = [(op.kind, op.start, op.end, op.payload) for op in section.ops]
    assert got == [
        (INSERT_AFTER, Anchor(1, "aa"), Anchor(1, "aa"), ("x",)),
        (APPEND, None, None, ("y",)),
        (INSERT_BEFORE, Anchor(2, "bb"), Anchor(2, "bb"), ("z",)),
        (PREPEND, None, None, ("w",)),
        (DELETE, Anchor(3, "cc"), Anchor(4, "dd"), ()),
        (REPLACE, Anchor(5, "ee"), Anchor(6, "ff"), ("v",)),
        (REPLACE, Anchor(7, "0a"), Anchor(7, "0a"), ()),
    ]
    assert [op.patch_line for op in section.ops] == [2, 4, 6, 8, 10, 11, 13]


def test_single_anchor_range_is_the_one_line_range() -> None:
    short = parse("@@ a\n- 5:ab\n").sections[0].ops[0]
    full = parse("@@ a\n- 5:ab..5:ab\n").sections[0].ops[0]
    assert (short.kind, short.start, short.end) == (full.kind, full.start, full.end)
    assert short.marker == "- 5:ab..5:ab"


def test_payload_is_everything_after_the_tilde() -> None:
    op = parse("@@ a\n+\n~\n~  two spaces  \n~~\n~\tx\n").sections[0].ops[0]
    assert op.payload == ("", "  two spaces  ", "~", "\tx")


def test_several_sections_keep_their_order_and_paths() -> None:
    patch = parse("@@ a.txt\n+\n~1\n@@  dir/b c.txt  \n<\n~2\n")
    assert [s.path for s in patch.sections] == ["a.txt", "dir/b c.txt"]


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("@@ a\n = 1:aa\n", 2, "indented by mistake"),
        ("@@ a\n= 1:aa\n ~x\n", 3, "payload line indented by mistake"),
        ("@@ a\n= 1:aa\nx\n", 3, "payload line without '~'"),
        ("@@ a\n- 1:aa\nx\n", 3, "expected '@@ PATH', an op"),
        ("@@ a\n= 1\n", 2, "has no hash"),
        ("@@ a\n= 1:a\n", 2, "expected an anchor LINE:HH"),
        ("@@ a\n= 0:aa\n", 2, "names line 0"),
        ("@@ a\n=\n", 2, "needs a line range"),
        ("@@ a\n++ 1:aa\n~x\n", 2, "unknown marker"),
        ("@@\n+\n~x\n", 1, "without a path"),
        ("@@ a\n+\n~x\n@@ b\n", 4, "has no ops"),
    ],
)
def test_errors_name_the_patch_line_and_what_was_expected(
    text: str, line: int, needle: str
) -> None:
    with pytest.raises(PatchSyntaxError) as info:
        parse(text)
    assert info.value.line == line
    assert str(info.value).startswith(f"patch line {line}: ")
    assert needle in str(info.value)
