"""ws_patch: apply a unified diff or SEARCH/REPLACE blocks, all or nothing (slmcode spec, ws_patch).

The parser (``patch_parse``) turns the text into files and hunks; ``plan_file`` (pure) lands
each hunk on a file's text. ``_run`` is staged as ``edit`` is: ``_read`` (parse, strip pasted
gutters) → ``_plan`` (resolve paths, land every hunk, refuse if one fails) → ``_check`` (the
post-edit syntax check) → ``_write`` (every file or none) → ``_report``.

Landing a hunk:
- a hunk with @@ line numbers is searched for with the match ladder inside a window of
  ±``ANCHOR_WINDOW_LINES`` around its @@ line, shifted by the line delta of the hunks applied
  before it above it (``_Numbering``: hunks may come in any order), and never before the
  previous hunk's end when it follows it; one candidate lands, two or more refuse it;
- a hunk with no old lines (``@@ -N,0 +M,K @@``) is a pure insertion after line N (0 = top);
- an anchorless hunk (SEARCH/REPLACE, bare -/+) runs the ladder over the whole file;
- context lines are kept as the FILE has them (the hunk is aligned line by line to the span it
  matched), added lines get the file's indentation when the match re-indented.
If any hunk fails nothing is written and the result reports every hunk.
"""

from __future__ import annotations

import bisect
import difflib
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kli.tools.core import approval
from kli.tools.core.atomic import Stale, write_many
from kli.tools.core.changes import count_changes, count_replaced, file_change
from kli.tools.core.jail import Resolved
from kli.tools.core.registry import GATE_EDIT, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.textfile import BOM, encode, ending_near, keep_bom_lines
from kli.tools.file import cellview
from kli.tools.notebook import address
from kli.tools.notebook.model import Notebook
from kli.tools.ws import cells, gutter, ladder, telemetry
from kli.tools.ws.closest import closest_span
from kli.tools.ws.hunk import UNCLEAR, Body, align, render_hunk
from kli.tools.ws.patch_parse import FilePatch, Hunk, ParsedPatch, PatchParseError, parse
from kli.tools.ws.syntax import SyntaxOutcome, check_file, outcome_note, reverted_message
from kli.tools.ws.textlines import leading_ws
from kli.tools.ws.ws_edit import open_text

ANCHOR_WINDOW_LINES = 20  # the spec's AnchorWindowLines

ALIASES = {"diff": "patch", "hunk": "patch"}

_RANK = {rung: i for i, rung in enumerate(ladder.RUNGS)}


@dataclass
class HunkReport:
    """How one hunk fared: ``first``/``last`` are 1-based lines of the ORIGINAL file."""

    index: int
    header: str
    applied: bool
    rung: str | None = None
    first: int = 0
    last: int = 0
    message: str = ""

    def line(self) -> str:
        head = f"hunk {self.index} ({self.header})"
        if self.applied:
            return f"{head}: anchored@{self.first}..{self.last} {self.rung}"
        return f"{head}: FAILED — {self.message}"


@dataclass
class FilePlan:
    """The outcome of landing every hunk of one file on ``before`` (pure, nothing written)."""

    before: str
    after: str
    reports: list[HunkReport] = field(default_factory=list)
    telemetry: list[str] = field(default_factory=list)
    # The runs of ``before``'s lines the hunks replaced and what they became (old lines, new
    # lines), for ``changes.count_replaced``; None when a byte-order mark moved.
    replaced: list[tuple[list[str], list[str]]] | None = None

    @property
    def ok(self) -> bool:
        return all(r.applied for r in self.reports)


# -- landing hunks ----------------------------------------------------------------------------


def _best(text: str, hunk: Hunk, window: ladder.Window | None) -> tuple[ladder.Match, Body, bool]:
    """The ladder's match for the hunk's old lines. The forgotten-prefix reading (every
    space-led context line kept whole) wins when it lands on a strictly better rung; when
    neither lands exactly, the line-by-line reading (``_line_by_line``) may."""
    match = ladder.seek(
        text, [t for tag, t in hunk.body if tag != "+"], whole_lines=True, window=window
    )
    if hunk.alt_body is None or (match.count and match.rung in CLOSE_RUNGS):
        return match, hunk.body, False
    alt_old = [t for tag, t in hunk.alt_body if tag != "+"]
    alt = ladder.seek(text, alt_old, whole_lines=True, window=window)
    if alt.count and alt.rung in CLOSE_RUNGS:
        return alt, hunk.alt_body, True
    mixed = _line_by_line(text, hunk.body, hunk.alt_body, window)
    if mixed is not None:
        found = ladder.seek(
            text, [t for tag, t in mixed if tag != "+"], whole_lines=True, window=window
        )
        if found.count == 1 and found.rung in CLOSE_RUNGS:
            return found, mixed, True
    if alt.count and (not match.count or _RANK[alt.rung or ""] < _RANK[match.rung or ""]):
        return alt, hunk.alt_body, True
    return match, hunk.body, False


# The rungs that take a hunk's lines as written (up to trailing blanks): an added line then
# keeps the indentation it was written with.
CLOSE_RUNGS = (ladder.EXACT, ladder.TRAILING_WS)


