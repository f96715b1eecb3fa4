"""IPython syntax in a code cell, hidden from the Python delimiter check and shown again after.

A line magic or shell escape (``%time f(x)``, ``!pip install x``, after any indentation) is not
Python; ``mask`` turns its first character into ``#`` (same length, so a repair's columns still
hold) and ``unmask`` gives such lines back after the check. A cell opened by a cell magic
(``%%bash``) is that magic's language: only the magics that run their body as Python
(``PYTHON_CELL_MAGICS``) keep the cell Python; any other makes it no language (``python_body``
is False), so no Python check applies.
"""

from __future__ import annotations

PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "python", "python3"})


def _is_magic(line: str) -> bool:
    s = line.lstrip()
    return s[:1] in ("%", "!")


def python_body(source: str) -> bool:
    """False when a cell magic other than ``PYTHON_CELL_MAGICS`` opens the cell."""
    first = source.split("\n", 1)[0].strip()
    if not first.startswith("%%"):
        return True
    name = first[2:].split(None, 1)[0] if first[2:].strip() else ""
    return name in PYTHON_CELL_MAGICS


def mask(text: str) -> str:
    out = []
    for line in text.split("\n"):
        if _is_magic(line):
            i = len(line) - len(line.lstrip())
            line = line[:i] + "#" + line[i + 1 :]
        out.append(line)
    return "\n".join(out)


def unmask(checked: str, masked: str, original: str) -> str:
    """``checked`` (the masked text, perhaps repaired) with each magic line of ``original``
    given back: found in order as its masked form (a repair may have added lines before it)."""
    got = checked.split("\n")
    was = masked.split("\n")
    at = 0
    for i, line in enumerate(original.split("\n")):
        if not _is_magic(line) or i >= len(was):
            continue
        for j in range(at, len(got)):
            if got[j] == was[i]:
                got[j] = line
                at = j + 1
                break
    return "\n".join(got)
