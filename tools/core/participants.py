"""Parts of a recorded change that are not files: the hook through which a layer above core
(the live image: ``kli.tools.image.record``) records what a call changed and takes it back with
the change's files, without core importing it.

A *participant* is registered once (``register``) by the layer that owns it. For every recorded
call (``kli.tools.core.undo.track`` / ``finish``) core calls ``begin`` before the tool runs and
``end`` after; a ``Part`` that ``end`` returns becomes one entry of the call's change (a
checkpoint of the participant's ``kind``, its ``summary`` in ``Checkpoint.part``, shown as
``path``; kept in this process's memory, ``keep`` / ``kept``, not in the checkpoint store: the
record it stands for lives and dies with the process, and writing it to disk would cost every
call a synced write), and ``bind`` tells the participant the change id its record now belongs
to. On an
undo or redo (``undo.take_back``) core hands each participant the checkpoints of its kind:
``check`` says what is no longer as the change left it (a refusal names them, unless
``force``) and gives a plan; ``apply`` carries it out after the files are written and returns
the ``Part`` of what it changed (so that the undo is itself undoable) and notes for the person
(what it could not put back). Every method must never raise for what it records; an exception
is reported in the result, not raised.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from kli.tools.core.checkpoints import Checkpoint
    from kli.tools.core.registry import Call


@dataclass
class Part:
    """What a participant recorded of one call: ``kind`` (its checkpoints' kind), ``path`` (how
    the timeline names it), ``summary`` (JSON kept in the checkpoint), ``text`` (a line for the
    call's result; "" for none) and ``bind`` (called with the change id once the change is recorded)."""

    kind: str
    path: str
    summary: dict[str, Any]
    text: str
    bind: Callable[[str], None]


class Participant(Protocol):
    kind: str

    def begin(self, call: Call, settings: dict[str, Any]) -> Any:
        """Before the call runs: a token for ``end`` (None: nothing to record for it)."""

    def end(self, call: Call, token: Any, settings: dict[str, Any]) -> Part | None:
        """After it ran: what it changed (None: nothing)."""

    def check(self, call: Call, cps: list[Checkpoint], force: bool) -> tuple[list[str], Any]:
        """Before an undo writes anything: what is no longer as the changes of ``cps`` (newest
        first) left it, one phrase each, and a plan for ``apply``."""

    def apply(self, call: Call, plan: Any) -> tuple[Part | None, list[str]]:
        """Take the changes back: the part of what this changed, and notes for the person."""


_registered: list[Participant] = []
_collect = threading.local()
_kept: dict[str, collections.deque[Checkpoint]] = {}  # root -> the parts' checkpoints, oldest first
_kept_lock = threading.Lock()


def keep(root: str, cp: Checkpoint, bound: int) -> None:
    """Keep ``cp`` (a part of a change under ``root``) for the timeline, the newest ``bound``."""
    with _kept_lock:
        found = _kept.setdefault(root, collections.deque())
        found.append(cp)
        while len(found) > max(bound, 0):  # a deque: the oldest go at no cost per call
            found.popleft()


def kept(root: str) -> list[Checkpoint]:
    """The parts' checkpoints of changes under ``root`` made in this process."""
    with _kept_lock:
        return list(_kept.get(root, ()))


def register(participant: Participant) -> None:
    """Add ``participant`` (once per kind)."""
    if all(p.kind != participant.kind for p in _registered):
        _registered.append(participant)


def registered() -> list[Participant]:
    return list(_registered)


def kinds() -> set[str]:
    return {p.kind for p in _registered}


def of_kind(kind: str) -> Participant | None:
    return next((p for p in _registered if p.kind == kind), None)


def begin_all(call: Call, settings: dict[str, Any]) -> tuple[list[tuple[Participant, Any]], list[str]]:
    """Each participant's token for ``call``, and the errors of those that failed."""
    tokens: list[tuple[Participant, Any]] = []
    errors: list[str] = []
    for p in list(_registered):
        try:
            token = p.begin(call, settings)
        except Exception as exc:
            errors.append(f"{p.kind}: not recorded ({type(exc).__name__}: {exc})")
            continue
        if token is not None:
            tokens.append((p, token))
    return tokens, errors


def end_all(call: Call, tokens: list[tuple[Participant, Any]],
            settings: dict[str, Any]) -> tuple[list[Part], list[str]]:
    parts: list[Part] = []
    errors: list[str] = []
    for p, token in tokens:
        try:
            part = p.end(call, token, settings)
        except Exception as exc:
            errors.append(f"{p.kind}: not recorded ({type(exc).__name__}: {exc})")
            continue
        if part is not None:
            parts.append(part)
    return parts, errors


class collecting:
    """While a recorded call runs on this thread, parts an undo's ``apply`` made go to
    ``parts`` (``add``), so the undo's own change holds them."""

    def __init__(self, parts: list[Part]) -> None:
        self.parts = parts

    def __enter__(self) -> list[Part]:
        self.previous = getattr(_collect, "parts", None)
        _collect.parts = self.parts
        return self.parts

    def __exit__(self, *exc: object) -> None:
        _collect.parts = self.previous


def add(part: Part) -> bool:
    """Add ``part`` to the change of the recorded call running on this thread; False when
    none is (the part is then not recorded)."""
    parts: list[Part] | None = getattr(_collect, "parts", None)
    if parts is None:
        return False
    parts.append(part)
    return True
