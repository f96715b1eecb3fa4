"""Writing a ladder ``Match`` into the text: ``apply`` (ws_edit), ``replacement`` (the new text
for one line-based span), ``choose_disjoint`` (what ``replace_all`` replaces)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from kli.tools.core.textfile import break_at, keep_bom, with_breaks
from kli.tools.ws.hunk import line_diff, render_hunk
from kli.tools.ws.ladder import ANCHORED, BLANK_LINES, Match, Span
from kli.tools.ws.reindent import reindent_for
from kli.tools.ws.textlines import search_lines


def replacement(new: str, span: Span, whole_lines: bool, text: str = "") -> str:
    """``new`` as it should be written over ``span`` of ``text``: re-indented and with the
    matched lines' ending when the match was line-based; otherwise (a match inside a line) each
    line break ``new`` adds is that line's break (``textfile.break_at``)."""
    if not whole_lines:
        return with_breaks(new, break_at(text, span.end))
    parts = new.split("\n")
    tail_nl = parts[-1] == "" and len(parts) > 1
    body = parts[:-1] if tail_nl else parts
    body = [ln[:-1] if ln.endswith("\r") else ln for ln in body]
    body = reindent_for(span, body)
    sep = "\r\n" if span.crlf else "\n"
    return sep.join(body) + (sep if tail_nl else "")


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
            pieces.append(replacement(new, span, match.whole_lines, text))
        pos = span.end
    pieces.append(text[pos:])
    return keep_bom(text, "".join(pieces)), len(spans)
