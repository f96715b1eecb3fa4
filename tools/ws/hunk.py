"""A hunk's lines landed on the file lines of the span it matched: ``render_hunk``.

Context and removals are aligned to the file's lines (``align``); the added lines are
re-indented (``_Render._indented``) and placed, deciding on which side of file lines the hunk
does not show they go (``_Render._cross_gap``).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from kli.tools.ws.ladder import Span
from kli.tools.ws.reindent import local_reindent, reindent_for
from kli.tools.ws.textlines import indent_width, leading_ws

# Applying a hunk on a fuzzy span: an old line pairs with a different file line in the same
# place only when at least this alike (then context is kept as the file has it, a removal
# removes the file's line).
PAIR_MIN_SIMILARITY = 0.6

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


def render_hunk(
    body: Body,
    span_lines: list[str],
    span: Span,
    *,
    pair_removals: bool = False,
    local_indent: bool = False,
    blank_gaps: bool = False,
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
    it, else the one after — as written vs as the file has it.

    With ``blank_gaps`` (ws_edit's rung 5, whose hunk is the diff old_str → new_str) blank
    added lines at the edge of an insertion that faces a gap of blank file lines the hunk does
    not show are those lines: old_str dropped them and new_str re-emits them, so they are not
    written a second time, and they say on which side of the gap the insertion goes."""
    return _Render(body, span_lines, span, pair_removals, local_indent, blank_gaps).run()


# A landed old line as (written in the hunk, as the file has it): what an added line near it
# takes its indentation from.
Ref = tuple[str, str]


