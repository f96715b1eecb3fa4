"""Keeping results small, one way for every tool and profile: head-and-tail cuts that say what
was dropped, and the marker for output dropped while it was being produced.

The cut keeps two thirds of the room for the head and one third for the tail. ``ends`` picks
the two ends; ``head_tail`` cuts a text and marks the cut; ``dropped_marker`` is the one line
that stands where a bounded capture dropped the middle of a stream while it ran (``bash``,
``eval``, ``ws_shell``).
"""

from __future__ import annotations

from collections.abc import Callable


def ends(head: str, room: int, *, tail: str = "", on_lines: bool = False) -> tuple[str, str]:
    """The first and last characters of a text to show in ``room`` characters.

    The text is ``head`` alone, or — when a capture dropped its middle — ``head``, a gap and
    ``tail``. Two thirds of ``room`` go to the head. With ``on_lines`` each cut moves to a line
    boundary when one lies in the outer half of its side (so no half line is shown)."""
    head_len = room * 2 // 3
    tail_len = room - head_len
    source = tail if tail else head
    shown_head = head[:head_len]
    shown_tail = source[max(len(source) - tail_len, 0) :] if tail_len else ""
    if on_lines:
        cut = shown_head.rfind("\n")
        if cut > head_len // 2:
            shown_head = shown_head[: cut + 1]
        nl = shown_tail.find("\n")
        if 0 <= nl < len(shown_tail) // 2:
            shown_tail = shown_tail[nl + 1 :]
    return shown_head, shown_tail


def elided_marker(elided: int, total: int, note: str = "") -> str:
    """The line that stands where ``head_tail`` cut ``elided`` of ``total`` characters."""
    return f"\n… [{elided} characters elided of {total}{'; ' + note if note else ''}] …\n"


def head_tail(
    text: str,
    limit: int,
    *,
    note: str = "",
    marker: Callable[[int], str] | None = None,
    on_lines: bool = False,
) -> tuple[str, int]:
    """Cut ``text`` to about ``limit`` characters keeping its head and tail.

    Returns the text and how many characters were elided (0 when it fit). The marker line
    (``elided_marker`` with ``note``, or ``marker(elided)``) is added to the kept ``limit``
    characters; ``on_lines`` as in ``ends``."""
    if len(text) <= limit:
        return text, 0
    head, tail = ends(text, max(limit, 2), on_lines=on_lines)
    elided = len(text) - len(head) - len(tail)
    line = marker(elided) if marker is not None else elided_marker(elided, len(text), note)
    return head + line + tail, elided


def dropped_marker(dropped: int, total: int) -> str:
    """The line that stands where a capture dropped ``dropped`` of a stream's ``total``
    characters while it was being produced."""
    return f"\n… [{dropped} characters dropped while running; {total} were produced in all] …\n"


def captured(head: str, tail: str, total: int) -> str:
    """The kept text of a bounded capture: ``head``, and when the stream outgrew the capture,
    the dropped marker and ``tail``."""
    if not tail:
        return head
    return head + dropped_marker(total - len(head) - len(tail), total) + tail