def _line_by_line(text: str, body: Body, alt_body: Body, window: ladder.Window | None) -> Body | None:
    """The reading of a hunk whose context lines forgot their leading space on SOME lines:
    each space-led context line is taken as written or whole, whichever the file has there.
    Only a single place where every old line equals (trailing blanks aside) one of its two
    readings counts; None otherwise. Reading each line either way is safe only because it must
    then match the file verbatim: the indentation rungs, by contrast, would re-indent the added
    lines after context lines that are one column off (Lisp forms aligned under a paren,
    two-space code)."""
    pairs = [(a[1], b[1]) for a, b in zip(body, alt_body, strict=True) if a[0] != "+"]
    if not pairs or all(a == b for a, b in pairs):
        return None
    lines = [ln.rstrip() for ln in text.split("\n")]
    n = len(pairs)
    lo, hi = (0, len(lines) - n) if window is None else (window[0] - 1, window[1] - 1)
    found: list[list[str]] = []
    for i in range(max(lo, 0), min(hi, len(lines) - n) + 1):
        chosen = []
        for (main, whole), have in zip(pairs, lines[i : i + n], strict=True):
            if main.rstrip() == have:
                chosen.append(main)
            elif whole.rstrip() == have:
                chosen.append(whole)
            else:
                break
        else:
            found.append(chosen)
            if len(found) > 1:
                return None
    if len(found) != 1:
        return None
    old = iter(found[0])
    return [(tag, t if tag == "+" else next(old)) for tag, t in body]


def _forgot_for_sure(hunk: Hunk, span_lines: list[str]) -> bool:
    """Proof that the hunk's context lines lost their ' ' prefix rather than being re-indented:
    the parser saw an unprefixed line; or a removed line with indentation stands verbatim in
    the file (a '-' is never forgotten, so the hunk was not re-indented); or, of the landed
    context lines, one is right as written at a non-zero indentation while another is right
    only whole. Re-indented code fits as written only at column 0, and the whole reading at
    any indentation the drift happens to map one column short (halving: columns 1 and 2)."""
    alt = hunk.alt_body or []
    if _unprefixed_seen(hunk):
        return True
    have = {ln.rstrip() for ln in span_lines}
    if any(tag == "-" and t[:1].isspace() and t.rstrip() in have for tag, t in hunk.body):
        return True
    if len(alt) != len(hunk.body):
        return False
    old = [(tag, t, w) for (tag, t), (_tag, w) in zip(hunk.body, alt, strict=True) if tag != "+"]
    landed = align(hunk.body, span_lines, pair_removals=False)
    written_at: set[str] = set()
    whole_at: set[str] = set()  # (only whether there is one counts)
    for k, (tag, t, w) in enumerate(old):
        j = landed.get(k)
        if tag != " " or j is None or not t.strip() or t == w:
            continue
        file_indent = leading_ws(span_lines[j])
        if leading_ws(t) == file_indent:
            written_at.add(file_indent)
        elif leading_ws(w) == file_indent:
            whole_at.add(file_indent)
    return bool(whole_at) and any(written_at)


def _unprefixed_seen(hunk: Hunk) -> bool:
    """The parser saw a context line without its ' ' prefix (the strongest proof)."""
    return any(
        tag == " " and t.strip() and t == w
        for (tag, t), (_tag, w) in zip(hunk.body, hunk.alt_body or [], strict=False)
    )


def _settle_reading(
    text: str,
    hunk: Hunk,
    window: ladder.Window | None,
    landed: ladder.Match,
    span_lines: list[str],
    chosen: list[str],
) -> list[str] | None:
    """The lines to write when the whole (or line-by-line) reading of a hunk's context lines
    landed it; None to refuse. Two-space code halved to one space reads, with the diff's prefix
    space, like the file at depth one, so that reading can land by coincidence: without proof
    of a forgotten prefix (``_forgot_for_sure``), a hunk that as written lands on the same
    lines — or, landing nowhere by itself, read as written on these lines — writes them
    differently is refused; so is one that as written lands on one other place (two
    readings, two places: halving can make a line read like its neighbour verbatim), and
    one that reading landed only on a loose rung (indentation or blank lines normalized,
    anchors) unless the parser saw an unprefixed line."""
    span = landed.spans[0]
    old = [t for tag, t in hunk.body if tag != "+"]
    main = ladder.seek(text, old, whole_lines=True, window=window)
    here = main.count == 1 and (main.spans[0].first_line, main.spans[0].last_line) == (
        span.first_line,
        span.last_line,
    )
    if (main.count == 1 and main.rung != ladder.ANCHORED
            and main.spans[0].first_line != span.first_line):
        return None  # as written it lands elsewhere too: two readings, two places
    if landed.rung not in CLOSE_RUNGS and not _unprefixed_seen(hunk):
        # A loose rung on that reading: the other proofs are lines that read right, which
        # halving can make of lines elsewhere (a removed line verbatim as another one).
        return None
    if _forgot_for_sure(hunk, span_lines):
        return chosen
    if here:
        other, why = render_hunk(
            hunk.body, span_lines, main.spans[0], local_indent=main.rung == ladder.ANCHORED
        )
    else:
        # As written the hunk lands nowhere by itself (its halved levels map to no single
        # place): read so, on these lines, each added line goes by its neighbours.
        other, why = render_hunk(hunk.body, span_lines, span, local_indent=True)
    if other is None and why.startswith(UNCLEAR):
        return None  # read as written, where its added lines go is unclear: no sure reading
    return chosen if other is None or other == chosen else None


