"""A notebook cell's source as one string, and the id each cell is addressed by.

Core's undo takes a live notebook's change back cell by cell, so which cell is which is core's
knowledge; the notebook model (``kli.tools.notebook.model``) and the tools use the same two
functions. A cell without an id (before nbformat 4.5) has a stand-in: the first 8 hex digits
of a SHA-1 of its type and source, with ``-2``, ``-3`` … for later cells of the same type and
source (``kli.tools.notebook.model`` says why).
"""

from __future__ import annotations

import hashlib
from typing import Any


def source_text(value: Any) -> str:
    """A multiline field (a cell's source, a stream's text) as one string."""
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return value if isinstance(value, str) else ""


def stand_in_ids(cells: list[dict[str, Any]]) -> list[str]:
    """The id each cell is addressed by: its own, or its stand-in (module docstring)."""
    taken = {c["id"] for c in cells if isinstance(c.get("id"), str)}
    seen: dict[str, int] = {}
    out: list[str] = []
    for cell in cells:
        own = cell.get("id")
        if isinstance(own, str) and own:
            out.append(own)
            continue
        key = f"{cell.get('cell_type', '')}\0{source_text(cell.get('source'))}"
        base = hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        n = seen.get(base, 0) + 1
        seen[base] = n
        cid = base if n == 1 else f"{base}-{n}"
        while cid in taken:  # an own id equal to a stand-in (rare): keep both unique
            n += 1
            seen[base] = n
            cid = f"{base}-{n}"
        taken.add(cid)
        out.append(cid)
    return out
