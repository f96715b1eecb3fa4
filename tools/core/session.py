"""Per-session state: what this caller has read, its pending repair candidates, its loop-guard
history, its checklist and its edit telemetry.

A Workspace has a default session; hosts open one per connection (each agent comm gets its
own), so two agents attached at once never see each other's anchors or candidates.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kli.tools.core.proposal import Proposal

_ids = itertools.count(1)
# Session ids are unique across processes, not only within one: the change store under
# ``.kli/checkpoints/`` is shared by every kernel and `kli` process on a root, and the timeline
# and ``undo session=`` group by id (a counter alone gave each kernel's first session ``s1``).
_PROCESS = os.urandom(3).hex()
# What the remembered versions (FileView.base) of one session take in all, about: 64 MiB.
# Each line counts its characters plus LINE_OVERHEAD, what holding it as its own str costs
# besides them — with 30,000-line files the overhead alone was as much as the text again,
# and a search showing 100 such files peaked at 158 MB against its 150 MB bound.
MAX_BASE_CHARS = 64 * 1024 * 1024
LINE_OVERHEAD = 57  # sys.getsizeof("") (a compact str, 49 bytes) + its slot in the tuple (8)


def version_of(lines: Sequence[str]) -> tuple[str, ...]:
    """The lines of the whole text a view was taken from, in order: what it remembers so a
    later edit can tell which lines changed since (``FileView.base``).

    The line strings themselves, shared with the caller's list (no copy of the text, no
    hashing): comparing a version with the same lines is a pointer check per line, and the
    hash-per-line it replaced cost 16 ms for 100,000 lines on every edit. What all views of a
    session hold is bounded (``MAX_BASE_CHARS``)."""
    return tuple(lines)


@dataclass
class FileView:
    """What a session was shown of one keyed text: a file (keyed by its real path) today, a
    notebook cell (``PATH#CELL_ID``) later — nothing here is specific to files.

    ``texts`` maps 1-based line numbers to the full text of each row shown (an anchor is valid
    only if the line at that number is still that text); ``hashes`` gives their HH anchors.
    ``cut`` holds the numbers of lines that were shown cut (too wide), which an edit may not
    replace unseen. ``base`` is ``version_of`` the whole text the session last saw (read,
    search, or its own edit wrote), or None when the text was streamed and never held whole;
    an edit compares it with the current text to find what changed behind the session's back.
    """

    texts: dict[int, str] = field(default_factory=dict)
    cut: set[int] = field(default_factory=set)
    whole: bool = True
    at: float = field(default_factory=time.time)
    base: tuple[str, ...] | None = field(default=None, repr=False)

    @property
    def base_chars(self) -> int:
        """About what ``base`` takes in memory (``MAX_BASE_CHARS``, ``LINE_OVERHEAD``)."""
        if self.base is None:
            return 0
        return sum(map(len, self.base)) + len(self.base) * LINE_OVERHEAD


@dataclass
class Session:
    id: str
    label: str = ""
    views: dict[str, FileView] = field(default_factory=dict)
    candidates: dict[str, Proposal] = field(default_factory=dict)  # pending, by id
    recent_calls: deque[str] = field(default_factory=lambda: deque(maxlen=32))
    todo: list[dict[str, Any]] = field(default_factory=list)
    telemetry: Counter[str] = field(default_factory=Counter)
    state: dict[str, Any] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    _base_sizes: dict[str, int] = field(default_factory=dict, repr=False)
    _base_total: int = field(default=0, repr=False)
    # Called once when the session ends (its background jobs are killed, its traces removed).
    closers: dict[str, Callable[[], None]] = field(default_factory=dict, repr=False)

    @classmethod
    def new(cls, label: str = "") -> Session:
        n = next(_ids)
        return cls(id=f"s{n}-{_PROCESS}", label=label or f"session {n}")

    def has_read(self, real: str) -> bool:
        return real in self.views

    def record_view(self, real: str, view: FileView) -> None:
        """Store ``view`` as the newest; past ``MAX_BASE_CHARS`` of remembered versions in all,
        the oldest views forget theirs (an edit of such a file then checks the rows shown
        around its targets instead of the whole version)."""
        self._base_total -= self._base_sizes.pop(real, 0)
        self.views.pop(real, None)
        self.views[real] = view
        if view.base is not None:
            self._base_sizes[real] = view.base_chars
            self._base_total += self._base_sizes[real]
        for key in list(self._base_sizes):
            if self._base_total <= MAX_BASE_CHARS or key == real:
                break
            self._base_total -= self._base_sizes.pop(key)
            self.views[key] = dataclasses.replace(self.views[key], base=None)

    def forget(self, real: str) -> None:
        self.views.pop(real, None)
        self._base_total -= self._base_sizes.pop(real, 0)

    def close(self) -> None:
        """Run every closer once (each guarded: one failing does not skip the others)."""
        closers, self.closers = self.closers, {}
        for closer in closers.values():
            try:
                closer()
            except Exception:  # a closer must not stop the others from running
                import traceback

                traceback.print_exc()