def _prefix_aligned(body: Body, alt_body: Body, span_lines: list[str]) -> Body | None:
    """For a hunk that landed on a loose rung although some of its context lines forgot their
    leading space: each context line read the way (as written, or whole) whose indentation is
    that of the file line it landed on, so the added lines keep the indentation they were
    written with instead of taking their neighbours' one-column drift (Lisp forms aligned under
    a paren, two-space code).

    Only a forgotten prefix explains every landed line: each context line has the file's
    indentation one way or the other, and each removed line (whose '-' nobody forgets) has it
    as written. A hunk without removed lines needs the parser's own evidence, an unprefixed
    line. Anything else is indentation drift (two-space code halved to one, where the extra
    space of the whole reading can happen to fit a line), re-indented as the rung says; None."""
    old = [(tag, t, w) for (tag, t), (_tag, w) in zip(body, alt_body, strict=True) if tag != "+"]
    landed = align(body, span_lines, pair_removals=False)
    right_whole = 0
    chosen: list[str] = []
    for k, (tag, t, w) in enumerate(old):
        j = landed.get(k)
        if j is None or not t.strip():
            chosen.append(t)
            continue
        file_indent = leading_ws(span_lines[j])
        if tag == "-":
            if leading_ws(t) != file_indent:
                return None
            chosen.append(t)
        elif leading_ws(t) == file_indent:
            chosen.append(t)
        elif leading_ws(w) == file_indent:
            right_whole += 1
            chosen.append(w)
        else:
            return None
    if not right_whole:
        return None
    it = iter(chosen)
    return [(tag, t if tag == "+" else next(it)) for tag, t in body]


# Context lines a hunk may lose at its edges when nothing else lands it (GNU patch's fuzz);
# only these rungs may land a trimmed hunk.
MAX_FUZZ = 2
FUZZ_RUNGS = (ladder.EXACT, ladder.TRAILING_WS, ladder.INDENTATION)
FUZZ_NOTE = (
    "[matched after dropping context line(s) at a hunk's edge that did not match the file — "
    "verify the result with ws_read]"
)


def _fuzzed(text: str, hunk: Hunk, window: ladder.Window) -> tuple[ladder.Match, Body, int]:
    """Land an anchored hunk whose edge context drifted: drop up to ``MAX_FUZZ`` context lines
    from its start and end (never a removed line, nor one with an added line beyond it),
    tightest first, inside the window. The first
    trim with any candidate decides: one lands, several refuse."""
    bodies = [hunk.body] + ([hunk.alt_body] if hunk.alt_body is not None else [])
    trims = sorted(
        ((h, t) for h in range(MAX_FUZZ + 1) for t in range(MAX_FUZZ + 1) if h or t),
        key=lambda ht: (ht[0] + ht[1], ht),
    )
    for head, tail in trims:
        landed: list[tuple[ladder.Match, Body]] = []
        for body in bodies:
            old_at = [i for i, (tag, _t) in enumerate(body) if tag != "+"]
            if len(old_at) < head + tail + 2:
                continue
            cut_head, cut_tail = old_at[:head], old_at[len(old_at) - tail :]
            if any(body[i][0] != " " for i in cut_head + cut_tail):
                continue
            drop = set(cut_head + cut_tail)
            kept = [i for i in old_at if i not in drop]
            added = [i for i, (tag, _t) in enumerate(body) if tag == "+"]
            if any(i < kept[0] or i > kept[-1] for i in added):
                # An added line beyond a dropped context line: where it goes was said only by
                # the line that did not match (it would land on the wrong side of that line).
                continue
            trimmed = [entry for i, entry in enumerate(body) if i not in drop]
            old = [t for tag, t in trimmed if tag != "+"]
            if sum(1 for t in old if t.strip()) < 2:
                continue
            # The trimmed hunk starts ``head`` lines later than its @@ line says.
            shifted = (window[0] + head, window[1] + head)
            match = ladder.seek(text, old, whole_lines=True, window=shifted)
            if match.count and match.rung in FUZZ_RUNGS:
                landed.append((match, trimmed))
        if landed:
            # the tightest rung of the two readings (as written first on a tie), as _best does
            match, trimmed = min(landed, key=lambda mt: _RANK[mt[0].rung or ""])
            return match, trimmed, head + tail
    return ladder.Match(None), hunk.body, 0


# How alike an added line, read with its '+', and a file line must be to count as that line
# misremembered (difflib ratio): "+ mu thetx" against "+ mu theta" is 0.9, "+ zetx" 0.83.
LOOK_ALIKE = 0.8
EDGE = 3  # lines on each side of where a hunk landed that its added lines are compared with


def _reads_as_context(
    hunk: Hunk, body: Body, lines: list[str], a: int, b: int, loose: bool = False
) -> tuple[str, str, int] | None:
    """An added or removed line that, as written with its '+' or '-', is a line of the file
    where the hunk lands (lines ``a``–``b`` and ``EDGE`` on each side), as written (an added
    line also misremembered, ``LOOK_ALIKE``), and no old line of the hunk: a context line such as a
    Markdown or YAML item ``- x`` / ``+ x`` (or a diff's) whose leading ' ' was forgotten. Read
    as a change it would add ``' x'`` beside the line meant, or remove a look-alike (the other
    drift that lets such a hunk land, a loose rung, hides that). Its tag, the raw line and the
    file line's index, or None."""
    if not hunk.prefixed:
        return None
    old = Counter(t.rstrip("\r\n") for tag, t in body if tag != "+")
    span = {ln.rstrip("\r\n") for ln in lines[a : b + 1]}
    # a rung may have left blank edge lines out of the span; a hunk landed loosely or away
    # from its @@ line may have left out the very line it meant: look as far as it may move
    reach = ANCHOR_WINDOW_LINES if loose else EDGE
    lo = max(0, a - reach)
    near = []
    for i, ln in enumerate(lines[lo : b + 1 + reach], lo):
        ln = ln.rstrip("\r\n")
        if old[ln] > 0:  # a file line the hunk has as one of its old lines (each copy once)
            old[ln] -= 1
        elif ln[:1] in ("+", "-"):
            near.append((i, ln))
    for tag, t in body:
        # a line that itself begins with its tag's sign is written with two ('++…', '--…')
        if tag not in ("+", "-") or t.startswith(tag):
            continue
        raw = tag + t.rstrip("\r\n")
        for i, ln in near:
            # as written, or (an added line) misremembered too: a second drift on the same
            # line; a removed line is taken only as written (a re-indented removed line reads
            # like a list item beside it)
            if ln == raw or (tag == "+" and ln[0] == "+"
                             and difflib.SequenceMatcher(None, ln, raw).ratio() >= LOOK_ALIKE):
                return tag, raw, i
        if tag == "-" and (loose or t.rstrip("\r\n") not in span):
            # removed only through a loose rung, or away from the @@ line (``loose``), or its
            # text is no line where the hunk landed, while as written it is a line of the file
            # near there: a lost ' ' prefix
            wide = range(max(0, a - ANCHOR_WINDOW_LINES), min(len(lines), b + 1 + ANCHOR_WINDOW_LINES))
            for i in wide:
                if lines[i].rstrip("\r\n") == raw and not (a <= i <= b):
                    return tag, raw, i
    return None


