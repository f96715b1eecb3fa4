"""Hashline anchors: the kli-compatible line hash, the ``LINE:HH|content`` rows every tool shows
(``read``, a notebook's cells, ``search``, ``inspect``: one line width and one page for all) and
the view each showing records for the session (what ``edit`` checks anchors against).

HH is FNV-1a (32-bit) over each character's code point, fed low byte first in as many bytes as
the code point needs (one byte for 0..255), XOR-folded to 8 bits and printed as two lowercase
hex digits. Fixtures: ``""`` → ``c5``, ``"(defun hello ())"`` → ``21``.
"""

from __future__ import annotations

from functools import lru_cache

from kli.tools.core.session import FileView, Session, version_of

MAX_LINES = 2000  # lines one read shows (not in the spec)
MAX_LINE_CHARS = 2000  # a wider line is shown cut (not in the spec)
MAX_OUTPUT_CHARS = 256 * 1024  # characters one read shows, at least one line (not in the spec)
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


def show_line(line: str, width: int | None = None) -> tuple[str, bool]:
    """The text shown for ``line``: cut to ``width`` (default ``MAX_LINE_CHARS``) characters
    with a ``… [+N chars]`` marker. Returns ``(text, was_cut)``."""
    limit = MAX_LINE_CHARS if width is None else width
    if len(line) <= limit:
        return line, False
    return f"{line[:limit]}… [+{len(line) - limit} chars]", True


def render_row(
    number: int, line: str, *, raw: bool = False, marker: str = ""
) -> tuple[str, str, bool]:
    """One shown row: ``{marker}LINE:HH|content`` (or the bare content when ``raw``).

    Returns ``(row, hh, was_cut)``; ``hh`` is the hash of the whole line.
    """
    text, cut = show_line(line)
    hh = line_hash(line)
    if raw:
        return text, hh, cut
    return f"{marker}{number}:{hh}|{text}", hh, cut


def cut_notice(count: int) -> str:
    return (
        f"[{count} line(s) wider than {MAX_LINE_CHARS} characters are shown cut, marked "
        "'… [+N chars]'. edit refuses to replace a line that was shown cut; to change one, "
        "rewrite the file with write, or use bash.]"
    )


def record_view(
    session: Session,
    real: str,
    lines: list[str] | None,
    texts: dict[int, str],
    cut: set[int],
    *,
    whole: bool | None = None,
) -> FileView:
    """Record what was just shown of ``real``: ``texts`` maps each shown row's number to the
    line's full text. ``lines`` is the file's current lines, remembered as the view's version
    (``version_of``); None when the text was streamed and never held whole. Rows shown earlier
    are kept only when the file is still the version they were shown from (so paging through an
    unchanged file builds up one view, and a changed file's old rows are never trusted).
    ``whole`` defaults to "every line of the file has been shown". Returns the stored view."""
    old = session.views.get(real)
    base = version_of(lines) if lines is not None else None
    merged = dict(texts)
    merged_cut = set(cut)
    if old is not None and base is not None and old.base == base:
        for number, text in old.texts.items():
            if number not in merged:
                merged[number] = text
                if number in old.cut:
                    merged_cut.add(number)
    if whole is None:
        whole = lines is not None and len(merged) == len(lines)
    view = FileView(texts=merged, cut=merged_cut, whole=whole, base=base)
    session.record_view(real, view)
    return view
