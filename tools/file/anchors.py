"""Hashline anchors: the kli-compatible line hash and the ``LINE:HH|content`` rendering.

HH is FNV-1a (32-bit) over each character's code point, fed low byte first in as many bytes as
the code point needs (one byte for 0..255), XOR-folded to 8 bits and printed as two lowercase
hex digits. Fixtures: ``""`` → ``c5``, ``"(defun hello ())"`` → ``21``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kli.tools.core.session import FileView

FNV_OFFSET = 2166136261
FNV_PRIME = 16777619
_MASK = 0xFFFFFFFF


@lru_cache(maxsize=65536)
def line_hash(line: str) -> str:
    """The two-hex-digit anchor hash of one line (without its ``\\n``)."""
    h = FNV_OFFSET
    for ch in line:
        cp = ord(ch)
        while True:
            h = ((h ^ (cp & 0xFF)) * FNV_PRIME) & _MASK
            cp >>= 8
            if not cp:
                break
    folded = (h ^ (h >> 8) ^ (h >> 16) ^ (h >> 24)) & 0xFF
    return f"{folded:02x}"


def view_hashes(view: FileView) -> dict[int, str]:
    """The ``HH`` anchor of each row a session's view of a file shows (``Session.views``)."""
    return {n: line_hash(t) for n, t in view.texts.items()}


def render_line(number: int, line: str) -> str:
    """``LINE:HH|content`` for one line."""
    return f"{number}:{line_hash(line)}|{line}"
