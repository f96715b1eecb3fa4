"""Writing a ladder ``Match`` into the text: ``apply`` / ``apply_plan`` (ws_edit; the plan's
edits are what its changed lines are counted from), ``replacement`` (the new text for one
line-based span), ``choose_disjoint`` (what ``replace_all`` replaces)."""

from __future__ import annotations

from collections.abc import Sequence

from kli.tools.core.changes import Edit
from kli.tools.core.textfile import break_at, keep_bom, with_breaks
from kli.tools.ws.hunk import line_diff, render_hunk
from kli.tools.ws.ladder import ANCHORED, Match, Span
from kli.tools.ws.reindent import reindent_for
from kli.tools.ws.textlines import search_lines


def replacement(new: str, span: Span, whole_lines: bool, text: str = "",
                old: str | None = None) -> str:
    """``new`` as it should be written over ``span`` of ``text``: re-indented and with the
    matched lines' ending when the match was line-based; otherwise (a match inside a line) each
    line break ``new`` adds is that line's break (``textfile.break_at``). With ``old`` (the
    search text), a whitespace-only line ``new`` keeps as ``old`` wrote it is written as the
    file has it (``_kept_blank_lines``)."""
    if not whole_lines:
        return with_breaks(new, break_at(text, span.end))
    parts = new.split("\n")
    tail_nl = parts[-1] == "" and len(parts) > 1
    body = parts[:-1] if tail_nl else parts
    if (tail_nl and old is not None and old.endswith("\n")
            and not text[span.start : span.end].endswith("\n")):
        # The search text ended its last line where the file's last line has no line break
        # (the end of the file): the replacement's stands for that missing one.
        tail_nl = False
    body = [ln[:-1] if ln.endswith("\r") else ln for ln in body]
    written = body
    body = reindent_for(span, body)
    if old is not None:
        body = _kept_blank_lines(written, body, old, text[span.start : span.end])
    sep = "\r\n" if span.crlf else "\n"
    return sep.join(body) + (sep if tail_nl else "")


def _kept_blank_lines(written: list[str], body: list[str], old: str, matched: str) -> list[str]:
    """A blank line of the replacement that the search text has too stands for the file's line
    there, which may be of another width than re-indenting gives it (halved code's "  " where
    the file has "    "), or hold blanks a rung that ignores trailing whitespace matched an
    empty line to: it is written as the file has it. Only when the search text and the matched
    lines pair one to one, and each blank text of the search text stands for one text of the
    file's."""
    olds = [ln[:-1] if ln.endswith("\r") else ln for ln in _lines(old)[0]]
    files = [ln[:-1] if ln.endswith("\r") else ln for ln in _lines(matched)[0]]
    if len(olds) != len(files):
        return body
    stands: dict[str, str | None] = {}
    for o, f in zip(olds, files, strict=True):
        if not o.strip() and not f.strip():
            stands[o] = f if stands.get(o, f) == f else None
    return [kept if (kept := stands.get(w)) is not None else b
            for w, b in zip(written, body, strict=True)]


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
    rendered, why = render_hunk(body, raw, span, pair_removals=True, local_indent=True,
                                blank_gaps=True)
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


def _blank_lines_before(text: str, start: int) -> int:
    """Blank lines right before offset ``start`` (0 unless ``start`` begins a line)."""
    if start > 0 and text[start - 1] != "\n":
        return 0
    count = 0
    while start > 0:
        prev = text.rfind("\n", 0, start - 1) + 1
        if text[prev : start - 1].strip():
            break
        count, start = count + 1, prev
    return count


def _blank_lines_after(text: str, end: int) -> int:
    """Blank lines right after offset ``end`` (0 unless ``end`` ends a line or its content)."""
    if end < len(text) and text[end - 1 : end] != "\n":
        if text[end] == "\r" and text[end + 1 : end + 2] == "\n":
            end += 1
        if text[end] != "\n":
            return 0
        end += 1
    count = 0
    while end < len(text):
        nl = text.find("\n", end)
        if nl < 0 or text[end:nl].strip():
            break  # a last line without a newline is not a blank line between two others
        count, end = count + 1, nl + 1
    return count