class _Render:
    """One pass of a hunk body over its span's file lines. ``out`` is the new lines so far,
    ``fi`` the next file line not yet written, ``oi`` the next old (context or removed) line of
    the hunk, ``prev_file`` the last file line the old side landed on."""

    def __init__(self, body: Body, span_lines: list[str], span: Span, pair_removals: bool,
                 local_indent: bool, blank_gaps: bool = False) -> None:
        self.body = body
        self.span_lines = span_lines
        self.span = span
        self.old_count = sum(tag != "+" for tag, _t in body)
        self.aligned = align(body, span_lines, pair_removals)
        self.refs = _neighbours(body, self.aligned, span_lines) if local_indent else {}
        if local_indent:
            _pair_stand_ins(body, self.aligned, span_lines, self.refs)
        self.local_indent = local_indent
        self.blank_gaps = blank_gaps
        self.skip: set[int] = set()  # blank added lines that are a gap's own (blank_gaps)
        self.gap_left = 0  # blank lines of the gap before a removal not yet re-emitted
        self._levels, self._conflicted = _levels(body, self.aligned, span_lines)
        self._additive = len({indent_width(f) - indent_width(w)
                              for w, f in self._levels.items()}) <= 1
        self.stands_in = _stand_ins(body)
        self.cr = "\r" if span.crlf else ""
        self.out: list[str] = []
        self.fi = 0
        self.oi = 0
        self.prev_file: str | None = None

    def run(self) -> tuple[list[str] | None, str]:
        for pos, (tag, text) in enumerate(self.body):
            why = self._added(pos, text) if tag == "+" else self._old(tag, text)
            if why:
                return None, why
        self.out.extend(self.span_lines[self.fi :])
        return self.out, ""

    def _old(self, tag: str, text: str) -> str:
        """A context or removed line: the file lines up to where it landed are kept, then
        the line itself as the file has it unless it is removed. "" or why it does not fit."""
        j = self.aligned.get(self.oi)
        self.oi += 1
        if j is None:
            if tag == "-":
                return (
                    f"the removed line {text.strip()!r} is not there; re-read that region with "
                    "ws_read and copy the '-' lines exactly."
                )
            return ""  # a context line the file does not have: nothing to keep
        gap = self.span_lines[self.fi : j]
        self.out.extend(gap)
        if tag == " ":
            self.gap_left = 0
        elif gap:
            # Blank lines the hunk does not show before a removal: blank lines leading the
            # lines added in its place are those (blank_gaps).
            self.gap_left = len(gap) if self.blank_gaps and not any(
                ln.strip() for ln in gap) else 0
        if tag == " ":
            self.out.append(self.span_lines[j])
        self.prev_file = self.span_lines[j]
        self.fi = j + 1
        return ""

    def _added(self, pos: int, text: str) -> str:
        """An added line, re-indented; the first insertion of a run may first cross a gap."""
        if _starts_insertion(self.body, pos):
            why = self._cross_gap(pos)
            if why:
                return why
        if pos in self.skip:
            return ""
        if not text.strip() and self.gap_left:
            self.gap_left -= 1
            return ""
        self.gap_left = 0
        placed = self._indented(pos, text)
        if placed is None:
            return _unclear(text)
        self.out.append(placed + self._ending())
        return ""

    def _ending(self) -> str:
        """An added line ends as its neighbour: the file line the old side last landed on (the
        line it replaces or follows), else the next one; the span's ending when there is none."""
        near = self.prev_file
        if near is None and self.fi < len(self.span_lines):
            near = self.span_lines[self.fi]
        if near is None:
            return self.cr
        return "\r" if near.endswith("\r") else ""

    def _cross_gap(self, pos: int) -> str:
        """Before the first inserted line of a run: when file lines the hunk does not show
        (blank lines it dropped) lie between the last landed line and the next, put the
        insertion on the side its indentation — or a removal right after it — says, writing
        the gap first when it goes after it. "" or why the side cannot be told."""
        nxt = next((self.aligned[k] for k in range(self.oi, self.old_count)
                    if k in self.aligned), None)
        if nxt is None or nxt <= self.fi:
            return ""
        body = self.body
        end = next((i for i in range(pos, len(body)) if body[i][0] != "+"), len(body))
        first_added = next((i for i in range(pos, end) if body[i][1].strip()), pos)
        placed = self._indented(first_added, body[first_added][1])
        if placed is None:
            return _unclear(body[first_added][1])
        mine = _indent_of(placed)
        before = _indent_of(self.prev_file) if self.prev_file is not None else None
        after = _indent_of(self.span_lines[nxt])
        tail = body[end][0] if end < len(body) else ""
        lead, trail = self._gap_blanks(pos, end, nxt)
        if tail == "-" or (mine == after and mine != before) or (lead and not trail):
            self.out.extend(self.span_lines[self.fi : nxt])  # they belong with the next line
            self.skip.update(range(pos, pos + min(lead, nxt - self.fi)))
            self.fi = nxt
        elif trail and not lead and not (mine == after and mine != before):
            self.skip.update(range(end - min(trail, nxt - self.fi), end))
        elif not (mine == before and mine != after):
            gap = f"{self.span.first_line + self.fi}–{self.span.first_line + nxt - 1}"
            return (
                f"its added lines could go before or after lines {gap}, which the hunk does "
                "not show; include those lines as context so the place is unambiguous."
            )
        return ""

    def _gap_blanks(self, pos: int, end: int, nxt: int) -> tuple[int, int]:
        """With ``blank_gaps``, when the file lines ``fi..nxt-1`` the hunk does not show are
        all blank: the blank lines at the start and at the end of the added run ``pos..end``
        (an all-blank run counts as leading). (0, 0) otherwise."""
        gap = self.span_lines[self.fi : nxt]
        if not self.blank_gaps or any(ln.strip() for ln in gap):
            return 0, 0
        blank = [not t.strip() for _tag, t in self.body[pos:end]]
        lead = next((i for i, b in enumerate(blank) if not b), len(blank))
        if lead == len(blank):
            return lead, 0
        return lead, next(i for i, b in enumerate(reversed(blank)) if not b)

    def _indented(self, pos: int, text: str) -> str | None:
        """The added line re-indented: like the removed line it stands in for, else like the
        neighbour written at its own indentation (else the one before it), else the way the
        span was matched. None when both neighbours were written at this line's indentation
        but the file indents them differently: the drift lost which one it belongs with."""
        if not text.strip():
            return text  # an empty added line gets no indentation it did not have
        refs = self.refs.get(pos, [None, None])
        before = refs[0]
        ind = leading_ws(text)
        near = [r for r in refs if r is not None]
        same = [r for r in near if leading_ws(r[0]) == ind]
        if pos in self.stands_in and before is not None and before in same:
            local = local_reindent(text, *before)
            if local is not None:
                return local
        if len(same) == 2 and len({local_reindent(text, *r) for r in same}) > 1:
            return None
        if self.local_indent and ind in self._conflicted and len(same) < 2:
            # Lines written at this indentation are indented differently in the file (halved
            # two-space code with doc lines one column in), and it does not sit between two
            # of them that agree: which of them it goes with, the drift lost.
            return None
        for ref_old, ref_file in same[:1]:
            local = local_reindent(text, ref_old, ref_file)
            if local is not None:
                return local
        if self.local_indent:
            # No neighbour was written at this line's indentation: the hunk's other landed
            # lines say where lines written so go, when they agree; and a shift relative to
            # a neighbour is right only when the drift shifted every level alike.
            mapped = self._levels.get(ind)
            if mapped is not None:
                return mapped + text[len(ind) :]
            if not self._additive:
                return self._scaled(text)
        if pos in self.stands_in and before is not None:
            local = local_reindent(text, *before)
            if local is not None:
                return local
        for ref_old, ref_file in near[:1]:
            local = local_reindent(text, ref_old, ref_file)
            if local is not None:
                return local
        return reindent_for(self.span, [text])[0]

    def _scaled(self, text: str) -> str | None:
        """``text`` at the indentation the hunk's levels give its own when they scale (two
        spaces halved to one: file = k·written + c), else None: a level the hunk has no line
        of, under a drift that did not shift every level alike, cannot be placed."""
        ind = leading_ws(text)
        pts = sorted((len(w), len(f)) for w, f in self._levels.items())
        if len(pts) < 2 or not all(set(w + f) <= {" "} for w, f in self._levels.items()):
            return None
        (w0, f0), (w1, f1) = pts[0], pts[1]
        if w1 == w0 or set(ind) - {" "}:
            return None
        k, rem = divmod(f1 - f0, w1 - w0)
        if rem or any(f != f0 + k * (w - w0) for w, f in pts):
            return None
        col = f0 + k * (len(ind) - w0)
        return " " * col + text[len(ind) :] if col >= 0 else None


