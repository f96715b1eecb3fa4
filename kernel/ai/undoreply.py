"""What the persona says in the chat after ``@kli undo``: words for the person, who reads the
chat, never the agent's hints (no ``repeat with force=true``, no ``redo change=ch-…``: the chat
has no such command; the kli panel's Timeline has Undo anyway and Redo). One pure function, so
each outcome's words are tested without Jupyter AI (docs/jupyter-ai-agents.md)."""

from __future__ import annotations

from typing import Any

PANEL_TEXT = "panel_text"  # an undo refusal's words for a person (kli.tools.core.undo)
TIMELINE = "the kli panel's Timeline"


def undo_label(persona: str, turn_label: str, number: int) -> str:
    """The label of the session ``@kli undo`` runs in, saying who undoes what: the chat's
    persona, in its chat, undoing a turn (``kli in chat a.chat (undoing turn 2)``) — the Timeline
    heads its group so, the activity panel's row and a cell's banner name it ("Undone by kli in
    chat a.chat (undoing turn 2)"). Not the turn's label with "(undo)" added: that read as the
    turn undoing itself, and beside the tool's own "(undo)" as "(undo) (undo)"."""
    chat = turn_label.removesuffix(f" turn {number}")
    return f"{persona} in {chat} (undoing turn {number})"


def _names(details: dict[str, Any]) -> list[str]:
    """What the undo put back: the files and cells, then the live image's names."""
    out = [str(f.get("path")) for f in details.get("files") or [] if isinstance(f, dict)]
    for part in details.get("image") or []:
        if isinstance(part, dict):
            for key in ("created", "rebound", "deleted", "mutated"):
                out += [str(n) for n in part.get(key) or [] if str(n) not in out]
    return out


def undo_reply(number: int, label: str, ok: bool, text: str,
               details: dict[str, Any]) -> tuple[str, bool]:
    """The chat's message for the undo of turn ``number`` (``label``) that returned ``ok``,
    ``text``, ``details``; and whether the turn is taken back (the next ``@kli undo`` takes the
    turn before it)."""
    turn = f"turn {number} ({label})"
    if details.get("status") == "pending":  # held for review: nothing is taken back yet
        return (f"The undo of {turn} waits for you: Accept it (or Reject it) in the kli panel "
                f"— proposal {details.get('proposal')}. Nothing is taken back until you "
                "Accept.\n", False)
    if ok:
        names = _names(details)
        shown = ", ".join(names[:12]) + (" …" if len(names) > 12 else "")
        said = f"Took back {turn}: {shown} as before the turn." if names else f"Took back {turn}."
        lost = [str(n) for n in details.get("not_restored") or []]
        if lost:
            said += " Not taken back: " + "; ".join(lost) + "."
        return said + f" To put it back, use Redo on its entries in {TIMELINE}.\n", True
    if details.get("error") == "not_found":
        return (f"{turn[0].upper()}{turn[1:]} changed nothing that is not undone already: nothing "
                "to take back. `@kli undo` again takes back the turn before it.\n", True)
    if details.get("error") == "changed" and isinstance(details.get(PANEL_TEXT), str):
        return (f"{turn[0].upper()}{turn[1:]} was not undone: {details[PANEL_TEXT]} (In "
                f"{TIMELINE}: Undo this turn, then Undo anyway.)\n", False)
    return f"{turn[0].upper()}{turn[1:]} was not undone: {text[:400]}\n", False