def blank_edges_trimmed(text: str, span: Span, old: str, new: str) -> str:
    """``new`` without the blank lines at its start or end that ``old`` does not have, as many
    as the file already has right there: the search text dropped blank lines at its edges
    (a loose quote of the region) while the replacement re-emits them, and writing them would
    double the file's. The file's own blank lines stay as they are."""
    head = min(_edge_newlines(new, False) - _edge_newlines(old, False),
               _blank_lines_before(text, span.start))
    tail = min(_edge_newlines(new, True) - _edge_newlines(old, True),
               _blank_lines_after(text, span.end))
    if head <= 0 and tail <= 0:
        return new
    parts = new.split("\n")
    if head > 0:
        parts = parts[head:]
    if tail > 0:
        parts = parts[: len(parts) - tail]
    return "\n".join(parts)


def unmatched_edges_trimmed(text: str, span: Span, old: str, new: str) -> str:
    """``new`` without the blank lines at its start or end that stand for blank lines of
    ``old`` the match did not cover: a search text that quotes more blank lines at its edges
    than the file has there, matched by a rung that ignores blank lines, would otherwise write
    its replacement's copies of them next to the file's own (a hunk at the very end of a file
    gained a blank line after its last line). A final line break the file's last line lacks is
    ``replacement``'s to drop."""
    matched = text[span.start : span.end]
    if not new.strip():
        return new
    lines, term = _lines(new)
    head_m, tail_m = _edge_blank_lines(matched)
    head_o, tail_o = _edge_blank_lines(old)
    head_n, tail_n = _edge_blank_lines(new)
    head = min(head_o - head_m, head_n - head_m)
    tail = min(tail_o - tail_m, tail_n - tail_m)
    if head <= 0 and tail <= 0:
        return new
    lines = lines[max(head, 0) : len(lines) - max(tail, 0)]
    return "\n".join(lines) + ("\n" if term else "")


def _lines(text: str) -> tuple[list[str], bool]:
    """``text`` as lines, and whether its last line ends with a line break."""
    term = text.endswith("\n")
    lines = text.split("\n")
    return (lines[:-1] if term else lines), term


def _edge_blank_lines(text: str) -> tuple[int, int]:
    """Blank (whitespace-only) lines at the start and at the end of ``text``."""
    lines, _term = _lines(text)
    blank = [not ln.strip() for ln in lines]
    if all(blank):
        return 0, 0
    return blank.index(False), blank[::-1].index(False)


def apply(
    text: str, match: Match, new: str, *, replace_all: bool = False, old: str | None = None
) -> tuple[str, int]:
    """``apply_plan`` without the edits (see there)."""
    after, replaced, _edits = apply_plan(text, match, new, replace_all=replace_all, old=old)
    return after, replaced


def apply_plan(
    text: str, match: Match, new: str, *, replace_all: bool = False, old: str | None = None
) -> tuple[str, int, list[Edit] | None]:
    """The text with ``new`` written over the match; returns ``(text, replacements)``.

    With ``old`` given, an anchored (rung 5) match is applied as the line diff ``old`` →
    ``new`` so the file's own unchanged lines survive (``DoesNotFit`` when that diff does not
    fit the span), and blank lines ``new`` re-emits at its edges over the file's own are not
    written twice (``blank_edges_trimmed``, ``unmatched_edges_trimmed``, every rung). Returns ``(text, replacements,
    edits)``: ``edits`` are the character spans of ``text`` replaced and their new text (what
    ``changes.count_replaced`` counts), None when a byte-order mark had to be moved. Raises ``ValueError`` for no match, or for an ambiguous match without
    ``replace_all``: an ambiguous match is never applied by accident.
    """
    if match.count == 0:
        raise ValueError("no match to apply")
    if match.count > 1 and not replace_all:
        raise ValueError(f"ambiguous match ({match.count} candidates) without replace_all")
    spans = choose_disjoint(match.spans)
    pieces = []
    edits: list[Edit] = []
    pos = 0
    for span in spans:
        pieces.append(text[pos : span.start])
        written = new
        if old is not None:
            written = unmatched_edges_trimmed(text, span, old, blank_edges_trimmed(text, span,
                                                                                   old, new))
        if match.rung == ANCHORED and old is not None:
            # The blank lines old quotes past the span are no lines of the diff either.
            piece = _anchored_replacement(text, span, unmatched_edges_trimmed(text, span, old,
                                                                              old), written)
        else:
            piece = replacement(written, span, match.whole_lines, text, old)
        pieces.append(piece)
        edits.append((span.start, span.end, piece))
        pos = span.end
    pieces.append(text[pos:])
    joined = "".join(pieces)
    after = keep_bom(text, joined)
    return after, len(spans), (edits if after is joined else None)