UNCLEAR = "the indentation of its added line"


def _unclear(text: str) -> str:
    return (
        f"{UNCLEAR} {text.strip()!r} is unclear: the lines around it "
        "are written alike in the hunk but indented differently in the file; copy the "
        "indentation exactly as ws_read shows it."
    )


def align(body: Body, span_lines: Sequence[str], pair_removals: bool) -> dict[int, int]:
    """Old line k (context and removals, in order) → the span line it landed on. Lines equal
    once stripped align; a run of misremembered lines pairs with the file's lines in the same
    place when alike (a removal only with ``pair_removals``)."""
    old = [t for tag, t in body if tag != "+"]
    tags = [tag for tag, _t in body if tag != "+"]

    def alike(k: int, j: int) -> bool:
        a, b = old[k].strip(), span_lines[j].strip()
        if a == b:
            return True
        if tags[k] == "-" and not pair_removals:
            return False
        return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= PAIR_MIN_SIMILARITY

    # As many lines as the span (but for blank edge lines a rung left out of it), each alike
    # in its place: one misremembered line among repeated ones ("- betax" before "- beta"
    # where the file has "- beta" twice) would otherwise let the matcher pair its neighbour
    # one line early, and an added line between them would land one line early.
    n = len(old)
    lead = next((k for k in range(n) if old[k].strip()), n)
    tail = next((k for k in range(n) if old[n - 1 - k].strip()), n)
    for lo, hi in dict.fromkeys([(0, n), (lead, n), (0, n - tail), (lead, n - tail)]):
        if hi - lo == len(span_lines) and hi > lo and all(
                alike(lo + k, k) for k in range(hi - lo)):
            return {lo + k: k for k in range(hi - lo)}
    sm = difflib.SequenceMatcher(
        None, [t.strip() for t in old], [t.strip() for t in span_lines], autojunk=False
    )
    aligned: dict[int, int] = {}
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            for k in range(i2 - i1):
                aligned[i1 + k] = j1 + k
        elif op == "replace" and i2 - i1 == j2 - j1:
            for k in range(i2 - i1):
                if tags[i1 + k] == "-" and not pair_removals:
                    continue
                a, b = old[i1 + k].strip(), span_lines[j1 + k].strip()
                if (
                    difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
                    >= PAIR_MIN_SIMILARITY
                ):
                    aligned[i1 + k] = j1 + k
    return aligned