def _as_context_message(clash: tuple[str, str, int], numbering: _Numbering) -> str:
    tag, raw, at = clash
    kind, harm = (("added", "adding it would put a copy of that line, without its '+', "
                   "beside it") if tag == "+" else
                  ("removed", "removing it would remove another line"))
    return (
        f"its {kind} line {raw!r} reads, as written, like line {numbering.original(at + 1)} of "
        f"the file, where the hunk lands: a context line that lost its leading ' ' ({harm}). "
        "If it is unchanged, prefix it with one space "
        f"({' ' + raw!r}); a line that itself begins with {tag!r} is written with its sign "
        f"twice ({tag + raw!r})."
    )


def _split(text: str) -> tuple[list[str], bool]:
    if text == "":
        return [], False
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
        return lines, True
    return lines, False


class _Numbering:
    """The original line number of every working line, kept through each splice, so a hunk's
    @@ line (original numbering) finds where it now is — whatever order the hunks come in —
    and reports speak the original numbering. Lines a hunk wrote get numbers interpolated over
    the span they replaced (monotone, which is all a window needs)."""

    def __init__(self, n: int) -> None:
        self.orig: list[float] = [float(i) for i in range(1, n + 1)]

    def working(self, original: int) -> int:
        """1-based working line where original line ``original`` now is (or would be)."""
        return bisect.bisect_left(self.orig, original) + 1

    def original(self, working: int) -> int:
        if not self.orig:
            return 0
        return int(self.orig[min(max(working - 1, 0), len(self.orig) - 1)])

    def splice(self, a: int, b: int, new_len: int) -> None:
        """Working lines ``a..b`` (0-based, inclusive; ``b = a - 1`` inserts) became
        ``new_len`` lines."""
        if b >= a:
            lo, hi = self.orig[a], self.orig[b]
        else:
            lo = hi = self.orig[a - 1] if a > 0 else 0.0
        step = (hi - lo) / max(new_len - 1, 1)
        self.orig[a : b + 1] = [lo + step * i for i in range(new_len)]


