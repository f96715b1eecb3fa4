"""The match ladder: where a search text lands in a file, and how sure we are.

``seek`` is one pure function; ``apply`` turns its ``Match`` into new text. ws_edit runs the
ladder over the whole file, ws_patch over the ±20-line window of each hunk. Nothing here
touches the disk, so a match can be printed and tested before anything is written.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

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
# Columns a tab counts for when indentation levels are compared (only their order matters).
INDENT_TAB_WIDTH = 4
# Applying a hunk on a fuzzy span: an old line pairs with a different file line in the same
# place only when at least this alike (then context is kept as the file has it, a removal
# removes the file's line).
PAIR_MIN_SIMILARITY = 0.6


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


# -- line helpers ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Lines:
    """The file split into lines: ``text[i]`` without its terminator, and offsets."""

    text: list[str]  # line content without "\n" and without a final "\r"
    starts: list[int]  # offset of each line's first character
    ends: list[int]  # offset just past each line's content (before "\r\n" / "\n")
    term_ends: list[int]  # offset just past each line's terminator
    crlf: list[bool]


def _split(text: str) -> _Lines:
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
    return _Lines(content, starts, ends, term_ends, crlf)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _common_indent(lines: Sequence[str]) -> str:
    indents = [_indent(ln) for ln in lines if ln.strip()]
    if not indents:
        return ""
    prefix = indents[0]
    for ind in indents[1:]:
        i = 0
        while i < min(len(prefix), len(ind)) and prefix[i] == ind[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


def _dedent(lines: Sequence[str]) -> tuple[list[str], str]:
    common = _common_indent(lines)
    return [ln.rstrip()[len(common) :] if ln.strip() else "" for ln in lines], common


def search_lines(old: str) -> tuple[list[str], bool]:
    """The search text as lines (``\\r`` dropped) and whether it ended with a newline."""
    ends_nl = old.endswith("\n")
    body = old[:-1] if ends_nl else old
    return [ln[:-1] if ln.endswith("\r") else ln for ln in body.split("\n")], ends_nl


# -- the ladder --------------------------------------------------------------------------------

Window = tuple[int, int]  # 1-based inclusive range the first matched line must fall in


def seek(
    text: str, old: str | Sequence[str], *, whole_lines: bool = False, window: Window | None = None
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
    compare whole lines. ``window`` keeps only candidates whose first line lies in it (ws_patch's
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
    lines = _split(text)

    def keep(spans: list[Span]) -> list[Span]:
        if window is None:
            return spans
        lo, hi = window
        return [s for s in spans if lo <= s.first_line <= hi]

    if not whole_lines:
        spans = keep(_exact_substring(text, old, lines))
        if spans:
            return Match(EXACT, tuple(spans), False)
    # 0-based indices a candidate's first line may have (the window, else every line).
    starts = range(0, len(lines.text)) if window is None else range(window[0] - 1, window[1])
    rungs: list[tuple[str, Callable[[_Lines, list[str], bool, range], list[Span]]]] = [
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
            return Match(rung, tuple(spans), True)
    return Match(None, (), whole_lines)


def _line_of(lines: _Lines, offset: int) -> int:
    """1-based line number holding character ``offset``."""
    lo, hi = 0, len(lines.starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if lines.starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo + 1


def inside_indentation(text: str, pos: int) -> bool:
    """True when ``pos`` lies strictly inside the leading whitespace of its line."""
    start = text.rfind("\n", 0, pos) + 1
    return pos > start and text[start:pos].strip(" \t") == ""


def _exact_substring(text: str, old: str, lines: _Lines) -> list[Span]:
    """Every occurrence of ``old`` (overlapping ones too) — or none when ``old`` starts with
    whitespace and EVERY occurrence starts inside a line's indentation: that is a line
    re-emitted at a shallower indentation (its other lines would land wrong), which the
    indentation rung handles."""
    spans = []
    pos = text.find(old)
    while pos >= 0:
        end = pos + len(old)
        last = max(end - 1, pos)
        spans.append(Span(pos, end, _line_of(lines, pos), _line_of(lines, last)))
        pos = text.find(old, pos + 1)
    if old[:1] in (" ", "\t") and all(inside_indentation(text, sp.start) for sp in spans):
        return []
    return spans


def _span(
    lines: _Lines, first: int, last: int, ends_nl: bool, reindent: tuple[str, str] | None
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


def _exact_lines(lines: _Lines, needle: list[str], ends_nl: bool, starts: range) -> list[Span]:
    n = len(needle)
    out = []
    # Line terminators are not content: a run of lines equal to the needle's is exact.
    for i in _clip(starts, len(lines.text) - n + 1):
        if lines.text[i : i + n] == needle:
            out.append(_span(lines, i, i + n - 1, ends_nl, None))
    return out


def _trailing_ws(lines: _Lines, needle: list[str], ends_nl: bool, starts: range) -> list[Span]:
    want = [ln.rstrip() for ln in needle]
    n = len(want)
    have = [ln.rstrip() for ln in lines.text]
    return [
        _span(lines, i, i + n - 1, ends_nl, None)
        for i in _clip(starts, len(have) - n + 1)
        if have[i : i + n] == want
    ]


def _width(indent: str) -> int:
    return len(indent.expandtabs(INDENT_TAB_WIDTH))


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
        ia, ib = _indent(a), _indent(b)
        if pairs.setdefault(ia, ib) != ib:
            return None
    items = sorted(pairs.items(), key=lambda kv: _width(kv[0]))
    if len(items) < 2 or len({_width(a) for a, _b in items}) != len(items):
        return None
    file_widths = [_width(b) for _a, b in items]
    if any(w2 <= w1 for w1, w2 in itertools.pairwise(file_widths)):
        return None
    return tuple(items)


def _indentation(lines: _Lines, needle: list[str], ends_nl: bool, starts: range) -> list[Span]:
    want, old_indent = _dedent(needle)
    want_stripped = [ln.strip() for ln in needle]
    n = len(want)
    out = []
    for i in _clip(starts, len(lines.text) - n + 1):
        window = lines.text[i : i + n]
        got, file_indent = _dedent(window)
        if got == want:
            out.append(_span(lines, i, i + n - 1, ends_nl, (old_indent, file_indent)))
        elif [ln.strip() for ln in window] == want_stripped:
            levels = _level_map(needle, window)
            if levels is not None:
                span = _span(lines, i, i + n - 1, ends_nl, None)
                out.append(replace(span, levels=levels))
    return out


def _blank_lines(lines: _Lines, needle: list[str], ends_nl: bool, starts: range) -> list[Span]:
    want, old_indent = _dedent([ln for ln in needle if ln.strip()])
    n = len(want)
    if n == 0:
        return []
    nonblank = [i for i, ln in enumerate(lines.text) if ln.strip()]
    out = []
    for k in range(len(nonblank) - n + 1):
        if nonblank[k] not in starts:
            continue
        idxs = nonblank[k : k + n]
        got, file_indent = _dedent([lines.text[i] for i in idxs])
        if got == want:
            out.append(_span(lines, idxs[0], idxs[-1], ends_nl, (old_indent, file_indent)))
    return out


def _anchored(lines: _Lines, needle: list[str], ends_nl: bool, starts: range) -> list[Span]:
    body = [ln for ln in needle if ln.strip()]
    if len(body) < ANCHOR_MIN_LINES:
        return []
    first, last = body[0].strip(), body[-1].strip()
    # The needle's span from its first to its last non-blank line.
    n = len(needle)
    slack = max(ANCHOR_LENGTH_SLACK, int(n * ANCHOR_LENGTH_FRACTION))
    middle = "\n".join(ln.strip() for ln in body[1:-1])
    stripped = [ln.strip() for ln in lines.text]
    old_first_indent = _indent(body[0])
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
                reindent = (old_first_indent, _indent(lines.text[i]))
                out.append(_span(lines, i, j, ends_nl, reindent))
    return out


# -- applying a match --------------------------------------------------------------------------


def reindent_lines(new_lines: Sequence[str], reindent: tuple[str, str] | None) -> list[str]:
    """Re-apply the file's leading whitespace to replacement lines.

    ``reindent`` is ``(old, file)``: lines written at the search text's indentation ``old``
    move to the file's ``file``, keeping their indentation relative to it. Blank lines stay.
    """
    if reindent is None:
        return list(new_lines)
    old, new = reindent
    out = []
    for line in new_lines:
        if not line.strip():
            out.append(line)
        elif new.startswith(old):
            out.append(new[len(old) :] + line)
        elif old.startswith(new):
            extra = len(old) - len(new)
            lead = _indent(line)
            out.append(line[min(extra, len(lead)) :])
        elif line.startswith(old):
            out.append(new + line[len(old) :])
        else:
            out.append(line)
    return out


def relevel_lines(new_lines: Sequence[str], levels: Sequence[tuple[str, str]]) -> list[str]:
    """Map each replacement line's indentation through ``levels`` (search-text indent → file
    indent); an indent not in the map is extrapolated by the step between the two smallest
    levels when it falls on that grid, else the line is left as it is."""
    table = dict(levels)
    (o0, f0), (o1, f1) = levels[0], levels[1]
    step_old = _width(o1) - _width(o0)
    step_file = f1[len(f0) :] if f1.startswith(f0) else ""
    out = []
    for line in new_lines:
        ind = _indent(line)
        if not line.strip():
            out.append(line)
        elif ind in table:
            out.append(table[ind] + line[len(ind) :])
        else:
            k, rem = divmod(_width(ind) - _width(o0), step_old)
            if rem == 0 and k >= 0 and step_file:
                out.append(f0 + step_file * k + line[len(ind) :])
            else:
                out.append(line)
    return out


def reindent_for(span: Span, new_lines: Sequence[str]) -> list[str]:
    """Replacement lines re-indented the way ``span`` was matched."""
    if span.levels:
        return relevel_lines(new_lines, span.levels)
    return reindent_lines(new_lines, span.reindent)


def replacement(new: str, span: Span, whole_lines: bool) -> str:
    """``new`` as it should be written over ``span``: re-indented and with the file's line
    endings when the match was line-based."""
    if not whole_lines:
        return new
    parts = new.split("\n")
    tail_nl = parts[-1] == "" and len(parts) > 1
    body = parts[:-1] if tail_nl else parts
    body = [ln[:-1] if ln.endswith("\r") else ln for ln in body]
    body = reindent_for(span, body)
    sep = "\r\n" if span.crlf else "\n"
    return sep.join(body) + (sep if tail_nl else "")


Body = list[tuple[str, str]]  # (tag, text): " " context, "-" removed, "+" added


def line_diff(old: Sequence[str], new: Sequence[str]) -> Body:
    """``old`` → ``new`` as a hunk body (difflib's line opcodes)."""
    body: Body = []
    sm = difflib.SequenceMatcher(None, list(old), list(new), autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            body += [(" ", t) for t in old[i1:i2]]
        else:
            body += [("-", t) for t in old[i1:i2]]
            body += [("+", t) for t in new[j1:j2]]
    return body


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _local_reindent(line: str, ref_old: str, ref_file: str) -> str | None:
    """``line`` re-indented relative to a nearby line: as ``ref_old`` was written vs as the
    file has it (``ref_file``); None when the two indentations cannot be related."""
    ip, io, if_ = _indent(line), _indent(ref_old), _indent(ref_file)
    if io == if_:
        return line
    if ip.startswith(io):
        return if_ + ip[len(io) :] + line[len(ip) :]
    if io.startswith(ip) and len(if_) >= len(io) - len(ip):
        return if_[: len(if_) - (len(io) - len(ip))] + line[len(ip) :]
    return None


def _replacing(body: Body, run_start: int, removed: int) -> int:
    """How many lines at the start of the '+' run at ``run_start`` stand in for the ``removed``
    '-' lines before it: through the last one that resembles a removed line, else as many as
    were removed. Those go where the removed lines were; the rest are insertions after them."""
    if not removed:
        return 0
    gone = [t.strip() for _tag, t in body[run_start - removed : run_start]]
    end = run_start
    while end < len(body) and body[end][0] == "+":
        end += 1
    alike = [
        i - run_start
        for i in range(run_start, end)
        if any(
            difflib.SequenceMatcher(None, body[i][1].strip(), g, autojunk=False).ratio() >= 0.5
            for g in gone
        )
    ]
    return max(alike) + 1 if alike else min(removed, end - run_start)


def render_hunk(
    body: Body,
    span_lines: list[str],
    span: Span,
    *,
    pair_removals: bool = False,
    local_indent: bool = False,
) -> tuple[list[str] | None, str]:
    """The hunk's new lines for a matched span: context and removals are aligned to the file's
    lines (context is written as the FILE has it), added lines are re-indented like the match.
    File lines the hunk does not mention stay where they are. A context line that differs from
    the file's line in its place (misremembered) pairs with it when alike; a removed line does
    so only with ``pair_removals`` (ws_edit's rung 5, whose spec semantics replace the whole
    span anyway) — a patch's ``-`` line must be in the file.

    Returns ``(None, why)`` when the hunk does not fit: a removed line has no counterpart in
    the span, or added lines sit in a gap of file lines the hunk does not show (blank lines it
    dropped) and nothing says on which side of the gap they belong: added lines right after a
    removal replace it, right before one replace that; otherwise indentation decides.

    With ``local_indent`` (rung 5, whose first-line indentation says little about the rest) an
    added line takes its indentation from the nearest old line the hunk landed — the one before
    it, else the one after — as written vs as the file has it."""
    old = [t for tag, t in body if tag != "+"]
    body_tags = [tag for tag, _t in body if tag != "+"]
    sm = difflib.SequenceMatcher(
        None, [t.strip() for t in old], [t.strip() for t in span_lines], autojunk=False
    )
    aligned: dict[int, int] = {}
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            for k in range(i2 - i1):
                aligned[i1 + k] = j1 + k
        elif op == "replace" and i2 - i1 == j2 - j1:
            # Misremembered lines: pair them with the file's lines in the same place when alike.
            for k in range(i2 - i1):
                if body_tags[i1 + k] == "-" and not pair_removals:
                    continue
                a, b = old[i1 + k].strip(), span_lines[j1 + k].strip()
                if (
                    difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
                    >= PAIR_MIN_SIMILARITY
                ):
                    aligned[i1 + k] = j1 + k
    # body position of an added line → the landed old lines before and after it, each as
    # (as written, as the file has it)
    refs: dict[int, list[tuple[str, str] | None]] = {}
    if local_indent:
        k = 0
        last: tuple[str, str] | None = None
        waiting: list[int] = []
        for pos, (tag, text) in enumerate(body):
            if tag == "+":
                refs[pos] = [last, None]
                waiting.append(pos)
                continue
            if k in aligned:
                last = (text, span_lines[aligned[k]])
                for w in waiting:
                    refs[w][1] = last
                waiting = []
            k += 1

    # added lines that stand in for removed ones take the removed line's indentation
    stands_in: set[int] = set()
    for rs in range(len(body)):
        if body[rs][0] == "+" and rs > 0 and body[rs - 1][0] == "-":
            m = 0
            while rs - m > 0 and body[rs - m - 1][0] == "-":
                m += 1
            stands_in.update(range(rs, rs + _replacing(body, rs, m)))

    def added_line(pos: int, text: str) -> str | None:
        """The added line re-indented; None when its neighbours disagree (see below)."""
        before = refs.get(pos, [None])[0]
        if pos in stands_in and before is not None:
            local = _local_reindent(text, *before)
            if local is not None:
                return local
        near = [r for r in refs.get(pos, []) if r is not None]
        same = [r for r in near if _indent(r[0]) == _indent(text)]
        if len(same) == 2:
            # Both neighbours were written at this line's indentation but the file indents
            # them differently: the drift lost which one the line belongs with.
            found = {_local_reindent(text, *r) for r in same}
            if len(found) > 1:
                return None
        # the neighbour written at the added line's own indentation says most; else the one
        # before it
        for ref_old, ref_file in (same or near)[:1]:
            local = _local_reindent(text, ref_old, ref_file)
            if local is not None:
                return local
        return reindent_for(span, [text])[0]

    def unclear(text: str) -> tuple[None, str]:
        return None, (
            f"the indentation of its added line {text.strip()!r} is unclear: the lines around "
            "it are written alike in the hunk but indented differently in the file; copy the "
            "indentation exactly as ws_read shows it."
        )

    cr = "\r" if span.crlf else ""
    out: list[str] = []
    fi = 0
    oi = 0
    prev_file: str | None = None  # the last file line the hunk's old side landed on
    for pos, (tag, text) in enumerate(body):
        if tag == "+":
            run_start = pos
            while run_start > 0 and body[run_start - 1][0] == "+":
                run_start -= 1
            removed = 0  # the '-' lines right before this run: some of its lines replace them
            while run_start - removed > 0 and body[run_start - removed - 1][0] == "-":
                removed += 1
            if pos - run_start == _replacing(body, run_start, removed):
                # the first added line that is an insertion after what was removed
                nxt = next((aligned[k] for k in range(oi, len(old)) if k in aligned), None)
                if nxt is not None and nxt > fi:
                    # Unshown file lines lie between the previous and next landed lines.
                    end = next((i for i in range(pos, len(body)) if body[i][0] != "+"), len(body))
                    first_added = next((i for i in range(pos, end) if body[i][1].strip()), pos)
                    placed = added_line(first_added, body[first_added][1])
                    if placed is None:
                        return unclear(body[first_added][1])
                    mine = _indent_of(placed)
                    before = _indent_of(prev_file) if prev_file is not None else None
                    after = _indent_of(span_lines[nxt])
                    tail = body[end][0] if end < len(body) else ""
                    if tail == "-" or (mine == after and mine != before):
                        out.extend(span_lines[fi:nxt])  # the added lines belong with the next
                        fi = nxt
                    elif not (mine == before and mine != after):
                        gap = f"{span.first_line + fi}–{span.first_line + nxt - 1}"
                        return None, (
                            f"its added lines could go before or after lines {gap}, which the "
                            "hunk does not show; include those lines as context so the place is "
                            "unambiguous."
                        )
            placed = added_line(pos, text)
            if placed is None:
                return unclear(text)
            out.append(placed + cr)
            continue
        j = aligned.get(oi)
        oi += 1
        if j is None:
            if tag == "-":
                return None, (
                    f"the removed line {text.strip()!r} is not there; re-read that region with "
                    "ws_read and copy the '-' lines exactly."
                )
            continue  # a context line the file does not have: nothing to keep
        while fi < j:
            out.append(span_lines[fi])
            fi += 1
        if tag == " ":
            out.append(span_lines[j])
        prev_file = span_lines[j]
        fi = j + 1
    out.extend(span_lines[fi:])
    return out, ""


def choose_disjoint(spans: Sequence[Span]) -> list[Span]:
    """Non-overlapping spans, earliest first (what ``replace_all`` replaces)."""
    out: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, s.end)):
        if not out or span.start >= out[-1].end:
            out.append(span)
    return out


