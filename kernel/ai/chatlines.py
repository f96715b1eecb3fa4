"""The persona's chat, as text: a message's task (``@kli`` stripped, ``undo`` recognised) and
each step of a run as a line of the chat (status line, the reply's end).

Plain data in, plain text out, so it is tested without a server.
"""

from __future__ import annotations

import re

from kli.tools.agent import Event, Finished, Held, Stopped

MENTION = re.compile(r"^\s*@kli\b[:,]?\s*", re.IGNORECASE)
UNDO = re.compile(r"^\s*undo(\s+(this|the\s+last|last)\s+turn)?\s*[.!]?\s*$", re.IGNORECASE)
CONTEXT_CHARS = 6000  # characters of the notebook's cells, and of the image summary, the agent starts from


def strip_mention(body: str) -> str:
    """The task: the message without a leading ``@kli`` (routing is by metadata, the
    mention is only text)."""
    return MENTION.sub("", body, count=1).strip()


def is_undo(task: str) -> bool:
    """``undo``, ``undo this turn``, ``undo the last turn`` / ``undo last turn``."""
    return bool(UNDO.match(task))


# -- the steps as chat lines ------------------------------------------------------------------
def _md(text: str) -> str:
    """Plain text safe in one Markdown line of the chat (no HTML, no emphasis by accident)."""
    return re.sub(r"([\\`*<>])", r"\\\1", text)


def step_line(event: Event) -> str | None:
    """The chat line for one event, or None for events shown otherwise (a call's start goes to
    the status line; the answer ends the reply)."""
    kind = event.kind
    if kind in ("call", "answer"):
        return None
    if isinstance(event, Held):
        return f"- ‖ {_md(event.line())}\n"  # in the fonts of a bare Debian Chromium (⏸ is not)
    if isinstance(event, Stopped):
        return f"- ■ {_md(event.line())}\n"
    if kind == "reply":
        calls = getattr(event, "calls", [])
        if not calls:  # its text is the answer, shown in full at the end
            return None
    return f"- {_md(event.line())}\n"


def status_of(event: Event) -> str | None:
    """What the chat's status line says while this step runs."""
    if event.kind == "call":
        tool, target = getattr(event, "tool", ""), getattr(event, "target", "")
        return f"is running {tool} {target}".rstrip() + "…"
    if isinstance(event, Held):
        return f"is waiting for your review of {event.proposal}…"
    if event.kind in ("outcome", "decided"):
        return "is thinking…"
    return None


def ending(event: Finished, label: str) -> str:
    """The reply's end: the answer, then how the run stopped, its tokens, and its session."""
    tokens = f", {event.usage['total']} tokens" if "total" in event.usage else ""
    turns = f"{event.turns} turn{'s' if event.turns != 1 else ''}"
    answer = event.answer.strip() if event.answer else "(the model gave no answer)"
    return (f"\n{answer}\n\n_{_md(event.stopped)} after {turns}{tokens} · session "
            f"{_md(label)} · `@kli undo` takes this turn back_\n")


def bounded_block(text: str, limit: int = CONTEXT_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying so."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[… {len(text) - limit} more characters; read it for the rest]"
