"""What the language scanners share: the scan result, character-level fixes, and the
indentation rule that decides where a missing closer goes.

A repair never adds or removes a line break, so line numbers are the same in the patched text
and in the repaired candidate; a fix's line is where it changed the text.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Opener:
    offset: int
    char: str
    closer: str


@dataclass(frozen=True)
class Scan:
    """One pass of a language scanner over a text.

    ``unclosed``: openers never closed, outermost first. ``stray``: offsets of closers that
    match no opener. ``early``: ``(offset, opener)`` — an opener that a later, deeper closer
    implies was left open; its closer belongs just before ``offset``. ``unterminated``: the
    offset and kind of a string / block comment that never ends (no repair guesses its end).
    ``spans``: ``[start, end)`` of strings and block comments that cross a line break;
    ``comments``: offsets where line comments start; ``forms``: top-level forms seen.
    """

    unclosed: tuple[Opener, ...] = ()
    stray: tuple[int, ...] = ()
    early: tuple[tuple[int, Opener], ...] = ()
    unterminated: tuple[int, str] | None = None
    spans: tuple[tuple[int, int], ...] = ()
    comments: tuple[int, ...] = ()
    forms: int = 0

    @property
    def balanced(self) -> bool:
        return not (self.unclosed or self.stray or self.early or self.unterminated)


@dataclass(frozen=True, order=True)
class Fix:
    """Insert ``insert`` at ``offset`` of the patched text, or remove ``remove`` characters
    there. ``seq`` orders fixes at one offset (inner closers first)."""

    offset: int
    seq: int = 0
    insert: str = ""
    remove: int = 0
    note: str = field(default="", compare=False)


class LineIndex:
    """Offsets ↔ 1-based line numbers of one text."""

    def __init__(self, text: str) -> None:
        self.text = text
        starts = [0]
        pos = text.find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = text.find("\n", pos + 1)
        self.starts = starts

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def start(self, line: int) -> int:
        return self.starts[line - 1]

    def end(self, line: int) -> int:
        """Offset of the line's end, before its ``\\n`` (and a ``\\r`` before that)."""
        if line < len(self.starts):
            end = self.starts[line] - 1
        else:
            end = len(self.text)
        if end > self.start(line) and self.text[end - 1] == "\r":
            end -= 1
        return end

    @property
    def count(self) -> int:
        n = len(self.starts)
        return n - 1 if self.text.endswith("\n") else n


def describe(text: str, offset: int) -> str:
    index = LineIndex(text)
    line = index.line_of(offset)
    return f"line {line}, column {offset - index.start(line) + 1}"


class Layout:
    """Which lines hold code, where each line's code ends, and each line's indentation —
    what the indentation rule needs, derived from a scan."""

    def __init__(self, text: str, scan: Scan) -> None:
        self.index = LineIndex(text)
        self.text = text
        self._spans = sorted(scan.spans)
        self._span_starts = [s for s, _ in self._spans]
        self._comments: dict[int, int] = {}
        for c in scan.comments:
            self._comments.setdefault(self.index.line_of(c), c)

    def _inside_span(self, offset: int) -> bool:
        i = bisect.bisect_right(self._span_starts, offset) - 1
        return i >= 0 and self._spans[i][0] < offset < self._spans[i][1]

    def code_end(self, line: int) -> int | None:
        """Offset just after the line's last code character (before a comment and trailing
        blanks); None when the line holds no code or ends inside a string."""
        start, end = self.index.start(line), self.index.end(line)
        if self._inside_span(end):
            return None
        cut = self._comments.get(line, end)
        stripped = self.text[start:cut].rstrip()
        if not stripped.strip():
            return None
        return start + len(stripped)

    def starts_code(self, line: int) -> bool:
        """True when the line begins outside any string and holds code."""
        start = self.index.start(line)
        if self._inside_span(start):
            return False
        cut = self._comments.get(line, self.index.end(line))
        return self.text[start:cut].strip() != ""

    def indent(self, line: int) -> int:
        start, end = self.index.start(line), self.index.end(line)
        body = self.text[start:end]
        return len(body) - len(body.lstrip(" \t"))