class DoesNotFit(ValueError):
    """An anchored match whose lines do not take the change (``args[0]`` says why)."""


def _anchored_replacement(text: str, span: Span, old: str, new: str) -> str:
    """For rung 5: apply ``old`` → ``new`` as a line diff onto the span, so lines the search
    text did not change are kept as the FILE has them (its middle did not match exactly)."""
    seg = text[span.start : span.end]
    trailing = seg.endswith("\n")
    raw = (seg[:-1] if trailing else seg).split("\n")
    body = line_diff(search_lines(old)[0], search_lines(new)[0])
    rendered, why = render_hunk(body, raw, span, pair_removals=True, local_indent=True)
    if rendered is None:
        raise DoesNotFit(why)
    if rendered and not trailing and rendered[-1].endswith("\r"):
        rendered[-1] = rendered[-1][:-1]
    return "\n".join(rendered) + ("\n" if trailing and rendered else "")


def _edge_newlines(text: str, from_end: bool) -> int:
    """Line breaks in the whitespace at one end of ``text``."""
    core = text.rstrip() if from_end else text.lstrip()
    edge = text[len(core) :] if from_end else text[: len(text) - len(core)]
    return edge.count("\n")


def _absorb_blank_edges(text: str, span: Span, old: str, new: str) -> Span:
    """For rung 4: when ``new`` starts or ends with more blank lines than ``old`` does, the
    search text dropped blank lines at its edges too — widen the span over as many blank file
    lines there, so they are replaced rather than doubled."""
    start, end = span.start, span.end
    extra_head = _edge_newlines(new, False) - _edge_newlines(old, False)
    while extra_head > 0 and start > 0:
        prev_start = text.rfind("\n", 0, start - 1) + 1
        if text[prev_start : start - 1].strip():
            break
        start, extra_head = prev_start, extra_head - 1
    extra_tail = _edge_newlines(new, True) - _edge_newlines(old, True)
    ends_nl = end > 0 and text[end - 1] == "\n"
    while extra_tail > 0 and end < len(text):
        # ``end`` is at a line's content end ("\r\n" or "\n" follows) or just past a "\n".
        probe = end if ends_nl else text.find("\n", end) + 1
        if probe <= 0 or probe >= len(text):
            break
        nl = text.find("\n", probe)
        line_end = len(text) if nl < 0 else nl
        if text[probe:line_end].strip():
            break
        end = (line_end + 1 if nl >= 0 else line_end) if ends_nl else line_end
        if not ends_nl and end > probe and text[end - 1] == "\r":
            end -= 1
        extra_tail -= 1
    return replace(span, start=start, end=end)


