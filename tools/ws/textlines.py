"""Text as lines for the match ladder and its appliers: offsets, indentation, search text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# Columns a tab counts for when indentation levels are compared (only their order matters).
INDENT_TAB_WIDTH = 4


@dataclass(frozen=True)
class Lines:
    """The file split into lines: ``text[i]`` without its terminator, and offsets."""

    text: list[str]  # line content without "\n" and without a final "\r"
    starts: list[int]  # offset of each line's first character
    ends: list[int]  # offset just past each line's content (before "\r\n" / "\n")
    term_ends: list[int]  # offset just past each line's terminator
    crlf: list[bool]


def split_lines(text: str) -> Lines:
    """``text`` as lines with their offsets (a final line without a newline counts)."""
    content: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    term_ends: list[int] = []
    crlf: list[bool] = []
    pos = 0
    n = len(text)
    while pos < n:
        nl = text.find("\n", pos)
        stop = n if nl < 0 else nl
        cr = stop > pos and text[stop - 1] == "\r" and nl >= 0
        end = stop - 1 if cr else stop
        content.append(text[pos:end])
        starts.append(pos)
        ends.append(end)
        term_ends.append(n if nl < 0 else nl + 1)
        crlf.append(cr)
        pos = n if nl < 0 else nl + 1
    return Lines(content, starts, ends, term_ends, crlf)


def leading_ws(line: str) -> str:
    """The spaces and tabs a line starts with."""
    return line[: len(line) - len(line.lstrip(" \t"))]


def common_indent(lines: Sequence[str]) -> str:
    """The longest leading whitespace every non-blank line shares."""
    indents = [leading_ws(ln) for ln in lines if ln.strip()]
    if not indents:
        return ""
    prefix = indents[0]
    for ind in indents[1:]:
        i = 0
        while i < min(len(prefix), len(ind)) and prefix[i] == ind[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


def dedent(lines: Sequence[str]) -> tuple[list[str], str]:
    """The lines without their common indentation (and trailing blanks; blank lines emptied),
    and that indentation."""
    common = common_indent(lines)
    return [ln.rstrip()[len(common) :] if ln.strip() else "" for ln in lines], common


def search_lines(old: str) -> tuple[list[str], bool]:
    """The search text as lines (``\\r`` dropped) and whether it ended with a newline."""
    ends_nl = old.endswith("\n")
    body = old[:-1] if ends_nl else old
    return [ln[:-1] if ln.endswith("\r") else ln for ln in body.split("\n")], ends_nl


def indent_width(indent: str) -> int:
    """The columns an indentation spans, a tab counting ``INDENT_TAB_WIDTH``."""
    return len(indent.expandtabs(INDENT_TAB_WIDTH))
