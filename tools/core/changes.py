"""The one shape in which every file-changing tool reports its changes.

Tools that write, edit, patch, move or delete put ``details["files"] = [file_change(...), …]``.
The kernel's MIME bundle, the UI comm's events and the JupyterLab extension all render from
this shape (see docs/protocol.md), so a new tool gets its diff view for free.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

# Texts above this size are not carried for the diff view (the numbers still are).
MAX_DIFF_TEXT = 1024 * 1024

STATUSES = ("written", "preview", "rejected", "reverted", "unchanged", "deleted", "moved")

_LANGUAGES = {
    ".py": "python", ".pyi": "python", ".lisp": "commonlisp", ".asd": "commonlisp",
    ".cl": "commonlisp", ".lsp": "commonlisp", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".ts": "typescript", ".tsx": "typescript", ".json": "json",
    ".md": "markdown", ".go": "go", ".rs": "rust", ".c": "c", ".h": "c", ".cpp": "cpp",
    ".java": "java", ".sh": "shell", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml",
    ".html": "html", ".css": "css", ".sql": "sql",
}


def language_of(path: str) -> str:
    return _LANGUAGES.get(os.path.splitext(path)[1].lower(), "text")


# Counting changed lines is bounded: after setting aside the lines two texts share at the start
# and at the end, the middle is diffed with Myers' algorithm, whose work grows with the number
# of changed lines, not with the square of the file (difflib's match made a one-line ws_edit of a
# 50,000-line file take 9.6 s to count). Past MAX_CHANGED_LINES changed lines, or
# MAX_DIFF_STEPS comparisons, the middle counts as replaced whole.
MAX_CHANGED_LINES = 4000
MAX_DIFF_STEPS = 4_000_000


def count_changes(before: str, after: str) -> tuple[int, int]:
    """Lines added and removed between two texts: the fewest line insertions and deletions that
    turn one into the other (a changed line counts once each way), in time linear in the texts
    plus the square of the changes; see ``MAX_CHANGED_LINES`` for the bound.

    Lines end at ``\n`` only and keep it (a last line that gains or loses its newline changed;
    a form feed is inside its line), as the extension's diff view splits them: its
    ``countChanges`` (labextension/src/model/linediff.ts) gives the same numbers, both tested
    against tests/fixtures/linecount/cases.json."""
    if before == after:
        return 0, 0
    a, b = _lines(before), _lines(after)
    shortest = min(len(a), len(b))
    head = 0
    while head < shortest and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < shortest - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    a, b = a[head : len(a) - tail], b[head : len(b) - tail]
    d = _edit_distance(a, b, MAX_CHANGED_LINES, MAX_DIFF_STEPS)
    if d is None:
        return len(b), len(a)
    grown = len(b) - len(a)
    return (d + grown) // 2, (d - grown) // 2


def _lines(text: str) -> list[str]:
    """The lines of ``text``, each with its ``\n`` (the last one may have none)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


Edit = tuple[int, int, str]  # ``before[start:end]`` became this text


Run = tuple[Sequence[str] | str, Sequence[str] | str]


def count_replaced(spans: Iterable[Run]) -> tuple[int, int]:
    """Lines added and removed by a plan's replaced spans, each ``(old, new)`` counted on its
    own with ``count_changes`` (a list is lines without their breaks; a string is a run of whole
    lines): the edit knows what it replaced, so the rest of the file is never diffed. For one
    span this equals ``count_changes`` over the whole texts (lines both texts share around a
    span never change the fewest insertions and deletions)."""
    added = removed = 0
    for old, new in spans:
        before = old if isinstance(old, str) else "".join(ln + "\n" for ln in old)
        after = new if isinstance(new, str) else "".join(ln + "\n" for ln in new)
        a, r = count_changes(before, after)
        added, removed = added + a, removed + r
    return added, removed


def edited_lines(before: str, edits: Sequence[Edit]) -> list[tuple[str, str]]:
    """The whole lines each of ``edits`` (disjoint, earliest first) touched in ``before`` and
    what they became, as ``(old, new)`` runs for ``count_replaced``; edits that share a line
    are one run. A run reaches to the end of the line where its edit ends, so what follows
    it starts a line on both sides."""
    runs: list[tuple[str, str]] = []
    i = 0
    while i < len(edits):
        start, end, new = edits[i]
        first = before.rfind("\n", 0, start) + 1
        parts = [before[first:start], new]
        pos, last = end, _line_end(before, end)
        while i + 1 < len(edits) and edits[i + 1][0] < last:
            i += 1
            start, end, new = edits[i]
            parts += [before[pos:start], new]
            pos, last = end, _line_end(before, end)
        parts.append(before[pos:last])
        runs.append((before[first:last], "".join(parts)))
        i += 1
    return runs


def _line_end(text: str, at: int) -> int:
    """Just past the line break that ends the line ``at`` is in (the end of ``text`` if none)."""
    nl = text.find("\n", at)
    return len(text) if nl < 0 else nl + 1


def _edit_distance(a: list[str], b: list[str], max_d: int, max_steps: int) -> int | None:
    """The fewest insertions plus deletions turning ``a`` into ``b`` (Myers' greedy forward
    search), or None past ``max_d`` of them or ``max_steps`` line comparisons."""
    n, m = len(a), len(b)
    if not n or not m:
        return n + m
    reach = {1: 0}  # diagonal k = x - y → furthest x reached
    steps = 0
    for d in range(min(max_d, n + m) + 1):
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and reach[k - 1] < reach[k + 1]):
                x = reach[k + 1]
            else:
                x = reach[k - 1] + 1
            y = x - k
            start = x
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            steps += 1 + x - start  # one per diagonal, plus the lines the snake passed
            reach[k] = x
            if x >= n and y >= m:
                return d
        if steps > max_steps:
            return None
    return None


def file_change(
    path: str,
    before: str | None,
    after: str | None,
    status: str,
    *,
    added: int | None = None,
    removed: int | None = None,
    candidate: str | None = None,
    reason: str | None = None,
    message: str | None = None,
    marks: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One file's change.

    ``before`` is the disk text before the call (None for a new file), ``after`` the text after
    it — for a preview, the candidate. ``marks`` are character ranges in ``after``
    (``{"from": a, "to": b, "note": "inserted ')'"}``) that a repair changed. Texts over
    ``MAX_DIFF_TEXT`` are dropped (``too_large: true``) but the counts stay. Counts not given
    are ``count_changes`` of the texts; a tool that gives them counts the lines that differ
    from its own plan (``count_replaced``), never the range it replaced.
    """
    if status not in STATUSES:
        raise ValueError(f"unknown file status {status!r}")
    if added is None or removed is None:
        a, r = count_changes(before or "", after or "")
        added = a if added is None else added
        removed = r if removed is None else removed
    too_large = any(t is not None and len(t) > MAX_DIFF_TEXT for t in (before, after))
    change: dict[str, Any] = {
        "path": path,
        "status": status,
        "language": language_of(path),
        "added": added,
        "removed": removed,
        "before": None if too_large else before,
        "after": None if too_large else after,
        "too_large": too_large,
        "candidate": candidate,
        "reason": reason,
        "message": message,
        "marks": marks or [],
    }
    change.update(extra)
    return change