def plan_file(text: str, hunks: list[Hunk], *, window_lines: int = ANCHOR_WINDOW_LINES) -> FilePlan:
    """Land ``hunks`` on ``text`` in order; the plan's ``after`` is meaningful only when
    every hunk applied."""
    lines, trailing_nl = _split(text)
    original, ends_nl = list(lines), trailing_nl
    plan = FilePlan(text, text)
    total = len(lines)
    numbering = _Numbering(total)
    origin: list[int | None] = list(range(total))  # each working line's original index
    # The hunk that added each working line (0: a line of the file): a hunk's old lines are
    # the file before the patch, so they never land on a line another hunk added.
    added_by: list[int] = [0] * total
    prev: tuple[int, int] | None = None  # (old_start, end line in working numbering)
    for index, hunk in enumerate(hunks, 1):
        report = HunkReport(index, hunk.header, False)
        plan.reports.append(report)
        working = "\n".join(lines)
        if lines and lines[-1] == "":
            # A blank last line would vanish from the joined text (a final "\n" ends the line
            # before it), and a hunk ending on it could land on a look-alike above.
            working += "\n"
        if hunk.pure_insertion:
            if hunk.old_start is None:
                report.message = (
                    "it only adds lines and has no @@ line number or context line to say where; "
                    "add 2–3 unchanged lines around the insertion as ' ' context."
                )
                continue
            if not 0 <= hunk.old_start <= total:
                report.message = (
                    f"a pure insertion after line {hunk.old_start} is past the end of the file "
                    f"({total} lines); fix the @@ -N,0 line number."
                )
                continue
            after = hunk.old_start
            if hunk.old_start > 0 and _counts_old_lines(hunk.header):
                # The header counts old lines the body does not have: they were dropped after
                # the added lines (trailing blank lines trimmed from the patch), so the added
                # lines come before line N, not after it.
                after = hunk.old_start - 1
            at = numbering.working(after + 1) - 1
            clash = _reads_as_context(hunk, hunk.body, lines, at, at - 1)
            if clash is not None:
                report.message = _as_context_message(clash, numbering)
                continue
            # The inserted lines end as the line they follow (the first line, at the top).
            cr = ending_near(lines, at - 1 if at > 0 else 0, final_newline=trailing_nl)
            new = [t + cr for tag, t in hunk.body if tag == "+"]
            if cr and new and at == len(lines) and not trailing_nl:
                new[-1] = new[-1][: -len(cr)]  # the new last line: the file still has no final newline
            lines[at:at] = new
            origin[at:at] = [None] * len(new)
            added_by[at:at] = [index] * len(new)
            numbering.splice(at, at - 1, len(new))
            report.applied, report.rung = True, "pure-insertion"
            report.first, report.last = hunk.old_start, hunk.old_start
            plan.telemetry.append("ws_patch.hunk.pure_insertion")
            prev = (hunk.old_start, at + len(new))
            continue
        window: ladder.Window | None = None
        expected = None
        if hunk.old_start is not None:
            expected = numbering.working(hunk.old_start)
            lo = max(1, expected - window_lines)
            if prev is not None and hunk.old_start > prev[0]:
                lo = max(lo, prev[1] + 1)
            window = (lo, expected + window_lines)
        match, body, alt_used = _best(working, hunk, window)
        fuzz = 0
        if match.count == 0 and window is not None:
            match, body, fuzz = _fuzzed(working, hunk, window)
        if match.count == 0:
            report.message = _miss(working, hunk, window, numbering, window_lines)
            continue
        if match.count > 1:
            where = ", ".join(str(numbering.original(s.first_line)) for s in match.spans[:10])
            scope = (
                f"within ±{window_lines} lines of line {hunk.old_start}"
                if window
                else "in the file"
            )
            report.message = (
                f"ambiguous — its old lines match {match.count} places {scope} (lines {where}) "
                f"under the {match.rung} match; add context lines so it matches one place."
            )
            continue
        span = match.spans[0]
        a, b = span.first_line - 1, span.last_line - 1
        wrote = sorted({k for k in added_by[a : b + 1] if k})
        if wrote:
            report.message = _on_added_message(wrote, numbering.original(a + 1))
            continue
        local_indent = match.rung == ladder.ANCHORED
        unsure = False  # a forgotten-prefix reading changes the result, without proof
        if match.rung not in CLOSE_RUNGS and hunk.alt_body is not None:
            aligned = _prefix_aligned(hunk.body, hunk.alt_body, lines[a : b + 1])
            if aligned is not None and _forgot_for_sure(hunk, lines[a : b + 1]):
                body, local_indent = aligned, True
                plan.telemetry.append("ws_patch.repair.prefix_aligned")
            elif aligned is not None:
                as_aligned, _why = render_hunk(aligned, lines[a : b + 1], span, local_indent=True)
                as_landed, _why = render_hunk(body, lines[a : b + 1], span,
                                              local_indent=local_indent)
                unsure = as_aligned is not None and as_aligned != as_landed
        new_lines, why = render_hunk(body, lines[a : b + 1], span, local_indent=local_indent)
        if new_lines is None:
            report.message = (
                f"its old lines best match lines {numbering.original(a + 1)}–"
                f"{numbering.original(b + 1)} "
                f"({match.rung}), but {why}"
            )
            continue
        settled = (
            _settle_reading(working, hunk, window, match, lines[a : b + 1], new_lines)
            if alt_used
            else new_lines
        )
        if settled is None or unsure:
            report.message = (
                f"its old lines match lines {numbering.original(a + 1)}–"
                f"{numbering.original(b + 1)}, but whether its context lines lost their "
                "leading ' ' or were re-indented changes where its added lines go, and nothing "
                "in the hunk says which; prefix every context line with exactly one space and "
                "copy the indentation as ws_read shows it."
            )
            continue
        clash = _reads_as_context(
            hunk, body, lines, a, b,
            loose=bool(fuzz) or match.rung not in CLOSE_RUNGS
            or (expected is not None and span.first_line != expected))
        if clash is not None:
            report.message = _as_context_message(clash, numbering)
            continue
        new_lines = settled
        report.first, report.last = numbering.original(a + 1), numbering.original(b + 1)
        lines_before = lines[a : b + 1]
        lines[a : b + 1] = new_lines
        origin[a : b + 1] = [None] * len(new_lines)
        added_by[a : b + 1] = _added_by(lines_before, new_lines, added_by[a : b + 1], index)
        numbering.splice(a, b, len(new_lines))
        report.applied, report.rung = True, match.rung
        if fuzz:
            report.rung = f"{match.rung}, fuzz {fuzz}"
            plan.telemetry.append("ws_patch.repair.fuzz")
        plan.telemetry.append(f"ws_patch.hunk.{match.rung}")
        if alt_used:
            plan.telemetry.append("ws_patch.repair.forgotten_prefix_reading")
        if expected is not None and span.first_line != expected:
            plan.telemetry.append("ws_patch.repair.off_anchor")
        if hunk.no_newline_new and a + len(new_lines) == len(lines):
            trailing_nl = False
        prev = (hunk.old_start or 0, a + len(new_lines))
    if plan.ok:
        eol = "\n"
        if not (original and original[0].startswith(BOM)):
            plan.replaced = _replaced_runs(original, lines, origin)
        keep_bom_lines(original, lines)  # a BOM stays at byte 0 whatever went before line 1
        if not ends_nl and total:
            # The old last line had no line break; one it has now ends as its neighbours do.
            cr = ending_near(original, total - 1, final_newline=False)
            for at in range(len(lines) - 2, -1, -1) if cr else ():
                # Where it is now: the same text, numbered within the old last line's span.
                if numbering.orig[at] <= total - 1:
                    break
                if lines[at] == original[-1]:
                    lines[at] += cr
                    break
        plan.after = eol.join(lines) + (eol if trailing_nl and lines else "")
    return plan


def _added_by(old: list[str], new: list[str], marks: list[int], index: int) -> list[int]:
    """The added-by marks of ``new``, the lines hunk ``index`` wrote over ``old`` (marked
    ``marks``): a line it kept keeps its mark, any other is the hunk's own."""
    out = [index] * len(new)
    sm = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for i1, j1, size in sm.get_matching_blocks():
        out[j1 : j1 + size] = marks[i1 : i1 + size]
    return out


