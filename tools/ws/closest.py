"""The file window most like a search text that matched nowhere: the hint a miss gives."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from kli.tools.ws.ladder import Window
from kli.tools.ws.textlines import search_lines, split_lines

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
    lines = [ln.strip() for ln in split_lines(text).text]
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
