"""Per-session state: what this caller has read, its pending repair candidates, its loop-guard
history, its checklist and its edit telemetry.

A Workspace has a default session; hosts open one per connection (each agent comm gets its
own), so two agents attached at once never see each other's anchors or candidates.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_ids = itertools.count(1)


@dataclass
class FileView:
    """What a session saw of one file when it last read or searched it.

    ``hashes`` maps 1-based line numbers to the HH anchors shown; ``cut`` holds the numbers of
    lines that were shown cut (too wide), which an edit may not replace unseen.
    """

    hashes: dict[int, str] = field(default_factory=dict)
    cut: set[int] = field(default_factory=set)
    whole: bool = True
    at: float = field(default_factory=time.time)


@dataclass
class Candidate:
    """A pending repair preview: the repaired text, the disk text it was computed against, and
    the named reason it was not written automatically."""

    id: str
    path: str  # root-relative, as shown
    real: str
    disk_text: str
    candidate_text: str
    reason: str
    message: str
    session_id: str
    details: dict[str, Any] = field(default_factory=dict)
    created: float = field(default_factory=time.time)


@dataclass
class Session:
    id: str
    label: str = ""
    views: dict[str, FileView] = field(default_factory=dict)
    candidates: dict[str, Candidate] = field(default_factory=dict)
    recent_calls: deque[str] = field(default_factory=lambda: deque(maxlen=32))
    todo: list[dict[str, Any]] = field(default_factory=list)
    telemetry: Counter[str] = field(default_factory=Counter)
    state: dict[str, Any] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    # Called once when the session ends (its background jobs are killed, its traces removed).
    closers: dict[str, Callable[[], None]] = field(default_factory=dict, repr=False)

    @classmethod
    def new(cls, label: str = "") -> Session:
        n = next(_ids)
        return cls(id=f"s{n}", label=label or f"session {n}")

    def has_read(self, real: str) -> bool:
        return real in self.views

    def record_view(self, real: str, view: FileView) -> None:
        self.views[real] = view

    def forget(self, real: str) -> None:
        self.views.pop(real, None)

    def close(self) -> None:
        """Run every closer once (each guarded: one failing does not skip the others)."""
        closers, self.closers = self.closers, {}
        for closer in closers.values():
            try:
                closer()
            except Exception:  # a closer must not stop the others from running
                import traceback

                traceback.print_exc()