def _on_added_message(wrote: list[int], first: int) -> str:
    """A hunk whose old lines landed on lines an earlier hunk of the patch added."""
    which = "hunk " + ", ".join(str(k) for k in wrote)
    return (
        f"its old lines match only lines that {which} of this patch adds (after line {first}), "
        "not lines of the file: every hunk's ' ' and '-' lines are the file as it was before "
        f"the patch. Fix its @@ line number to where those lines are in the file (ws_read "
        f"it); to change what {which} adds, change {which} itself."
    )


def _replaced_runs(
    original: list[str], lines: list[str], origin: list[int | None]
) -> list[tuple[list[str], list[str]]]:
    """Between the lines no hunk wrote (``origin``: their original index, in order), the
    original lines that went and the lines written in their place."""
    runs: list[tuple[list[str], list[str]]] = []
    kept, written = -1, []
    for i, at in enumerate([*origin, len(original)]):
        if at is None:
            written.append(lines[i])
            continue
        if at != kept + 1 or written:
            runs.append((original[kept + 1 : at], written))
        kept, written = at, []
    return runs


def _counts_old_lines(header: str) -> bool:
    """The @@ header states a non-zero old-line count (``-N,M`` with M > 0)."""
    m = re.match(r"@@+ -\d+,(\d+) ", header)
    return m is not None and int(m.group(1)) > 0


def _miss(
    working: str,
    hunk: Hunk,
    window: ladder.Window | None,
    numbering: _Numbering,
    window_lines: int,
) -> str:
    old = hunk.old_lines
    if window is not None:
        anywhere = ladder.seek(working, old, whole_lines=True)
        if anywhere.count == 1 and anywhere.rung in (ladder.EXACT, ladder.TRAILING_WS):
            at = numbering.original(anywhere.spans[0].first_line)
            return (
                f"no match within ±{window_lines} lines of line {hunk.old_start}; its old lines "
                f"are at line {at}, outside that window — fix the @@ line number to -{at}."
            )
    near = closest_span(working, old, window)
    scope = f"within ±{window_lines} lines of line {hunk.old_start}" if window else "in the file"
    hint = ""
    if near is not None and near.ratio >= 0.5:
        hint = (
            f"; closest: lines {numbering.original(near.first_line)}–"
            f"{numbering.original(near.last_line)} "
            f"({near.ratio:.0%} similar) — re-read them with ws_read and copy the context exactly"
        )
    return f"its context/removed lines match nowhere {scope}{hint}."


# -- the tool ---------------------------------------------------------------------------------


def _gutter(files: list[FilePatch]) -> tuple[str | None, str | None]:
    """Strip pasted gutters from every hunk when every old line carries one.

    Returns ``(note, refusal)``: the note to append when stripped, the refusal text for a
    partial gutter."""
    old_text = "\n".join(t for f in files for h in f.hunks for tag, t in h.body if tag != "+")
    found = gutter.scan(old_text)
    if found.kind == "none":
        return None, None
    if found.kind == "partial":
        return None, gutter.partial_refusal(found, "the patch body")
    for f in files:
        for h in f.hunks:
            h.body = [(tag, gutter.strip_marked(t)) for tag, t in h.body]
            if h.alt_body is not None:
                h.alt_body = [(tag, gutter.strip_marked(t)) for tag, t in h.alt_body]
    return found.note("the patch body"), None


def _refuse(call: Call, reason: str, message: str, keys: list[str], **extra: Any) -> ToolError:
    keys = telemetry.record(call.session, [*keys, f"ws_patch.refused.{reason}"])
    return ToolError(message, error=reason, telemetry=keys, **extra)


def _targets(call: Call, files: list[FilePatch], keys: list[str]) -> list[tuple[str, FilePatch]]:
    given = call.args.get("path")
    if given and len(files) == 1:
        return [(given, files[0])]
    out = []
    for f in files:
        if f.path is None:
            raise _refuse(
                call,
                "no_path",
                "ws_patch needs to know which file to change: pass path, or start the diff "
                "with --- a/FILE and +++ b/FILE header lines.",
                keys,
            )
        out.append((f.path, f))
    return out


@dataclass(eq=False)
class _PatchFile:
    """One file the patch changes: ``before`` is None for a file it creates; ``after`` is the
    text once every hunk for it landed; ``syntax`` the post-edit check's outcome."""

    resolved: Resolved
    before: str | None
    after: str
    syntax: SyntaxOutcome | None = None
    cell: cells.CellText | None = None  # a notebook cell (``--- a/nb.ipynb#CELL_ID``)
    plans: int = 0  # sections of the patch landed on this file
    replaced: list[tuple[list[str], list[str]]] | None = None  # the one plan's runs

    @property
    def rel(self) -> str:
        return self.cell.rel if self.cell is not None else self.resolved.rel

    def counts(self) -> tuple[int, int]:
        """Lines added and removed, counted from the hunks' runs (the whole texts are diffed
        only when several sections landed in turn or a byte-order mark moved)."""
        if self.plans == 1 and self.replaced is not None:
            added, removed = count_replaced(self.replaced)
        else:
            added, removed = count_changes(self.before or "", self.after)
        return added, removed


@dataclass
class _Patch:
    """A patch planned before anything is written: its files in the order the patch first
    names them, each hunk's report, and the telemetry keys of the call so far."""

    parsed: ParsedPatch
    gutter_note: str | None
    keys: list[str]
    files: list[_PatchFile] = field(default_factory=list)
    reports: list[tuple[str, HunkReport]] = field(default_factory=list)

    @property
    def multi(self) -> bool:
        return len(self.files) > 1

    def listing(self) -> list[str]:
        return [("  " + (f"{rel} " if self.multi else "") + r.line()) for rel, r in self.reports]

    def hunks_json(self) -> list[dict[str, Any]]:
        return [_report_json(rel, r) for rel, r in self.reports]


