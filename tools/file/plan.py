"""Validate a section's ops against a file's current text and apply them in memory.

``plan_file`` is pure: it takes the disk text and what the session saw of it, and returns a
``FilePlan`` (the new text, counts, the edited lines, the regions to show) or raises
``PlanError``. Nothing here reads or writes a file, so a plan can be printed and tested before
anything touches the disk.

Rules (spec kli-tools.txt, ``edit``):

- every ``LINE:HH`` is re-hashed against the current text; a mismatch (or a line past the end)
  is stale and rejects the whole patch, naming the file and the line to re-read;
- the two hex digits are the model's handle, not the proof: an anchor must name a line the
  session was shown (``FileView.texts``) and that line must still be exactly that text; every
  line a range covers that the session was shown must be too;
- when the file changed since the session last saw it (not by its own edits: those move the
  view's version along), every target line must lie before the change, or after it when the
  line count is unchanged; otherwise its number may point at a moved block's look-alike and the
  patch is stale. Without a version (a streamed search of a large file) the shown rows next to
  each target must still be as shown; a notebook cell (``whole``) changed since the session
  last saw it is stale wherever the change lies (issue 17: the person's edit of a cell after
  the agent read it refuses the agent's edit of that cell);
- a line the session saw only cut (too wide) may not be replaced or deleted;
- overlapping range ops, and an insert that falls inside a range op (its gap lies between two
  lines the range removes), are rejected naming both;
- inserts at one gap keep patch order; an insert before a range's first line goes before its
  replacement, an insert after its last line goes after it (neither falls inside the range);
- the result ends with a newline (an emptied file stays empty); a CRLF file (its first line
  ending is ``\\r\\n``) gets ``\\r\\n`` payload lines and keeps ``\\r`` in hashed text.

Only anchor lines get the HH hash here; the version check hashes every line with Python's
built-in (C-speed) string hash.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kli.tools.core.changes import count_replaced
from kli.tools.core.session import FileView, version_of
from kli.tools.core.textfile import ending_near, keep_bom_lines, split_lines
from kli.tools.file.anchors import line_hash
from kli.tools.file.hashline import (
    APPEND,
    INSERT_AFTER,
    INSERT_BEFORE,
    PREPEND,
    RANGE_KINDS,
    Op,
)

CONTEXT_LINES = 2  # unchanged lines shown around each changed region
MAX_SHOWN_ROWS = 400  # rows of fresh anchors shown per file


class PlanError(Exception):
    """A section cannot apply. ``kind`` is ``stale``, ``cut``, ``overlap``."""

    def __init__(self, message: str, *, kind: str, path: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.path = path
        self.line = line


def _replaced_runs(
    lines: list[str], out: list[str], segments: list[tuple[int, int, int]], total: int
) -> list[tuple[list[str], list[str]]]:
    """``(old lines, new lines)`` of each stretch between the kept ``segments``."""
    runs = []
    old_at = new_at = 0
    for start, count, at in segments:
        if start > old_at or at > new_at:
            runs.append((lines[old_at:start], out[new_at:at]))
        old_at, new_at = start + count, at + count
    if old_at < total or new_at < len(out):
        runs.append((lines[old_at:total], out[new_at:]))
    return runs


@dataclass(frozen=True)
class FilePlan:
    """One file's patch, applied in memory.

    ``payload`` holds 1-based ``(first, last)`` spans of the new text the patch wrote;
    ``edited`` adds, for a deletion with no payload, the lines bordering it (the range a repair
    may touch and still count as local). ``segments`` maps kept
    lines: ``(old_first, count, new_first)`` (0-based) for each run the patch left alone.
    """

    path: str
    before: str
    after: str
    lines: tuple[str, ...] = field(repr=False)
    added: int
    removed: int
    edited: tuple[tuple[int, int], ...]
    payload: tuple[tuple[int, int], ...]
    segments: tuple[tuple[int, int, int], ...] = field(repr=False)
    crlf: bool
    old_count: int

    @property
    def edited_lines(self) -> set[int]:
        out: set[int] = set()
        for a, b in self.edited:
            out.update(range(a, b + 1))
        return out

    def regions(self, context: int = CONTEXT_LINES) -> list[tuple[int, int]]:
        """Merged ``(first, last)`` line spans to show: the edited spans plus context."""
        return merge_regions(self.edited, len(self.lines), context)

    def map_line(self, old: int) -> int | None:
        """The new number of kept old line ``old`` (1-based), or None if the patch removed it."""
        return _remap(self.segments, {old: 0}).get(old)

    def remap(self, numbered: dict[int, str]) -> dict[int, str]:
        """Carry ``{old line: value}`` over to new line numbers, dropping lines the patch
        removed (e.g. the hashes a session saw, which stay valid for kept lines)."""
        moved = _remap(self.segments, numbered)
        return {new: numbered[old] for old, new in moved.items()}


def merge_regions(
    spans: Iterable[tuple[int, int]], total: int, context: int = CONTEXT_LINES
) -> list[tuple[int, int]]:
    """``spans`` widened by ``context`` lines, clipped to ``1..total``, overlapping or adjacent
    ones merged, in order."""
    merged: list[tuple[int, int]] = []
    for a, b in sorted((max(1, a - context), min(total, b + context)) for a, b in spans):
        if a > b:
            continue
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _remap(
    segments: tuple[tuple[int, int, int], ...], numbered: Mapping[int, object]
) -> dict[int, int]:
    starts = [s[0] for s in segments]
    out: dict[int, int] = {}
    for old in numbered:
        i = bisect.bisect_right(starts, old - 1) - 1
        if i >= 0:
            first, count, new_first = segments[i]
            if old - 1 < first + count:
                out[old] = new_first + (old - 1 - first) + 1
    return out


def _span(op: Op) -> str:
    assert op.start is not None and op.end is not None
    if op.kind in RANGE_KINDS:
        lines = (
            f"line {op.start.line}"
            if op.start.line == op.end.line
            else f"lines {op.start.line}-{op.end.line}"
        )
    else:
        lines = f"line {op.start.line}"
    return f"'{op.marker}' ({lines}, patch line {op.patch_line})"


def _anchor(op: Op, pos: int) -> int:
    """The 0-based line an insert is placed by: its anchor (``+ N`` after N, ``< N`` before N),
    the last line for a bare ``+``."""
    if op.start is not None:
        return op.start.line - 1
    return pos - 1


def _first_ending_crlf(text: str) -> bool:
    nl = text.find("\n")
    return nl > 0 and text[nl - 1] == "\r"


def _stale(rel: str, op: Op, n: int, why: str, *, whole: bool = False) -> PlanError:
    lo, hi = max(1, n - 5), n + 5
    assert op.start is not None and op.end is not None
    label = str(op.start) if op.start == op.end else f"{op.start}..{op.end}"
    again = (
        f"Re-read {rel} (read path='{rel}')"
        if whole
        else f"Re-read line {n} of {rel} (read path='{rel}' start={lo} end={hi})"
    )
    return PlanError(
        f"stale anchor {label} in {rel} (patch line {op.patch_line}): {why} {again} and redo "
        "the patch with fresh anchors. Nothing was written.",
        kind="stale",
        path=rel,
        line=n,
    )


def _targets(op: Op) -> range:
    """The lines an op depends on: a range's lines, or an insert's anchor line."""
    assert op.start is not None and op.end is not None
    return range(op.start.line, op.end.line + 1)


def changed_region(view: FileView | None, lines: list[str]) -> tuple[int, int, int] | None:
    """How the text differs from the version ``view`` was taken from, as ``(prefix, suffix,
    delta)``: the counts of leading and trailing lines both versions share (never overlapping)
    and the change in line count. None when nothing changed, or when the view has no version
    (the text was streamed): the caller then has only the rows shown to go by."""
    if view is None or view.base is None:
        return None
    base = view.base
    current = version_of(lines)
    if current == base:
        return None
    shortest = min(len(base), len(current))
    prefix = 0
    while prefix < shortest and base[prefix] == current[prefix]:
        prefix += 1
    suffix = 0
    while suffix < shortest - prefix and base[-1 - suffix] == current[-1 - suffix]:
        suffix += 1
    return prefix, suffix, len(current) - len(base)


def _check_anchors(
    rel: str,
    lines: list[str],
    ops: list[Op],
    view: FileView | None,
    wide: int | None,
    whole: bool = False,
) -> None:
    """Every anchor names a line the session was shown, whose text is still exactly that; and
    when the file changed behind the session's back, no target lies where the change may have
    moved it (see the module docstring). ``whole``: any change behind the session's back is
    stale, wherever it lies (a notebook cell: one the person changed since is not edited)."""
    total = len(lines)
    texts = view.texts if view is not None else {}
    region = changed_region(view, lines)
    if whole and region is not None and ops:
        prefix, suffix, delta = region
        anchored = next((op for op in ops if op.start is not None), None)
        if anchored is not None:
            where = (
                f"lines {prefix + 1}-{total - suffix}"
                if prefix + 1 <= total - suffix
                else f"{-delta} line(s) removed after line {prefix}"
            )
            raise _stale(
                rel, anchored, prefix + 1, f"{rel} changed since you last read it, not by your "
                f"edits ({where} differ from what you saw), and a cell someone changed since "
                "you read it is not edited.", whole=True
            )
    for op in ops:
        if op.start is None or op.end is None:
            continue
        for anchor in (op.start, op.end) if op.start != op.end else (op.start,):
            n = anchor.line
            if n > total:
                raise _stale(
                    rel, op, n, f"{rel} has only {total} line(s) now, so line {n} no longer "
                    "exists.", whole=True
                )
            actual = line_hash(lines[n - 1])
            if actual != anchor.hash:
                raise _stale(
                    rel, op, n, f"line {n} now hashes {actual}, not {anchor.hash}, so it changed "
                    "since you read it."
                )
            if view is not None and n not in texts:
                raise _stale(
                    rel, op, n, f"line {n} was never shown to you in this session (by read, "
                    "search or an edit's fresh anchors), so its anchor cannot be checked."
                )
        for n in _targets(op):
            if n > total:
                raise _stale(rel, op, n, f"{rel} has only {total} line(s) now.", whole=True)
            shown = texts.get(n)
            if shown is not None and shown != lines[n - 1]:
                raise _stale(
                    rel, op, n, f"line {n} changed since you read it (its anchor hash may still "
                    "match, but its text does not)."
                )
        if region is not None:
            prefix, suffix, delta = region
            for n in _targets(op):
                if n <= prefix or (delta == 0 and n > total - suffix):
                    continue
                where = (
                    f"lines {prefix + 1}-{total - suffix}"
                    if prefix + 1 <= total - suffix
                    else f"{-delta} line(s) removed after line {prefix}"
                )
                raise _stale(
                    rel, op, n, f"{rel} changed since you last read it, not by your edits "
                    f"({where} differ from what you saw, {delta:+d} line(s) in all), and line "
                    f"{n} lies in or after that change, so the lines it names may have moved."
                )
        else:
            # No version to compare: the rows shown around the target must still be as shown.
            first, last = op.start.line, op.end.line
            for n in (first - 1, last + 1):
                shown = texts.get(n)
                if shown is not None and (n > total or lines[n - 1] != shown):
                    raise _stale(
                        rel, op, n, f"line {n}, next to the lines you anchored, changed since "
                        "you read it, so the block may have moved."
                    )
        if op.kind in RANGE_KINDS:
            for n in range(op.start.line, op.end.line + 1):
                seen_cut = view is not None and n in view.cut
                unseen_wide = (
                    wide is not None
                    and len(lines[n - 1]) > wide
                    and n not in texts
                )
                if seen_cut or unseen_wide:
                    raise PlanError(
                        f"{_span(op)} in {rel} would replace line {n}, which you have only seen "
                        f"cut (it is wider than {wide} characters). Edit refuses to replace a "
                        "line you never saw whole; rewrite the file with write, or change that "
                        "line with bash. Nothing was written.",
                        kind="cut",
                        path=rel,
                        line=n,
                    )


def _check_overlaps(rel: str, ops: list[Op]) -> None:
    ranges = sorted(
        (op for op in ops if op.kind in RANGE_KINDS),
        key=lambda o: (o.start.line if o.start else 0, o.patch_line),
    )
    for a, b in itertools.pairwise(ranges):
        assert a.end is not None and b.start is not None
        if b.start.line <= a.end.line:
            raise PlanError(
                f"overlapping ops in {rel}: {_span(a)} and {_span(b)} both change line "
                f"{b.start.line}. Merge them into one '=' op, or make the ranges disjoint. "
                "Nothing was written.",
                kind="overlap",
                path=rel,
                line=b.start.line,
            )
    starts = [r.start.line for r in ranges if r.start]
    for op in ops:
        if op.kind not in (INSERT_AFTER, INSERT_BEFORE) or op.start is None:
            continue
        # The gap an insert lands in: between line ``gap`` and line ``gap + 1``.
        gap = op.start.line if op.kind == INSERT_AFTER else op.start.line - 1
        i = bisect.bisect_right(starts, gap) - 1
        if i >= 0:
            r = ranges[i]
            assert r.end is not None
            if gap < r.end.line:
                raise PlanError(
                    f"insert {_span(op)} in {rel} falls inside {_span(r)}: it would land "
                    f"between two lines the range removes. Put the inserted lines in the "
                    f"'{r.marker[0]}' op's payload instead, or anchor the insert outside the "
                    "range. Nothing was written.",
                    kind="overlap",
                    path=rel,
                    line=op.start.line,
                )


def plan_file(
    rel: str,
    text: str,
    ops: list[Op],
    view: FileView | None = None,
    *,
    wide: int | None = None,
    whole: bool = False,
) -> FilePlan:
    """Apply ``ops`` to ``text`` in memory, or raise ``PlanError``.

    ``view`` is what the session saw of the file: its anchors must name rows it shows, those
    rows must be unchanged, its version decides whether the file changed behind the session's
    back, and its ``cut`` lines may not be replaced. ``view=None`` checks the anchors' hashes
    only (a plan made outside any session, as the tests and benchmarks do);
    ``wide`` is the width above which read shows a line cut: such a line not in ``view`` is
    treated as unseen-whole too. ``whole``: any change since the session last saw the text
    (not by its own edits) is stale — a notebook cell's rule.
    """
    lines = split_lines(text)
    total = len(lines)
    _check_anchors(rel, lines, ops, view, wide, whole)
    _check_overlaps(rel, ops)
    crlf = _first_ending_crlf(text)
    final_nl = text.endswith("\n")

    # (position, range?, order, op): position is the 0-based index where the op lands.
    placed: list[tuple[int, int, int, Op]] = []
    for order, op in enumerate(ops):
        if op.kind == PREPEND:
            pos = 0
        elif op.kind == APPEND:
            pos = total
        elif op.kind == INSERT_BEFORE:
            assert op.start is not None
            pos = op.start.line - 1
        elif op.kind == INSERT_AFTER:
            assert op.start is not None
            pos = op.start.line
        else:
            assert op.start is not None
            pos = op.start.line - 1
        placed.append((pos, 1 if op.kind in RANGE_KINDS else 0, order, op))
    placed.sort(key=lambda t: t[:3])

    out: list[str] = []
    segments: list[tuple[int, int, int]] = []
    edited: list[tuple[int, int]] = []
    written: list[tuple[int, int]] = []
    cursor = 0
    for pos, is_range, _order, op in placed:
        if pos > cursor:
            segments.append((cursor, pos - cursor, len(out)))
            out.extend(lines[cursor:pos])
            cursor = pos
        # New lines take their neighbours' ending: the replaced line's, or the anchor's.
        cr = ending_near(lines, pos if is_range or op.kind == PREPEND else _anchor(op, pos),
                         final_newline=final_nl)
        payload = [p if (not cr or p.endswith("\r")) else p + cr for p in op.payload]
        if payload:
            edited.append((len(out) + 1, len(out) + len(payload)))
            written.append(edited[-1])
            out.extend(payload)
        if is_range:
            assert op.start is not None and op.end is not None
            cursor = op.end.line
            if not payload:
                edited.append((max(1, len(out)), len(out) + 1))
    if cursor < total:
        segments.append((cursor, total - cursor, len(out)))
        out.extend(lines[cursor:])
    # In a file without a final newline the old last line had no line break: the one it gets
    # now (a line after it, or the final newline edit adds) ends as its neighbours do.
    cr_last = ending_near(lines, total - 1, final_newline=False) if not final_nl else ""
    if cr_last and out:
        moved = [at + count - 1 for start, count, at in segments if start + count == total]
        for i in sorted({len(out) - 1, *moved}):
            if not out[i].endswith("\r"):
                out[i] += cr_last
                edited.append((i + 1, i + 1))
    keep_bom_lines(lines, out)  # a BOM stays at byte 0 whatever went before line 1
    # The lines that differ, not the ranges replaced: lines 2..3 replaced by themselves and four
    # more is +4 -0. Each run between kept segments is counted alone (count_replaced): the rest
    # of the file is never diffed.
    added, removed = count_replaced(_replaced_runs(lines, out, segments, total))
    after = "\n".join(out) + "\n" if out else ""
    if out:
        last = len(out)
        edited = [(min(a, last), min(b, last)) for a, b in edited]
    else:
        edited = []
    return FilePlan(
        path=rel,
        before=text,
        after=after,
        lines=tuple(out),
        added=added,
        removed=removed,
        edited=tuple(edited),
        payload=tuple(written),
        segments=tuple(segments),
        crlf=crlf,
        old_count=total,
    )
