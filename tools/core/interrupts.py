"""Interrupts wait for a commit: a change that has begun to land finishes or is rolled back.

What can cut a tool call short: ``KeyboardInterrupt`` (SIGINT, the kernel's stop button),
``eval``'s deadline (SIGALRM on the main thread, an asynchronous exception on any other), the
memory guard's ``MemoryError`` (an asynchronous exception), SIGTERM. ``deferred()`` marks a
critical section — the renames that make a multi-file change visible, and their rollback —
inside which none of them is delivered: on the main thread it swaps those signals' handlers
for ones that only record the signal, and an asynchronous exception sent to a thread inside a
section (``raise_in_thread``, the one pair of ``PyThreadState_SetAsyncExc`` handles the process
uses) is held back. When the section ends the handlers are put back and what arrived is
delivered: the recorded signal's own handler runs (so SIGINT raises ``KeyboardInterrupt`` as it
would have), then any held exception is raised.

``recording()`` gives a tool call a journal of the commits made during it (``note_commit``):
``Workspace.call`` reads it when a call is interrupted, so the result says whether the change
was written or not.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

DEFERRED_SIGNALS = tuple(
    s for s in (getattr(signal, n, None) for n in ("SIGINT", "SIGALRM", "SIGTERM")) if s
)

# Two private handles on one C function (indexing makes a new one; attribute access is shared
# with every other user of ctypes.pythonapi): one raises, one clears (a NULL exception).
_SET_ASYNC_EXC = ctypes.pythonapi["PyThreadState_SetAsyncExc"]
_SET_ASYNC_EXC.argtypes = [ctypes.c_ulong, ctypes.py_object]
_CLEAR_ASYNC_EXC = ctypes.pythonapi["PyThreadState_SetAsyncExc"]
_CLEAR_ASYNC_EXC.argtypes = [ctypes.c_ulong, ctypes.c_void_p]

_lock = threading.Lock()
_held: dict[int, list[type[BaseException]]] = {}  # thread in a section → exceptions held back
_sent: dict[int, type[BaseException]] = {}  # last exception sent to a thread, maybe undelivered


def raise_in_thread(ident: int, exc_type: type[BaseException]) -> None:
    """Raise ``exc_type`` in thread ``ident`` at its next bytecode, or, if that thread is in a
    ``deferred()`` section, when the section ends."""
    with _lock:
        if ident in _held:
            _held[ident].append(exc_type)
            return
        _sent[ident] = exc_type
        _SET_ASYNC_EXC(ident, exc_type)


def clear_in_thread(ident: int) -> None:
    """Drop an exception raised in thread ``ident`` and not yet delivered (held ones too)."""
    with _lock:
        _sent.pop(ident, None)
        if ident in _held:
            _held[ident].clear()
        _CLEAR_ASYNC_EXC(ident, None)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """A critical section: signals and asynchronous exceptions wait until it ends (see the
    module docstring). Reentrant; an inner section changes nothing."""
    ident = threading.get_ident()
    with _lock:
        if ident in _held:
            nested = True
        else:
            nested = False
            held: list[type[BaseException]] = []
            undelivered = _sent.pop(ident, None)
            if undelivered is not None:  # sent just before the section: hold it too
                _CLEAR_ASYNC_EXC(ident, None)
                held.append(undelivered)
            _held[ident] = held
    if nested:
        yield
        return
    caught: list[tuple[int, FrameType | None]] = []
    swapped: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():

        def record(signum: int, frame: FrameType | None) -> None:
            caught.append((signum, frame))

        for sig in DEFERRED_SIGNALS:
            previous = signal.getsignal(sig)
            if previous is None:  # installed from C: it cannot be put back, leave it alone
                continue
            swapped[sig] = previous
            signal.signal(sig, record)
    try:
        yield
    finally:
        for sig, previous in swapped.items():
            signal.signal(sig, previous)
        with _lock:
            pending = _held.pop(ident, [])
        for signum, frame in caught:
            previous = swapped[signum]
            if callable(previous):
                previous(signum, frame)
            elif previous == signal.SIG_DFL:
                signal.raise_signal(signum)
        for exc_type in pending:
            raise exc_type


_journal: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "kli_commit_journal", default=None
)


@contextlib.contextmanager
def recording() -> Iterator[list[dict[str, Any]]]:
    """Collect the commits made inside the block (``note_commit``), e.g. during one call."""
    commits: list[dict[str, Any]] = []
    token = _journal.set(commits)
    try:
        yield commits
    finally:
        _journal.reset(token)


def note_commit(status: str, paths: list[str]) -> None:
    """Record that a commit of ``paths`` ended ``written`` or ``rolled_back``."""
    commits = _journal.get()
    if commits is not None:
        commits.append({"status": status, "paths": list(paths)})
