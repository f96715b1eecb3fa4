"""Keeping results small: head-and-tail cuts that say what was dropped."""

from __future__ import annotations


def head_tail(text: str, limit: int, *, note: str = "") -> tuple[str, int]:
    """Cut ``text`` to about ``limit`` characters keeping its head and tail.

    Returns the text and how many characters were elided (0 when it fit). The marker line says
    how much was dropped; ``note`` is appended to it (e.g. where the full text is kept).
    """
    if len(text) <= limit:
        return text, 0
    keep = max(limit, 2)
    head = keep * 2 // 3
    tail = keep - head
    elided = len(text) - head - tail
    marker = f"\n… [{elided} characters elided of {len(text)}{'; ' + note if note else ''}] …\n"
    return text[:head] + marker + (text[-tail:] if tail else ""), elided
