"""A memory allowance for code evaluated in this process: eval's guard against the
out-of-memory killer, which would take the whole kernel (the live image) with it.

While a guard is active, one shared watcher thread samples the process's resident memory
every ``POLL`` seconds. When it has grown by more than the guard's allowance since the guard
began, ``MemoryError`` is raised in the guarded thread (``PyThreadState_SetAsyncExc``: at its
next bytecode), and again at every sample while it stays over (code that swallows the error
and goes on allocating is stopped again ``POLL`` seconds later, not let run).

The allowance is ``SHARE`` of the memory available when the guard begins: the smaller of the
machine's ``MemAvailable`` and the headroom of the process's cgroup (a container's or
Binder's limit), so the rest of the system, and this process's other threads, keep the
remainder. ``KLI_EVAL_MEMORY_MB`` in the kernel's environment sets a smaller one, or turns
the guard off with 0.

Limits, by design:
- Linux only (``/proc``); elsewhere the guard does nothing and says so (``Guard.active``).
- Growth step by step is caught within a sample (a loop appending to a list or a dict); a single C
  call that allocates more than is left (``bytearray(10**12)`` fails on its own, but
  ``numpy.ones`` of that size fills memory before returning) can still reach the OOM killer.
- A process-wide limit on the address space (``RLIMIT_AS``) would catch that too, but it
  binds every thread and every child process started meanwhile (a ``bash`` call from another
  session, a runtime that reserves gigabytes of address space up front), so it is not used.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from kli.tools.core import interrupts

# Share of the available memory an evaluation may add to the process.
SHARE = 0.75
# The environment variable that sets the allowance in MB (0: no guard); see default_allowance.
ENV = "KLI_EVAL_MEMORY_MB"
MB = 2**20
# Seconds between samples of the resident memory while a guard is active.
POLL = 0.01
# Seconds the available-memory figure is reused.
AVAILABLE_TTL = 1.0

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

# The one pair of PyThreadState_SetAsyncExc handles lives in kli.tools.core.interrupts, which
# holds an exception back while its thread commits a change (interrupts.deferred).
raise_in_thread = interrupts.raise_in_thread
clear_in_thread = interrupts.clear_in_thread


_statm: tuple[int, int] | None = None  # (pid, descriptor) of /proc/self/statm, kept open
_statm_lock = threading.Lock()


def rss_bytes() -> int | None:
    """This process's resident memory now (None without ``/proc``). The file is kept open and
    re-read with ``pread`` (a seventh of the cost of opening it each time); a forked child
    opens its own, as the inherited one describes the parent."""
    global _statm
    pid = os.getpid()
    try:
        held = _statm
        if held is None or held[0] != pid:
            with _statm_lock:
                if _statm is None or _statm[0] != pid:
                    if _statm is not None:
                        with contextlib.suppress(OSError):
                            os.close(_statm[1])  # this process's copy of the parent's
                    _statm = (pid, os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC))
                held = _statm
        return int(os.pread(held[1], 256, 0).split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo", "rb") as fh:
            for line in fh:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_headroom(
    cgroup_file: str = "/proc/self/cgroup", fs_root: str = "/sys/fs/cgroup"
) -> int | None:
    """What the process's cgroup may still use — v2 ``memory.max - memory.current``, or v1
    ``memory.limit_in_bytes - memory.usage_in_bytes`` — at the process's own cgroup, else at
    the mount's root (a container sees its own cgroup there). None when unlimited or unknown."""
    try:
        with open(cgroup_file, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    candidates: list[tuple[str, str]] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":  # v2: the unified hierarchy
            for base in (fs_root + path.rstrip("/"), fs_root):
                candidates.append((base + "/memory.max", base + "/memory.current"))
        elif "memory" in controllers.split(","):
            for base in (fs_root + "/memory" + path.rstrip("/"), fs_root + "/memory"):
                candidates.append(
                    (base + "/memory.limit_in_bytes", base + "/memory.usage_in_bytes")
                )
    for limit_path, usage_path in candidates:
        try:
            with open(limit_path, encoding="ascii") as fh:
                limit_text = fh.read().strip()
            with open(usage_path, encoding="ascii") as fh:
                usage = int(fh.read().strip())
            if limit_text == "max":
                return None
            limit = int(limit_text)
        except (OSError, ValueError):
            continue
        if limit >= 1 << 60:  # v1 says "unlimited" with a huge number
            return None
        return max(limit - usage, 0)
    return None


_available_cache: tuple[float, int | None] = (-1.0, None)


def available_bytes() -> int | None:
    """Memory this process could still get: the smaller of MemAvailable and the cgroup's
    headroom (None when neither is known). Remembered for ``AVAILABLE_TTL`` seconds, as an
    agent's evaluations come in quick runs and reading it costs more than a short one."""
    global _available_cache
    now = time.monotonic()
    stamp, value = _available_cache
    if now - stamp < AVAILABLE_TTL:
        return value
    known = [v for v in (_meminfo_available(), _cgroup_headroom()) if v is not None]
    value = min(known) if known else None
    _available_cache = (now, value)
    return value


def default_allowance() -> tuple[int | None, str, str | None]:
    """(allowance in bytes, or None for no guard; where it comes from, for messages; a note
    when ``ENV`` is set to something unusable, which then counts as unset).

    ``ENV`` unset: ``SHARE`` of ``available_bytes()``. ``ENV=0``: no guard. ``ENV=N``: N MB,
    but never more than the share (beyond it the OOM killer, not the guard, would act)."""
    raw = os.environ.get(ENV, "").strip()
    mb: int | None = None
    note = None
    if raw:
        try:
            mb = int(raw)
            if mb < 0:
                raise ValueError
        except ValueError:
            mb = None
            note = (
                f"{ENV}={os.environ[ENV]!r} is not a whole number of megabytes (0 turns the "
                f"guard off); the default, {SHARE:.0%} of the memory available, applies"
            )
    if mb == 0:
        return None, f"{ENV}=0", None  # off: the available memory is not even read
    available = available_bytes()
    share = int(available * SHARE) if available is not None else None
    share_reason = f"{SHARE:.0%} of the memory available when it started"
    if mb is None:
        return share, share_reason, note
    if share is not None and mb * MB > share:
        return share, share_reason + f" (less than {ENV}={mb})", None
    return mb * MB, f"{ENV}={mb}", None


@dataclass
class Guard:
    """One guarded evaluation. ``active`` is False where memory cannot be watched (no
    ``/proc``) or the guard is turned off; ``fired`` tells whether its MemoryError was raised;
    ``reason`` says where the allowance comes from and ``note`` what was wrong with ``ENV``."""

    ident: int
    baseline: int
    allowance: int
    active: bool
    reason: str = ""
    note: str | None = None
    fired: bool = False


class _Watcher:
    """The one thread that samples memory for the active guards. It samples a ``POLL`` after
    a guard begins (an evaluation shorter than that costs no sample) and waits, without
    waking, while there is no guard."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.guards: list[Guard] = []
        self.thread: threading.Thread | None = None
        self.idle = False

    def add(self, guard: Guard) -> None:
        with self.cond:
            self.guards.append(guard)
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(
                    target=self._run, name="kli-eval-memory", daemon=True
                )
                self.thread.start()
            elif self.idle:
                self.cond.notify()

    def remove(self, guard: Guard) -> None:
        with self.cond:
            if guard in self.guards:
                self.guards.remove(guard)

    def _run(self) -> None:
        while True:
            with self.cond:
                while not self.guards:
                    self.idle = True
                    self.cond.wait()
                self.idle = False
            time.sleep(POLL)
            rss = rss_bytes()
            if rss is None:
                continue
            with self.cond:
                for guard in self.guards:  # only guards still running: never finished code
                    if rss - guard.baseline > guard.allowance:
                        guard.fired = True
                        raise_in_thread(guard.ident, MemoryError)


_watcher = _Watcher()


@contextlib.contextmanager
def guarded(allowance: int | None = None) -> Iterator[Guard]:
    """Guard the calling thread while the block runs; ``allowance`` in bytes (default:
    ``default_allowance()``). The block sees ``MemoryError`` when it grows the process's
    resident memory by more than the allowance."""
    ident = threading.get_ident()
    reason, note = "given by the caller", None
    if allowance is None:
        allowance, reason, note = default_allowance()
    baseline = rss_bytes()
    if baseline is None or allowance is None:
        yield Guard(ident, 0, 0, active=False, reason=reason, note=note)
        return
    guard = Guard(ident, baseline, allowance, active=True, reason=reason, note=note)
    _watcher.add(guard)
    try:
        yield guard
    finally:
        # A MemoryError delivered inside remove() could leave the guard listed, and the watcher
        # would go on raising into whatever this thread runs next: retry until it is gone.
        removed = False
        while not removed:
            try:
                _watcher.remove(guard)
                removed = True
            except MemoryError:
                pass
        if guard.fired:  # one raised but not yet delivered must not land after the block
            clear_in_thread(guard.ident)
