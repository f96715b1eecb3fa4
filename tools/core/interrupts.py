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

``stoppable()`` marks a tool call running on a thread other than the main one (a kernel's tool
subshell), which SIGINT never reaches: ``stop_threads()`` — what the kernel runs on an interrupt
— raises ``KeyboardInterrupt`` in each such thread (through ``raise_in_thread``, so a commit in
progress still finishes first) and calls the stop each registered (a call's cancel event, so a
command waiting on its child is killed too). Leaving the block drops a stop sent but not yet
delivered, so it never lands outside the call.

``on_main(cancel)`` marks a call running on the main thread (an ``eval`` in the kernel) that a
cancel of its own request stops without stopping anything else: ``stop_main_call(cancel)``
sends ``STOP_SIGNAL`` (SIGUSR2) to the main thread, whose handler (``install_stop_signal``)
raises ``KeyboardInterrupt`` only while the main thread is still in that call and its cancel is
set — a person's cell, another call, or a signal arriving late are left alone. It is deferred
inside a commit like SIGINT.

``recording()`` gives a tool call a journal of the commits made during it (``note_commit``):
``Workspace.call`` reads it when a call is interrupted, so the result says whether the change
was written or not.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import importlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

# The C functions under ``signal.signal`` / ``signal.getsignal``, without the module's enum
# wrapping: a section swaps four handlers in and out, and the wrapper's conversions were most of
# a section's cost (several sections per kernel message). SIG_DFL / SIG_IGN come back as ints.
_set_handler: Callable[[int, Any], Any] = importlib.import_module("_signal").signal
_get_handler: Callable[[int], Any] = importlib.import_module("_signal").getsignal

