"""The one shape in which every file-changing tool reports its changes.

Tools that write, edit, patch, move or delete put ``details["files"] = [file_change(...), …]``.
The kernel's MIME bundle, the UI comm's events and the JupyterLab extension all render from
this shape (see docs/protocol.md), so a new tool gets its diff view for free.
"""

from __future__ import annotations

import os
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


# The changed middle of two texts (their common first and last lines set aside) is diffed line
# by line only up to this many lines a side; a larger one counts as replaced whole. difflib's
# match is quadratic: a one-line ws_edit of a 50,000-line file took 9.6 s to count.
MAX_DIFF_LINES = 2000


def count_changes(before: str, after: str) -> tuple[int, int]:
    """Lines added and removed between two texts (a line-level diff), in time linear in their
    length: the lines both share at the start and at the end are set aside first (what an edit
    left alone), and only the changed middle is diffed — up to ``MAX_DIFF_LINES`` lines a side;
    a larger middle counts as all removed and all added."""
    if before == after:
        return 0, 0
    import difflib

    a, b = before.splitlines(), after.splitlines()
    shortest = min(len(a), len(b))
    head = 0
    while head < shortest and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < shortest - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    a, b = a[head : len(a) - tail], b[head : len(b) - tail]
    if len(a) > MAX_DIFF_LINES or len(b) > MAX_DIFF_LINES:
        return len(b), len(a)
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


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
    ``MAX_DIFF_TEXT`` are dropped (``too_large: true``) but the counts stay.
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