def _neighbours(
    body: Body, aligned: dict[int, int], span_lines: Sequence[str]
) -> dict[int, list[Ref | None]]:
    """Body position of each added line → the landed old lines before and after it."""
    refs: dict[int, list[Ref | None]] = {}
    k = 0
    last: Ref | None = None
    waiting: list[int] = []
    for pos, (tag, text) in enumerate(body):
        if tag == "+":
            refs[pos] = [last, None]
            waiting.append(pos)
            continue
        if k in aligned and text.strip():  # a blank line says nothing about indentation
            last = (text, span_lines[aligned[k]])
            for w in waiting:
                refs[w][1] = last
            waiting = []
        k += 1
    return refs


def _pair_stand_ins(
    body: Body, aligned: dict[int, int], span_lines: Sequence[str],
    refs: dict[int, list[Ref | None]],
) -> None:
    """In each run of removed lines followed by added ones, the added line that stands in for a
    removed one takes that removed line as the landed line before it, paired in order by
    likeness — not the run's last removed line (halved code: the run's ``}`` at 2 columns and
    its doc line ``*`` at 3 both written at 1) — and an added line that stands in for none
    (one inserted among them) takes the pair before it, else the one after it."""
    old_k: dict[int, int] = {}
    k = 0
    for pos, (tag, _t) in enumerate(body):
        if tag != "+":
            old_k[pos] = k
            k += 1
    pos = 0
    while pos < len(body):
        if body[pos][0] != "-":
            pos += 1
            continue
        r0 = pos
        while pos < len(body) and body[pos][0] == "-":
            pos += 1
        a0 = pos
        while pos < len(body) and body[pos][0] == "+":
            pos += 1
        removed = [r for r in range(r0, a0) if body[r][1].strip()]
        added = [x for x in range(a0, pos) if body[x][1].strip()]
        if not removed or not added:
            continue
        pairs: dict[int, Ref] = {}
        at = 0
        for x in added:
            for i in range(at, len(removed)):
                r = removed[i]
                a, b = body[x][1].strip(), body[r][1].strip()
                if a == b or difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= 0.6:
                    if old_k[r] in aligned:
                        pairs[x] = (body[r][1], span_lines[aligned[old_k[r]]])
                    at = i + 1
                    break
        if not pairs:
            continue
        for n, x in enumerate(added):
            ref = pairs.get(x)
            if ref is None:
                ref = next((pairs[y] for y in reversed(added[:n]) if y in pairs), None) or \
                    next((pairs[y] for y in added[n + 1 :] if y in pairs), None)
            if ref is not None and x in refs:
                refs[x] = [ref, refs[x][1]]


def _levels(
    body: Body, aligned: dict[int, int], span_lines: Sequence[str]
) -> tuple[dict[str, str], set[str]]:
    """Written indentation → the file's, over the hunk's landed non-blank old lines, for the
    indentations every such line agrees on; and the written indentations they disagree on."""
    seen: dict[str, set[str]] = {}
    old = [t for tag, t in body if tag != "+"]
    for k, j in aligned.items():
        if old[k].strip():
            seen.setdefault(leading_ws(old[k]), set()).add(leading_ws(span_lines[j]))
    agreed = {w: next(iter(fs)) for w, fs in seen.items() if len(fs) == 1}
    return agreed, {w for w, fs in seen.items() if len(fs) > 1}


def _removed_before(body: Body, pos: int) -> int:
    """How many '-' lines come right before body position ``pos``."""
    m = 0
    while pos - m > 0 and body[pos - m - 1][0] == "-":
        m += 1
    return m


def _stand_ins(body: Body) -> set[int]:
    """Body positions of the added lines that stand in for removed ones (they take the
    removed line's indentation)."""
    out: set[int] = set()
    for rs in range(1, len(body)):
        if body[rs][0] == "+" and body[rs - 1][0] == "-":
            out.update(range(rs, rs + _replacing(body, rs, _removed_before(body, rs))))
    return out


def _starts_insertion(body: Body, pos: int) -> bool:
    """The added line at ``pos`` is the first of its run that is an insertion after what was
    removed (the ones before it stand in for removed lines)."""
    run_start = pos
    while run_start > 0 and body[run_start - 1][0] == "+":
        run_start -= 1
    return pos - run_start == _replacing(body, run_start, _removed_before(body, run_start))


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


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]