# A targeted stop of the main thread's call (``stop_main_call``); None where there is none.
STOP_SIGNAL: int | None = getattr(signal, "SIGUSR2", None)
DEFERRED_SIGNALS = tuple(
    s for s in (*(getattr(signal, n, None) for n in ("SIGINT", "SIGALRM", "SIGTERM")), STOP_SIGNAL)
    if s
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
    module docstring). Reentrant; an inner section changes nothing.

    No moment of its own entry or exit can leave a section open (which would make every later
    section on the thread a nested one that defers nothing): the entry runs inside the
    ``try``, so what lands there runs the exit; the exit first closes the section under the
    lock (nothing can land before that: the signals are recorded and the exceptions held), and
    a signal arriving after that while its handler is still the recording one — an exit cut
    short while it put the handlers back — is passed through to the handler it replaced, which
    is put back then."""
    ident = threading.get_ident()
    if ident in _held:  # only this thread adds or removes its own key
        yield
        return
    live = True
    caught: list[tuple[int, FrameType | None]] = []
    swapped: dict[int, Any] = {}

    def record(signum: int, frame: FrameType | None) -> None:
        if live:
            caught.append((signum, frame))
            return
        previous = swapped[signum]  # the section is over: deliver as if it had never been
        _set_handler(signum, previous)
        _deliver(signum, frame, previous)

    try:
        with _lock:
            held: list[type[BaseException]] = []
            undelivered = _sent.pop(ident, None)
            if undelivered is not None:  # sent just before the section: hold it too
                _CLEAR_ASYNC_EXC(ident, None)
                held.append(undelivered)
            _held[ident] = held
        if threading.current_thread() is threading.main_thread():
            for sig in DEFERRED_SIGNALS:
                previous = _unwrapped(sig, _get_handler(sig))
                if previous is None:  # installed from C: it cannot be put back, leave it alone
                    continue
                swapped[sig] = previous
                _recorders[record] = swapped
                _set_handler(sig, record)
        yield
    finally:
        with _lock:
            live = False
            pending = _held.pop(ident, [])
        for sig, previous in swapped.items():
            _set_handler(sig, previous)
        _recorders.pop(record, None)
        for signum, frame in caught:
            _deliver(signum, frame, swapped[signum])
        for exc_type in pending:
            raise exc_type


# A section's recording handler → the handlers it replaced: a section whose exit was cut short
# left its recorder installed, and the next section puts back what that one replaced.
_recorders: dict[Callable[..., Any], dict[int, Any]] = {}


def _unwrapped(sig: int, handler: Any) -> Any:
    while handler in _recorders:
        handler = _recorders[handler].get(sig, signal.SIG_DFL)
    return handler


def _deliver(signum: int, frame: FrameType | None, handler: Any) -> None:
    """Run what ``handler`` (a signal's handler, as ``signal.getsignal`` gives it) would."""
    if callable(handler):
        handler(signum, frame)
    elif handler == signal.SIG_DFL:
        signal.raise_signal(signum)


_stoppable: dict[int, Callable[[], None] | None] = {}  # thread in a stoppable call → its stop
_stops_sent: set[int] = set()  # threads sent a stop's KeyboardInterrupt, maybe undelivered


class stoppable:
    """A call on this thread that ``stop_threads`` interrupts while inside the block;
    ``on_stop`` is called too (from another thread). ``close()`` (what leaving the block does)
    is idempotent: a caller that catches a late ``KeyboardInterrupt`` calls it again."""

    def __init__(self, on_stop: Callable[[], None] | None = None) -> None:
        self.ident = threading.get_ident()
        self.on_stop = on_stop

    def __enter__(self) -> stoppable:
        with _lock:
            _stoppable[self.ident] = self.on_stop
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with _lock:
            _stoppable.pop(self.ident, None)
            if self.ident in _stops_sent:
                _stops_sent.discard(self.ident)
                if _sent.get(self.ident) is KeyboardInterrupt:
                    _sent.pop(self.ident, None)
                    _CLEAR_ASYNC_EXC(self.ident, None)
                held = _held.get(self.ident)
                if held and KeyboardInterrupt in held:
                    held.remove(KeyboardInterrupt)


def stop_threads() -> int:
    """Interrupt every call inside ``stoppable`` (see the module docstring); how many. Not
    from a signal handler: it takes the lock a handler may have interrupted."""
    with _lock:
        idents = list(_stoppable)
    return sum(stop_thread(ident) for ident in idents)


def stop_thread(ident: int) -> bool:
    """Interrupt the call inside ``stoppable`` on thread ``ident`` alone, as ``stop_threads``
    does each (an agent loop cancelling its own call); False when that thread is in none."""
    with _lock:
        if ident not in _stoppable:
            return False
        on_stop = _stoppable[ident]
        _stops_sent.add(ident)
        if ident in _held:
            _held[ident].append(KeyboardInterrupt)
        else:
            _sent[ident] = KeyboardInterrupt
            _SET_ASYNC_EXC(ident, KeyboardInterrupt)
    if on_stop is not None:
        on_stop()
    return True


_main_call: threading.Event | None = None  # the cancel event of the main thread's call


@contextlib.contextmanager
def on_main(cancel: threading.Event) -> Iterator[None]:
    """The main thread runs the call ``cancel`` belongs to, inside the block."""
    global _main_call
    previous = _main_call
    _main_call = cancel
    try:
        yield
    finally:
        _main_call = previous


def stop_main_call(cancel: threading.Event) -> bool:
    """Interrupt the main thread's call if it is the one ``cancel`` belongs to (``cancel`` set
    already); False when it is not running there or this process cannot be signalled so."""
    main = threading.main_thread().ident
    if _main_call is not cancel or STOP_SIGNAL is None or main is None:
        return False
    if signal.getsignal(STOP_SIGNAL) is not _on_stop_signal:
        return False
    signal.pthread_kill(main, STOP_SIGNAL)
    return True


def _on_stop_signal(signum: int, frame: FrameType | None) -> None:
    call = _main_call
    if call is not None and call.is_set():
        raise KeyboardInterrupt


def install_stop_signal() -> bool:
    """Handle ``STOP_SIGNAL`` (from the main thread, once): False when there is none, or the
    image's code has a handler of its own for it."""
    if STOP_SIGNAL is None or threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(STOP_SIGNAL) not in (signal.SIG_DFL, _on_stop_signal):
        return False
    signal.signal(STOP_SIGNAL, _on_stop_signal)
    return True


_journal: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "kli_commit_journal", default=None
)


@contextlib.contextmanager
def recording(commits: list[dict[str, Any]] | None = None) -> Iterator[list[dict[str, Any]]]:
    """Collect the commits made inside the block (``note_commit``), e.g. during one call, in
    ``commits`` (a new list when None)."""
    commits = [] if commits is None else commits
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