def apply(
    text: str, match: Match, new: str, *, replace_all: bool = False, old: str | None = None
) -> tuple[str, int]:
    """The text with ``new`` written over the match; returns ``(text, replacements)``.

    With ``old`` given, an anchored (rung 5) match is applied as the line diff ``old`` →
    ``new`` so the file's own unchanged lines survive (``DoesNotFit`` when that diff does not
    fit the span), and a blank-line (rung 4) match widens over the blank lines at its edges
    that ``new`` re-emits. Raises ``ValueError`` for no match, or for an ambiguous match without
    ``replace_all``: an ambiguous match is never applied by accident.
    """
    if match.count == 0:
        raise ValueError("no match to apply")
    if match.count > 1 and not replace_all:
        raise ValueError(f"ambiguous match ({match.count} candidates) without replace_all")
    spans = choose_disjoint(match.spans)
    if match.rung == BLANK_LINES and old is not None:
        spans = choose_disjoint([_absorb_blank_edges(text, s, old, new) for s in spans])
    pieces = []
    pos = 0
    for span in spans:
        pieces.append(text[pos : span.start])
        if match.rung == ANCHORED and old is not None:
            pieces.append(_anchored_replacement(text, span, old, new))
        else:
            pieces.append(replacement(new, span, match.whole_lines))
        pos = span.end
    pieces.append(text[pos:])
    return "".join(pieces), len(spans)