def close_by_indentation(layout: Layout, opener: Opener, base: int) -> int:
    """Where the missing closer of ``opener`` goes: at the end of the code of the last line
    before the first later code line indented at most ``base`` (or of the file's last code
    line). ``base`` is the column the language measures a form by."""
    first = layout.index.line_of(opener.offset)
    last = layout.index.count
    stop = last + 1
    for line in range(first + 1, last + 1):
        if layout.starts_code(line) and layout.indent(line) <= base:
            stop = line
            break
    for line in range(stop - 1, first - 1, -1):
        end = layout.code_end(line)
        if end is not None and end > opener.offset:
            return end
    return opener.offset + 1


def apply_fixes(text: str, fixes: list[Fix]) -> tuple[str, list[dict[str, Any]], set[int]]:
    """Apply ``fixes`` to ``text``. Returns the new text, the marks (character ranges of the new
    text with a note; a removal is an empty range) and the 1-based lines changed."""
    index = LineIndex(text)
    out: list[str] = []
    marks: list[dict[str, Any]] = []
    lines: set[int] = set()
    cursor = 0
    length = 0
    for fix in sorted(fixes):
        if fix.offset < cursor:
            continue  # two fixes claiming one character: the first wins
        chunk = text[cursor : fix.offset]
        out.append(chunk)
        length += len(chunk)
        line = index.line_of(fix.offset)
        column = fix.offset - index.start(line) + 1
        lines.add(line)
        if fix.insert:
            out.append(fix.insert)
            marks.append(
                {
                    "from": length,
                    "to": length + len(fix.insert),
                    "line": line,
                    "column": column,
                    "note": fix.note or f"inserted {fix.insert!r}",
                }
            )
            length += len(fix.insert)
        if fix.remove:
            removed = text[fix.offset : fix.offset + fix.remove]
            marks.append(
                {
                    "from": length,
                    "to": length,
                    "line": line,
                    "column": column,
                    "note": fix.note or f"removed {removed!r}",
                }
            )
        cursor = fix.offset + fix.remove
    out.append(text[cursor:])
    return "".join(out), marks, lines


def standard_fixes(
    text: str,
    scan: Scan,
    base_of: Callable[[Layout, Opener], int],
    place: Callable[[Layout, Opener], int | None] | None = None,
) -> list[Fix] | None:
    """The repair both languages use: remove stray closers, close ``early`` openers just before
    the closer that implied them, close each ``unclosed`` opener by indentation (innermost
    first). ``base_of(layout, opener)`` gives the indentation base; ``place`` may name a
    language-specific position first. None when unrepairable."""
    if scan.unterminated is not None:
        return None
    fixes: list[Fix] = []
    seq = 0
    for offset in scan.stray:
        fixes.append(Fix(offset, seq, remove=1, note=f"removed unmatched {text[offset]!r}"))
        seq += 1
    for offset, opener in scan.early:
        fixes.append(
            Fix(
                offset,
                seq,
                insert=opener.closer,
                note=f"inserted {opener.closer!r} to close the {opener.char!r} at "
                f"{describe(text, opener.offset)}",
            )
        )
        seq += 1
    if scan.unclosed:
        layout = Layout(text, scan)
        for opener in reversed(scan.unclosed):
            at = place(layout, opener) if place is not None else None
            if at is None:
                at = close_by_indentation(layout, opener, base_of(layout, opener))
            fixes.append(
                Fix(
                    at,
                    seq,
                    insert=opener.closer,
                    note=f"inserted {opener.closer!r} to close the {opener.char!r} at "
                    f"{describe(text, opener.offset)}",
                )
            )
            seq += 1
    return fixes


class RepairLanguage(Protocol):
    """A delimiter-repair language for ``edit`` (a module): scan, plan fixes, check. A role
    (``kli.tools.roles``), defined here beside the types it speaks."""

    NAME: str
    EXTENSIONS: tuple[str, ...]
    def scan(self, text: str) -> Scan: ...
    def fixes(self, text: str, result: Scan) -> list[Fix] | None: ...
    def parse_error(self, text: str) -> str | None: ...
    def form_count(self, text: str) -> int | None: ...