def _run(call: Call) -> ToolResult:
    """plan → check → write → report, all or nothing: a refusal at any stage writes nothing."""
    patch = _read(call)
    # Every target's folder is locked (across processes) from loading to writing.
    targets = [
        call.ws.jail.resolve(cells.split(path)[0], write=True)
        for path, fpatch in _targets(call, patch.parsed.files, patch.keys)
        if not fpatch.delete_file
    ]
    first = targets[0].rel if targets else ""
    with call.ws.writing([t.real for t in targets], tool="ws_patch", rel=first):
        _plan(call, patch)
        reverted = _check(call, patch)
        if reverted:
            return _reverted_result(call, patch, reverted)
        changes = _write(call, patch)
    telemetry.record(call.session, patch.keys)
    return _report(patch, changes)


def _read(call: Call) -> _Patch:
    """The patch parsed, with pasted gutters stripped."""
    keys = ["ws_patch.calls"]
    try:
        parsed = parse(call.args["patch"])
    except PatchParseError as exc:
        raise _refuse(
            call, "unparsable", f"ws_patch could not read the patch: {exc}", keys
        ) from None
    keys.append(f"ws_patch.format.{parsed.format}")
    keys += [f"ws_patch.repair.{r}" for r in parsed.repairs]
    gutter_note, refusal = _gutter(parsed.files)
    if refusal:
        raise _refuse(call, "partial_gutter", refusal, keys)
    if gutter_note:
        keys.append("ws_patch.repair.gutter_stripped")
    return _Patch(parsed, gutter_note, keys)


def _plan(call: Call, patch: _Patch) -> None:
    """Land every hunk on its file's text (several sections for one file land in turn);
    refuse the whole patch when any hunk does not land."""
    by_real: dict[str, _PatchFile] = {}
    notebooks: dict[str, cellview.Loaded] = {}
    for path, fpatch in _targets(call, patch.parsed.files, patch.keys):
        if fpatch.delete_file:
            raise _refuse(
                call,
                "delete_in_patch",
                f"ws_patch does not delete files ({path} → /dev/null); use ws_delete.",
                patch.keys,
            )
        nb_path, cell_id = cells.split(path)
        resolved = call.ws.jail.resolve(nb_path, write=True)
        key = resolved.real if cell_id is None else address.key(resolved.real, cell_id)
        pf = by_real.get(key)
        if pf is None:
            if cell_id is not None:
                cell = cells.open_cell(
                    call, nb_path, cell_id, "ws_patch", write=True,
                    loaded=notebooks.get(resolved.real),
                )
                notebooks[resolved.real] = cell.loaded
                pf = _PatchFile(resolved, cell.text, cell.text, cell=cell)
            elif fpatch.new_file and not os.path.exists(resolved.real):
                pf = _PatchFile(resolved, None, "")
            else:
                resolved, text = open_text(call, path, "ws_patch")
                pf = _PatchFile(resolved, text, text)
            by_real[key] = pf
            patch.files.append(pf)
        plan = plan_file(pf.after, fpatch.hunks)
        patch.keys += plan.telemetry
        patch.reports += [(pf.rel, r) for r in plan.reports]
        if plan.ok:
            pf.after = plan.after
            pf.plans += 1
            pf.replaced = plan.replaced
    failed = [r for _rel, r in patch.reports if not r.applied]
    if failed:
        raise _refuse(
            call,
            "hunk_failed",
            f"ws_patch refused — {len(failed)} of {len(patch.reports)} hunk(s) did not apply, "
            "so nothing was written (all or nothing).\n" + "\n".join(patch.listing()) + "\n"
            "Fix the FAILED hunk(s) — re-read that region with ws_read and copy the context "
            "lines exactly, or correct the @@ line numbers — then send the whole patch again."
            + (f"\n{patch.gutter_note}" if patch.gutter_note else ""),
            patch.keys,
            files=[
                file_change(pf.rel, pf.before, pf.before, "rejected", added=0, removed=0,
                            reason="hunk_failed")
                for pf in patch.files
            ],
            hunks=patch.hunks_json(),
        )


def _check(call: Call, patch: _Patch) -> list[_PatchFile]:
    """The post-edit syntax check of every file; the files it reverted (a change that breaks
    a file that parsed)."""
    disabled = bool(call.args.get("disable_syntax_check"))
    for pf in patch.files:
        if pf.cell is not None:
            pf.syntax = cells.check(pf.cell, pf.after, disabled=disabled)
        else:
            pf.syntax = check_file(
                pf.rel, pf.before, pf.after, disabled=disabled, root=call.ws.root
            )
        patch.keys.append(f"syntax.{pf.syntax.status}")
    return [pf for pf in patch.files if pf.syntax and pf.syntax.status == "reverted"]


def _reverted_result(call: Call, patch: _Patch, reverted: list[_PatchFile]) -> ToolResult:
    changes = [
        file_change(
            pf.rel,
            pf.before,
            pf.after,
            "reverted" if pf in reverted else "rejected",
            reason="syntax",
            message=pf.syntax.message if pf.syntax else None,
            added=pf.counts()[0],
            removed=pf.counts()[1],
        )
        for pf in patch.files
    ]
    telemetry.record(call.session, patch.keys)
    text = "\n\n".join(reverted_message(pf.rel, pf.syntax) for pf in reverted if pf.syntax)
    if patch.multi:
        text += "\nNo file of the patch was written."
    return ToolResult.error(
        text,
        error="syntax_reverted",
        files=changes,
        hunks=patch.hunks_json(),
        telemetry=patch.keys,
    )