# -- the closest span, for a miss --------------------------------------------------------------

FUZZY_MAX_LINES = 20000  # files longer than this get no closest-span hint (time bound)
FUZZY_SHORTLIST = 40  # windows whose quick ratio is best get the full comparison


@dataclass(frozen=True)
class Near:
    """The file window most like the search text: 1-based inclusive lines and a 0..1 ratio."""

    first_line: int
    last_line: int
    ratio: float


def closest_span(text: str, old: str | Sequence[str], window: Window | None = None) -> Near | None:
    """The window of the file (as many lines as ``old`` has) most like ``old`` by difflib,
    compared with whitespace stripped from each line; None for an empty file or search text.
    ``window`` limits where the window may start (1-based inclusive)."""
    needle = [ln.strip() for ln in (search_lines(old)[0] if isinstance(old, str) else old)]
    if not any(needle):
        return None
    lines = [ln.strip() for ln in _split(text).text]
    if not lines or len(lines) > FUZZY_MAX_LINES:
        return None
    n = min(len(needle), len(lines))
    want = "\n".join(needle)
    lo, hi = 0, len(lines) - n
    if window is not None:
        lo, hi = max(lo, window[0] - 1), min(hi, window[1] - 1)
    if lo > hi:
        return None
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(want)
    scored = []
    for i in range(lo, hi + 1):
        matcher.set_seq1("\n".join(lines[i : i + n]))
        scored.append((matcher.quick_ratio(), i))
    scored.sort(key=lambda t: (-t[0], t[1]))
    best: Near | None = None
    for _quick, i in scored[:FUZZY_SHORTLIST]:
        matcher.set_seq1("\n".join(lines[i : i + n]))
        ratio = matcher.ratio()
        if best is None or ratio > best.ratio:
            best = Near(i + 1, i + n, ratio)
    return best
