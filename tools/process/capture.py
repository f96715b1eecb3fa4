"""Capturing what ONE thread prints, bounded, while every other thread prints as before.

``capture_thread_output(cap, tail)`` installs a routing proxy on ``sys.stdout`` and
``sys.stderr`` (once, shared by concurrent captures) that sends writes made by the capturing
thread into a ``BoundedText`` sink and everything else to the stream that was there before. The
sink counts and drops what exceeds its cap as it arrives, so a printing loop cannot grow memory.

When the last capture ends, the original streams are put back — unless something else replaced
``sys.stdout`` meanwhile, in which case the proxy is left in place (it forwards everything).

Limits: only Python-level writes through ``sys.stdout``/``sys.stderr`` are seen; output written
to file descriptors 1 and 2 directly (``os.system``, C extensions) goes where it always went.
Threads started by the captured code print to the original streams.

While a thread is captured, ``sys.stdin`` reads as end of file for it (nobody can type an
answer to ``input()``; under ``kli serve --stdio`` stdin is the request stream).
"""

from __future__ import annotations

import contextlib
import io
import sys
import threading
from collections.abc import Iterator
from typing import Any, TextIO

from kli.tools.process.runner import BoundedText

_lock = threading.Lock()
_users = 0


class _Router(io.TextIOBase):
    """A text stream that writes to the calling thread's sink, or to ``original``."""

    def __init__(self, original: TextIO) -> None:
        self.original = original
        self.sinks: dict[int, BoundedText] = {}

    def write(self, s: str) -> int:
        sink = self.sinks.get(threading.get_ident())
        if sink is None:
            return self.original.write(s)
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        sink.add(s)
        return len(s)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if threading.get_ident() not in self.sinks:
            with contextlib.suppress(Exception):
                self.original.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return threading.get_ident() not in self.sinks and bool(self.original.isatty())

    def fileno(self) -> int:
        return self.original.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.original, "encoding", "utf-8") or "utf-8"

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


class _StdinRouter(io.TextIOBase):
    """``sys.stdin`` that is at end of file for capturing threads (``input()`` raises EOFError
    instead of reading the host's stdin — in ``kli serve --stdio`` that is the request
    stream) and the original stream for every other thread."""

    def __init__(self, original: TextIO) -> None:
        self.original = original
        self.closed_for: set[int] = set()

    def _mine(self) -> bool:
        return threading.get_ident() in self.closed_for

    def read(self, size: int | None = -1) -> str:
        return "" if self._mine() else self.original.read(-1 if size is None else size)

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        return "" if self._mine() else self.original.readline(-1 if size is None else size)

    def readlines(self, hint: int = -1) -> list[str]:  # type: ignore[override]
        return [] if self._mine() else self.original.readlines(hint)

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]
        return iter(()) if self._mine() else iter(self.original)

    def readable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return not self._mine() and bool(self.original.isatty())

    def fileno(self) -> int:
        return self.original.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.original, "encoding", "utf-8") or "utf-8"

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


@contextlib.contextmanager
def capture_thread_output(cap: int, tail: int = 0) -> Iterator[tuple[BoundedText, BoundedText]]:
    """Capture this thread's ``print`` output to (stdout, stderr) sinks of ``cap`` characters."""
    global _users
    ident = threading.get_ident()
    out, err = BoundedText(cap, tail), BoundedText(cap, tail)
    with _lock:
        for name in ("stdout", "stderr"):
            current = getattr(sys, name)
            if not isinstance(current, _Router):
                setattr(sys, name, _Router(current))
        if sys.stdin is not None and not isinstance(sys.stdin, _StdinRouter):
            sys.stdin = _StdinRouter(sys.stdin)
        stdin = sys.stdin if isinstance(sys.stdin, _StdinRouter) else None
        stdin_was_closed = stdin is not None and ident in stdin.closed_for
        if stdin is not None:
            stdin.closed_for.add(ident)
        routers: tuple[_Router, _Router] = (sys.stdout, sys.stderr)  # type: ignore[assignment]
        # A capture nested in the same thread (an eval calling eval) shadows the outer one.
        outer = (routers[0].sinks.get(ident), routers[1].sinks.get(ident))
        routers[0].sinks[ident] = out
        routers[1].sinks[ident] = err
        _users += 1
    try:
        yield out, err
    finally:
        with _lock:
            for router, previous in zip(routers, outer, strict=True):
                if previous is None:
                    router.sinks.pop(ident, None)
                else:
                    router.sinks[ident] = previous
            if stdin is not None and not stdin_was_closed:
                stdin.closed_for.discard(ident)
            _users -= 1
            if _users == 0:
                for name, router in zip(("stdout", "stderr"), routers, strict=True):
                    if getattr(sys, name) is router and not router.sinks:
                        setattr(sys, name, router.original)
                if stdin is not None and sys.stdin is stdin and not stdin.closed_for:
                    sys.stdin = stdin.original
