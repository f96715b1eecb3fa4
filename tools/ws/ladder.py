"""The match ladder: where a search text lands in a file, and how sure we are.

``seek`` is one pure function returning a ``Match``; turning it into new text is another
module's (``splice.apply``; a hunk's lines: ``hunk.render_hunk``; re-indentation:
``reindent``; the closest place for a miss: ``closest``). ws_edit runs the ladder over the
whole file, ws_patch over the ±20-line window of each hunk. Nothing here touches the disk, so a
match can be printed and tested before anything is written.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from kli.tools.ws.textlines import (
    Lines,
    dedent,
    indent_width,
    leading_ws,
    search_lines,
    split_lines,
)

EXACT = "exact"
TRAILING_WS = "trailing-whitespace-insensitive"
INDENTATION = "indentation-normalized"
BLANK_LINES = "blank-line-insensitive"
ANCHORED = "anchored-first-last-line"
RUNGS = (EXACT, TRAILING_WS, INDENTATION, BLANK_LINES, ANCHORED)

# The note each rung appends to a success (slmcode spec, "The match ladder", verbatim).
NOTES = {
    EXACT: "",
    TRAILING_WS: "[matched ignoring trailing whitespace — your old_str had different line endings]",
    INDENTATION: "[matched after normalizing indentation — your old_str was indented differently]",
    BLANK_LINES: "[matched ignoring blank lines — your old_str had different blank-line spacing]",
    ANCHORED: (
        "[matched on first+last line anchors — the middle of your old_str did not match "
        "exactly; verify the result with ws_read]"
    ),
}

# Rung 5 guards: the search text needs a middle, the file span may differ in length from it by
# at most this many lines (or this fraction of its length), and the middles must be this alike.
ANCHOR_MIN_LINES = 3
ANCHOR_LENGTH_SLACK = 2
ANCHOR_LENGTH_FRACTION = 0.25
ANCHOR_MIN_SIMILARITY = 0.6


@dataclass(frozen=True)
class Span:
    """One place the search text matched.

    ``start``/``end`` are character offsets in the file text (``end`` exclusive);
    ``first_line``/``last_line`` are 1-based, inclusive. ``reindent`` is ``(old, file)``: the
    leading whitespace the search text used and the file's own, re-applied to the replacement
    (None when they agree). ``crlf`` says the matched lines end in ``\\r\\n``.
    """

    start: int
    end: int
    first_line: int
    last_line: int
    reindent: tuple[str, str] | None = None
    crlf: bool = False
    levels: tuple[tuple[str, str], ...] | None = None


@dataclass(frozen=True)
class Match:
    """What the ladder found: the rung that decided (None when none matched) and every
    candidate span of that rung. Exactly one span means the match is usable; two or more is
    ambiguous and is only ever applied with ``replace_all``."""

    rung: str | None
    spans: tuple[Span, ...] = field(default_factory=tuple)
    whole_lines: bool = False

    @property
    def count(self) -> int:
        return len(self.spans)

    @property
    def note(self) -> str:
        return NOTES.get(self.rung or "", "")


Window = tuple[int, int]  # 1-based inclusive range the first matched line must fall in


def seek(
    text: str,
    old: str | Sequence[str],
    *,
    whole_lines: bool = False,
    window: Window | None = None,
) -> Match:
    """Find where ``old`` lands in ``text``, walking the ladder in order:

    1. exact — ``old`` occurs verbatim (a substring; with ``whole_lines`` a run of whole lines);
    2. trailing-whitespace-insensitive — lines equal once trailing blanks and ``\\r`` are cut;
    3. indentation-normalized — equal once each side's common leading whitespace is removed
       (the file's own indentation is re-applied to the replacement);
    4. blank-line-insensitive — the non-blank lines equal as in 3, blank lines ignored on both
       sides (the span runs from the first to the last matched file line);
    5. anchored-first-last-line — first and last non-blank lines equal (stripped), the span's
       length within ``ANCHOR_LENGTH_SLACK`` lines (or ``ANCHOR_LENGTH_FRACTION``) of the
       search text's, its middle at least ``ANCHOR_MIN_SIMILARITY`` alike; needs
       ``ANCHOR_MIN_LINES`` non-blank lines.

    The walk stops at the FIRST rung with any candidate: one candidate is a match, two or more
    are ambiguous and the looser rungs are not tried (a looser rung can only add places, so it
    could never make an ambiguous search unique — picking one would be a guess). Rungs 2–5
    compare whole lines.

    A unique match of rung 2 or 3 is a guess too when the blank-line rung finds another place
    that the search text reaches with no more kinds of drift (trailing blanks, indentation,
    blank lines; ``drift_kinds``): a search text with its blank lines dropped can equal, but
    for indentation, a look-alike elsewhere while the place meant is off only by those blank
    lines. Then the match is ambiguous: the blank-line rung with every such place (what
    ``replace_all`` replaces). ``window`` keeps only candidates whose first line lies in it (ws_patch's
    anchor window). An empty or all-blank ``old`` never matches.

    Defensive cases: overlapping exact occurrences count separately (``"aa"`` in ``"aaa"`` is
    ambiguous); when ``old`` starts with whitespace and every exact occurrence starts inside a
    line's indentation, rung 1 has none (``"    x"`` inside ``"        x"`` is x re-indented); a search text of blank lines only never reaches rungs 3–5.
    """
    if not isinstance(old, str):
        # Already lines (ws_patch's hunks): compared whole, the last one's terminator kept.
        needle, ends_nl, whole_lines = [ln.rstrip("\r") for ln in old], False, True
        old = "\n".join(needle)
    else:
        needle, ends_nl = search_lines(old)
    if old.strip() == "":
        return Match(None, (), whole_lines)

    def keep(spans: list[Span]) -> list[Span]:
        if window is None:
            return spans
        lo, hi = window
        return [s for s in spans if lo <= s.first_line <= hi]

    if not whole_lines:
        spans = keep(_exact_substring(text, old))
        if spans:
            return Match(EXACT, tuple(spans), False)
    lines = split_lines(text)  # only past rung 1: an exact match never splits a large file
    # 0-based indices a candidate's first line may have (the window, else every line).
    starts = range(0, len(lines.text)) if window is None else range(window[0] - 1, window[1])
    rungs: list[tuple[str, Callable[[Lines, list[str], bool, range], list[Span]]]] = [
        (EXACT, _exact_lines),
        (TRAILING_WS, _trailing_ws),
        (INDENTATION, _indentation),
        (BLANK_LINES, _blank_lines),
        (ANCHORED, _anchored),
    ]
    for rung, finder in rungs:
        if rung == EXACT and not whole_lines:
            continue
        spans = keep(finder(lines, needle, ends_nl, starts))
        if spans:
            if len(spans) == 1 and rung in (TRAILING_WS, INDENTATION):
                others = _rivals(lines, needle, ends_nl, starts, spans[0], keep)
                if others:
                    return Match(BLANK_LINES, tuple(sorted([spans[0], *others],
                                                           key=lambda s: s.start)), True)
            return Match(rung, tuple(spans), True)
    return Match(None, (), whole_lines)


def drift_kinds(needle: Sequence[str], window: Sequence[str]) -> int:
    """How many kinds of whitespace drift turn the file lines ``window`` into the search text
    ``needle`` (their non-blank lines equal once stripped): trailing blanks, indentation, and
    the blank lines between (edge blank lines do not count)."""

    def trim(block: Sequence[str]) -> list[str]:
        keep = [i for i, ln in enumerate(block) if ln.strip()]
        return list(block[keep[0] : keep[-1] + 1]) if keep else []

    a, b = trim(needle), trim(window)
    ka, kb = [ln for ln in a if ln.strip()], [ln for ln in b if ln.strip()]
    blank = [bool(ln.strip()) for ln in a] != [bool(ln.strip()) for ln in b]
    indent = [leading_ws(x) for x in ka] != [leading_ws(y) for y in kb]
    trailing = [x[len(x.rstrip()) :] for x in ka] != [y[len(y.rstrip()) :] for y in kb]
    return int(blank) + int(indent) + int(trailing)


def _rivals(
    lines: Lines,
    needle: list[str],
    ends_nl: bool,
    starts: range,
    found: Span,
    keep: Callable[[list[Span]], list[Span]],
) -> list[Span]:
    """Places the blank-line rung finds, apart from ``found``, that ``needle`` reaches with no
    more kinds of drift than it reaches ``found`` (see ``seek``)."""
    window = lines.text[found.first_line - 1 : found.last_line]
    mine = drift_kinds(needle, window)
    body = [found.first_line + i for i, ln in enumerate(window) if ln.strip()]
    out = []
    for span in keep(_blank_lines(lines, needle, ends_nl, starts)):
        if (span.first_line, span.last_line) == (body[0], body[-1]):
            continue  # the same place (the blank-line rung's span has no edge blank lines)
        if drift_kinds(needle, lines.text[span.first_line - 1 : span.last_line]) <= mine:
            out.append(span)
    return out


def inside_indentation(text: str, pos: int) -> bool:
    """True when ``pos`` lies strictly inside the leading whitespace of its line."""
    start = text.rfind("\n", 0, pos) + 1
    return pos > start and text[start:pos].strip(" \t") == ""


def _exact_substring(text: str, old: str) -> list[Span]:
    """Every occurrence of ``old`` (overlapping ones too) — or none when ``old`` starts with
    whitespace and EVERY occurrence starts inside a line's indentation: that is a line
    re-emitted at a shallower indentation (its other lines would land wrong), which the
    indentation rung handles. Line numbers are counted from one occurrence to the next, so the
    file is never split into lines here."""
    spans = []
    line, counted = 1, 0  # the line holding offset ``counted``

    def line_at(offset: int) -> int:
        nonlocal line, counted
        if offset >= counted:
            line += text.count("\n", counted, offset)
        else:  # an overlapping occurrence starts before the last one ended
            line -= text.count("\n", offset, counted)
        counted = offset
        return line

    pos = text.find(old)
    while pos >= 0:
        end = pos + len(old)
        first = line_at(pos)
        spans.append(Span(pos, end, first, line_at(max(end - 1, pos))))
        pos = text.find(old, pos + 1)
    if old[:1] in (" ", "\t") and all(inside_indentation(text, sp.start) for sp in spans):
        return []
    return spans


def _span(
    lines: Lines, first: int, last: int, ends_nl: bool, reindent: tuple[str, str] | None
) -> Span:
    """The span of 0-based lines ``first..last`` inclusive."""
    end = lines.term_ends[last] if ends_nl else lines.ends[last]
    return Span(
        lines.starts[first],
        end,
        first + 1,
        last + 1,
        reindent if reindent and reindent[0] != reindent[1] else None,
        lines.crlf[first],
    )


def _clip(starts: range, stop: int) -> range:
    return range(max(starts.start, 0), min(starts.stop, stop))


def _exact_lines(lines: Lines, needle: list[str], ends_nl: bool, starts: range) -> list[Span]:
    n = len(needle)
    out = []
    # Line terminators are not content: a run of lines equal to the needle's is exact.
    for i in _clip(starts, len(lines.text) - n + 1):
        if lines.text[i : i + n] == needle:
            out.append(_span(lines, i, i + n - 1, ends_nl, None))
    return out


def _trailing_ws(lines: Lines, needle: list[str], ends_nl: bool, starts: range) -> list[Span]:
    want = [ln.rstrip() for ln in needle]
    n = len(want)
    have = [ln.rstrip() for ln in lines.text]
    return [
        _span(lines, i, i + n - 1, ends_nl, None)
        for i in _clip(starts, len(have) - n + 1)
        if have[i : i + n] == want
    ]


def _level_map(needle: Sequence[str], window: Sequence[str]) -> tuple[tuple[str, str], ...] | None:
    """The indentation levels of ``needle`` mapped onto ``window``'s, when the lines are equal
    but for indentation and the mapping is consistent and keeps the nesting order (another
    indent width, tabs for spaces); None otherwise, or with fewer than two levels."""
    pairs: dict[str, str] = {}
    for a, b in zip(needle, window, strict=True):
        if a.strip() != b.strip():
            return None
        if not a.strip():
            continue
        ia, ib = leading_ws(a), leading_ws(b)
        if pairs.setdefault(ia, ib) != ib:
            return None
    items = sorted(pairs.items(), key=lambda kv: indent_width(kv[0]))
    if len(items) < 2 or len({indent_width(a) for a, _b in items}) != len(items):
        return None
    file_widths = [indent_width(b) for _a, b in items]
    if any(w2 <= w1 for w1, w2 in itertools.pairwise(file_widths)):
        return None
    return tuple(items)


def _indentation(lines: Lines, needle: list[str], ends_nl: bool, starts: range) -> list[Span]:
    want, old_indent = dedent(needle)
    want_stripped = [ln.strip() for ln in needle]
    n = len(want)
    out = []
    for i in _clip(starts, len(lines.text) - n + 1):
        window = lines.text[i : i + n]
        got, file_indent = dedent(window)
        if got == want:
            out.append(_span(lines, i, i + n - 1, ends_nl, (old_indent, file_indent)))
        elif [ln.strip() for ln in window] == want_stripped:
            levels = _level_map(needle, window)
            if levels is not None:
                span = _span(lines, i, i + n - 1, ends_nl, None)
                out.append(replace(span, levels=levels))
    return out


def _blank_lines(lines: Lines, needle: list[str], ends_nl: bool, starts: range) -> list[Span]:
    want, old_indent = dedent([ln for ln in needle if ln.strip()])
    n = len(want)
    if n == 0:
        return []
    nonblank = [i for i, ln in enumerate(lines.text) if ln.strip()]
    out = []
    for k in range(len(nonblank) - n + 1):
        if nonblank[k] not in starts:
            continue
        idxs = nonblank[k : k + n]
        got, file_indent = dedent([lines.text[i] for i in idxs])
        if got == want:
            out.append(_span(lines, idxs[0], idxs[-1], ends_nl, (old_indent, file_indent)))
    return out


def _anchored(lines: Lines, needle: list[str], ends_nl: bool, starts: range) -> list[Span]:
    body = [ln for ln in needle if ln.strip()]
    if len(body) < ANCHOR_MIN_LINES:
        return []
    first, last = body[0].strip(), body[-1].strip()
    # The needle's span from its first to its last non-blank line.
    n = len(needle)
    slack = max(ANCHOR_LENGTH_SLACK, int(n * ANCHOR_LENGTH_FRACTION))
    middle = "\n".join(ln.strip() for ln in body[1:-1])
    stripped = [ln.strip() for ln in lines.text]
    old_first_indent = leading_ws(body[0])
    out = []
    for i in _clip(starts, len(stripped)):
        if stripped[i] != first:
            continue
        lo = i + max(1, n - 1 - slack)
        hi = min(len(stripped) - 1, i + n - 1 + slack)
        for j in range(lo, hi + 1):
            if stripped[j] != last:
                continue
            got = "\n".join(s for s in stripped[i + 1 : j] if s)
            ratio = difflib.SequenceMatcher(None, middle, got, autojunk=False).ratio()
            if ratio >= ANCHOR_MIN_SIMILARITY:
                reindent = (old_first_indent, leading_ws(lines.text[i]))
                out.append(_span(lines, i, j, ends_nl, reindent))
    return out