def _write(call: Call, patch: _Patch) -> list[dict[str, Any]]:
    """Write every changed file or none; the file changes to report."""
    writes = []
    changes = []
    notebooks: dict[str, Notebook] = {}
    for pf in patch.files:
        changed = pf.after != (pf.before or "")
        if changed and pf.cell is not None:
            nb = notebooks.get(pf.cell.loaded.real)
            if nb is None:
                nb = notebooks[pf.cell.loaded.real] = pf.cell.loaded.nb.copy()
                nb.assign_ids()  # before the change: each id is the stand-in shown
            nb.set_source(pf.cell.index, pf.after)
        elif changed:
            writes.append((pf.resolved.real, encode(pf.after)))
        added, removed = pf.counts()
        changes.append(
            file_change(pf.rel, pf.before, pf.after, "written" if changed else "unchanged",
                        added=added, removed=removed)
        )
    if not writes and not notebooks:
        telemetry.record(call.session, patch.keys)
        raise ToolError(
            "No-op patch refused — applying it leaves the file(s) unchanged (every hunk's "
            "new lines equal its old lines).",
            error="no_op",
            telemetry=patch.keys,
        )
    # Each file must still be what it was read as (None: still absent), or nothing is written.
    verified = {
        pf.resolved.real: None if pf.before is None else encode(pf.before)
        for pf in patch.files
        if pf.cell is None
    }
    try:
        if notebooks:  # cells and files in one commit, each notebook still as loaded
            call.ws.notebooks.commit(list(notebooks.items()), writes, verified)
        else:
            write_many(writes, verified)  # every file or none
    except Stale as exc:
        where = call.ws.jail.rel(exc.filename) if exc.filename else patch.files[0].rel
        raise _refuse(call, "stale", exc.refusal("ws_patch", where), patch.keys) from None
    except OSError as exc:  # a file where a folder should be, disk full, …
        where = call.ws.jail.rel(exc.filename) if exc.filename else "a target"
        raise ToolError(
            f"ws_patch: cannot write {where} ({exc.strerror}). Nothing was written — every "
            "file is as it was. Check the paths (ws_list shows what is a folder) and retry.",
            error="write_failed",
        ) from None
    return changes


def _report(patch: _Patch, changes: list[dict[str, Any]]) -> ToolResult:
    """The success result: what was patched, each hunk's landing, and the notes of the rungs,
    fuzz, syntax checks and gutter stripping that apply."""
    rels = [pf.rel for pf in patch.files]
    n = len(patch.reports)
    head = (
        f"patched {rels[0]} ({n} hunk(s))"
        if not patch.multi
        else f"patched {len(rels)} files ({n} hunk(s)): {', '.join(rels)}"
    )
    notes = []
    for rung in dict.fromkeys((r.rung or "").split(",")[0] for _rel, r in patch.reports):
        if ladder.NOTES.get(rung):
            notes.append(ladder.NOTES[rung])
    if any(", fuzz" in (r.rung or "") for _rel, r in patch.reports):
        notes.append(FUZZ_NOTE)
    for pf in patch.files:
        note = outcome_note(pf.rel, pf.syntax) if pf.syntax else ""
        if note:
            notes.append(note)
    if patch.gutter_note:
        notes.append(patch.gutter_note)
    return ToolResult.success(
        "\n".join([head, *patch.listing(), *notes]),
        files=changes,
        hunks=patch.hunks_json(),
        format=patch.parsed.format,
        repairs=patch.parsed.repairs,
        syntax={pf.rel: pf.syntax.status for pf in patch.files if pf.syntax},
        telemetry=patch.keys,
    )


def _report_json(rel: str, r: HunkReport) -> dict[str, Any]:
    return {
        "path": rel,
        "index": r.index,
        "header": r.header,
        "applied": r.applied,
        "rung": r.rung,
        "first": r.first,
        "last": r.last,
        "message": r.message,
    }


TOOL = Tool(
    name="ws_patch",
    profile="slmcode",
    gate=GATE_EDIT,
    description=(
        "Apply a patch to existing file(s), all or nothing. Accepts a unified diff (--- a/FILE "
        "/ +++ b/FILE headers, then @@ -LINE,COUNT +LINE,COUNT @@ hunks of ' ' context, '-' "
        "removed and '+' added lines; several files allowed) or SEARCH/REPLACE blocks "
        "(<<<<<<< SEARCH, exact old lines, =======, new lines, >>>>>>> REPLACE). Each hunk "
        "lands within ±20 lines of its @@ line number; small whitespace drift is tolerated and "
        "reported. If any hunk does not apply, nothing is written and each hunk's outcome is "
        "reported — fix the failed hunk and resend the whole patch. Do not include ws_read's "
        "NN| gutter. A change that makes a parsing file stop parsing is reverted; "
        "disable_syntax_check:true skips that check. path is optional when the diff names files. "
        "A notebook cell is a file named nb.ipynb#CELL_ID (--- a/nb.ipynb#CELL_ID, +++ "
        "b/nb.ipynb#CELL_ID; line numbers inside the cell, as ws_read shows them); cells and "
        "files in one patch are written all or nothing."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to patch (optional when the diff's headers name the files).",
            },
            "patch": {
                "type": "string",
                "description": "Unified diff or SEARCH/REPLACE block(s).",
            },
            "disable_syntax_check": {
                "type": "boolean",
                "description": "Skip the post-edit parse check (and its revert).",
            },
        },
        "required": ["patch"],
        "additionalProperties": False,
    },
    run=_run,
    main_arg="patch",
    aliases=ALIASES,
    mutates=True,
    touches_image=False,
    action=approval.FILE,
)
