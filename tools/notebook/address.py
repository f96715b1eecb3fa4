"""``PATH#CELL_ID``: how a tool names one cell of a notebook, and the key its view is kept
under in a session (the notebook's real path, ``#``, the cell id)."""

from __future__ import annotations

SUFFIX = ".ipynb"


def is_notebook(path: str) -> bool:
    return path.lower().endswith(SUFFIX)


def split(path: str) -> tuple[str, str | None]:
    """``("nb.ipynb", "ID")`` for ``nb.ipynb#ID``; ``(path, None)`` for anything else (a ``#``
    in a path that does not name a notebook's cell is part of the file name)."""
    head, sep, cell = path.rpartition("#")
    if sep and is_notebook(head) and cell.strip():
        return head, cell.strip()
    return path, None


def key(real: str, cell_id: str) -> str:
    """The session key of a cell's view."""
    return f"{real}#{cell_id}"


def cell_of(key_: str) -> tuple[str, str] | None:
    """``(notebook real path, cell id)`` of a cell key, or None for a file's key."""
    head, cell = split(key_)
    return (head, cell) if cell is not None else None
