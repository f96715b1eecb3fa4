"""Facts about processes that tests check (Linux: read from ``/proc``)."""

from __future__ import annotations

import contextlib
import os
import signal
import time


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (or dead and being reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def descendants(pid: int) -> dict[int, str]:
    """Every living descendant of ``pid`` (children in a new session included: they keep their
    parent), with its command line; read from ``/proc``."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found: dict[int, str] = {}
    stack = list(children.get(pid, []))
    while stack:
        child = stack.pop()
        if child in found or not alive(child):
            continue
        found[child] = command_line(child)
        stack += children.get(child, [])
    return found


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def outliving(started: dict[int, str], grace: float = 5.0) -> dict[int, str]:
    """Which of ``started`` (pid → command line, as ``descendants`` read them) still live
    ``grace`` seconds on — a pid reused by another program does not count — after they are
    killed, so that nothing a test started is left behind either way."""
    deadline = time.monotonic() + grace
    left = dict(started)
    while left and time.monotonic() < deadline:
        left = {p: c for p, c in left.items() if alive(p) and command_line(p) == c}
        if left:
            time.sleep(0.1)
    for p in left:
        with contextlib.suppress(OSError):
            os.kill(p, signal.SIGKILL)
    return left


def running_with_arg(arg: str) -> list[int]:
    """Living pids whose command line has ``arg`` as one of its arguments."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
        except OSError:
            continue
        if arg.encode() in argv and alive(int(name)):
            found.append(int(name))
    return found
