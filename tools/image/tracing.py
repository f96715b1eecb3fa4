"""Tracing functions of the live image: the machinery behind ``trace``, ``untrace`` and
``trace_read``.

``trace`` replaces the attribute that holds a function (a module's or the notebook's global, a
class's method — static and class methods too) with a wrapper that records each call into the
tracing session's ring: the arguments (each through ``saferepr``, cut to ``ARG_CHARS``), the
return value or the exception, the duration and the thread. The ring keeps the newest
``TRACE_RING`` calls and counts what it evicted. ``untrace`` puts the original back; a
session's traces are all removed when it ends.

A name defined again after it was traced (a cell's new ``def``, ``redefine``) is no longer
traced, and ``untrace`` then leaves the new definition in place.

Limits: only calls that look the name up where it was replaced are seen — a reference taken
before (``from mod import f``, a callback already registered, a bound method already held)
calls the original. A function already traced by another session cannot be traced again.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from kli.tools.core.session import Session
from kli.tools.process.saferepr import saferepr

TRACE_RING = 200  # calls kept per session (kli keeps the most recent 200 lines)
ARG_CHARS = 200  # characters of each argument's, and the result's, repr
STATE_KEY = "traces"
RING_KEY = "trace_ring"

_lock = threading.Lock()
# (id(owner), attr) -> the active trace; one trace per place, whoever set it.
_active: dict[tuple[int, str], Trace] = {}


def _cut(text: str) -> str:
    return text if len(text) <= ARG_CHARS else text[:ARG_CHARS] + "…"


@dataclass
class Ring:
    calls: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=TRACE_RING))
    evicted: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, entry: dict[str, Any]) -> None:
        with self.lock:
            if len(self.calls) == TRACE_RING:
                self.evicted += 1
            self.calls.append(entry)

    def take(self, clear: bool) -> tuple[list[dict[str, Any]], int]:
        with self.lock:
            calls, evicted = list(self.calls), self.evicted
            if clear:
                self.calls.clear()
                self.evicted = 0
            return calls, evicted


@dataclass
class Trace:
    dotted: str
    owner: Any  # module, class, or the namespace dict
    attr: str
    original: Any  # what the owner held (function, staticmethod, classmethod)
    session_id: str
    calls: int = 0
    wrapper: Any = None  # what trace put in place

    def current(self) -> Any:
        if isinstance(self.owner, dict):
            return self.owner.get(self.attr)
        if isinstance(self.owner, type):
            return self.owner.__dict__.get(self.attr)
        return getattr(self.owner, self.attr, None)

    def restore(self) -> bool:
        """Put the original back — unless something else replaced the wrapper meanwhile (a
        cell or ``redefine`` defined the name again): that new definition is left alone.
        True when the original was put back."""
        with _lock:
            _active.pop((id(self.owner), self.attr), None)
        if self.current() is not self.wrapper:
            return False
        if isinstance(self.owner, dict):
            self.owner[self.attr] = self.original
        else:
            setattr(self.owner, self.attr, self.original)
        return True


def session_ring(session: Session) -> Ring:
    ring: Ring | None = session.state.get(RING_KEY)
    if ring is None:
        ring = session.state[RING_KEY] = Ring()
    return ring


def session_traces(session: Session) -> dict[str, Trace]:
    traces: dict[str, Trace] | None = session.state.get(STATE_KEY)
    if traces is None:
        traces = session.state[STATE_KEY] = {}

        def untrace_all() -> None:
            for trace in list(traces.values()):
                trace.restore()
            traces.clear()

        session.closers[STATE_KEY] = untrace_all
    return traces


def _wrap(func: Any, dotted: str, ring: Ring, trace: Trace) -> Any:
    def record(args: tuple[Any, ...], kwargs: dict[str, Any], started: float,
               outcome: dict[str, Any]) -> None:
        trace.calls += 1
        shown = [_cut(saferepr(a)) for a in args]
        shown += [f"{k}={_cut(saferepr(v))}" for k, v in kwargs.items()]
        ring.add({"function": dotted, "args": shown, "seconds": round(time.perf_counter()
                  - started, 6), "thread": threading.current_thread().name, "time": time.time(),
                  **outcome})

    if inspect.iscoroutinefunction(func):
        @functools.wraps(func)
        async def traced_async(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                value = await func(*args, **kwargs)
            except BaseException as exc:
                record(args, kwargs, started, {"raised": f"{type(exc).__name__}: {exc}"})
                raise
            record(args, kwargs, started, {"returned": _cut(saferepr(value))})
            return value

        traced_async.__kli_traced__ = True  # type: ignore[attr-defined]
        return traced_async

    @functools.wraps(func)
    def traced(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            value = func(*args, **kwargs)
        except BaseException as exc:
            record(args, kwargs, started, {"raised": f"{type(exc).__name__}: {_cut(str(exc))}"})
            raise
        record(args, kwargs, started, {"returned": _cut(saferepr(value))})
        return value

    traced.__kli_traced__ = True  # type: ignore[attr-defined]
    return traced


def install(session: Session, dotted: str, owner: Any, attr: str) -> Trace:
    """Trace ``owner.attr``; raises ValueError (message to show) when it cannot be."""
    with _lock:
        other = _active.get((id(owner), attr))
    if other is not None and other.current() is not other.wrapper:
        with _lock:  # redefined since it was traced: that trace has ended
            _active.pop((id(owner), attr), None)
        other = None
    if other is not None:
        who = "this session" if other.session_id == session.id else f"session {other.session_id}"
        raise ValueError(f"{dotted} is already traced by {who}; read its calls with trace_read "
                         "(or untrace it first).")
    raw = owner.get(attr) if isinstance(owner, dict) else (
        owner.__dict__.get(attr, getattr(owner, attr, None)) if isinstance(owner, type)
        else getattr(owner, attr, None))
    func = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
    if not callable(func) or isinstance(func, type):
        raise ValueError(f"{dotted} is a {type(raw).__name__}, not a function or method: only "
                         "functions (and methods of classes) can be traced.")
    trace = Trace(dotted=dotted, owner=owner, attr=attr, original=raw, session_id=session.id)
    wrapper = _wrap(func, dotted, session_ring(session), trace)
    if isinstance(raw, staticmethod):
        wrapper = staticmethod(wrapper)
    elif isinstance(raw, classmethod):
        wrapper = classmethod(wrapper)
    trace.wrapper = wrapper
    if isinstance(owner, dict):
        owner[attr] = wrapper
    else:
        setattr(owner, attr, wrapper)
    with _lock:
        _active[(id(owner), attr)] = trace
    session_traces(session)[dotted] = trace
    return trace
