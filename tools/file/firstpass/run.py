"""One run of the first pass's engine: started before the caller's walk, collected after it.

Contract::

    start(jail, translation, top, max_bytes=..., name_glob=...) -> Running | str (why not)
    Running.finish(deadline) -> Counts | str (why not)      (asked again: the same answer)
    Running.done() / Running.cancel()
    listing_for(running, jail, pattern, started) -> Listing | None   (kli-scan's, for walk(listed=))

The engine is the one ``binaries.locate`` gives (kli-scan, else rg); it runs in the workspace
root with an empty environment and the pattern as ``rust_regex`` translated it, over the bytes
as they are. Its output and its log go to unnamed temporary files, not pipes, so it never
stalls on a full pipe while the caller walks; each engine's module (``kli_scan``, ``rg``) holds
its command line and the parsers of what it wrote.
"""

from __future__ import annotations

import os
import select
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from kli.tools.core.jail import Jail
from kli.tools.file import walk as walk_mod
from kli.tools.file.firstpass import binaries, kli_scan, rg
from kli.tools.file.firstpass.rust_regex import Translation
from kli.tools.file.walk import VCS_DIRS, Listing


@dataclass(frozen=True)
class Counts:
    """The engine's answer: ``lines[rel]`` matching lines of each text file it read whole."""

    lines: dict[str, int]
    seconds: float
    verdicts: dict[str, str]  # rel -> "binary" | "large": why it left a file out
    # The verdicts name every file left out as binary or large, by its exact bytes (kli-scan's
    # records): nothing can forge them, the caller needs no check of the walk's names.
    exact_names: bool = False
    # kli-scan's listing of the folder (every file and symlink whose name the glob admits):
    # it stands in for the caller's walk (``walk.walk(listed=)``). None from rg.
    listing: Listing | None = None
    program: str = binaries.RG  # which engine answered (details.engine_pass)
    note: str = ""  # why kli-scan did not serve, when rg answered


class Running:
    """An engine started by ``start``; ``finish`` waits for its counts."""

    def __init__(self, proc: subprocess.Popen[bytes], out: Any, log: Any, top: str,
                 started: float, max_bytes: int, scan: bool = False, note: str = ""):
        self.proc, self.out, self.log, self.top = proc, out, log, top
        self.started, self.max_bytes = started, max_bytes
        self.scan = scan  # kli-scan's records, not rg's counts and log
        self.name = binaries.SCAN if scan else binaries.RG
        self._result: Counts | str | None = None
        self.note = note  # why kli-scan did not serve (``binaries.locate``), when this is rg

    def finish(self, deadline: float) -> Counts | str:
        """The counts, or why there are none (its error, out of time: it is then killed).
        Asked again, the same answer."""
        if self._result is None:
            self._result = self._finish(deadline)
        return self._result

    def listing(self, deadline: float) -> Listing | None:
        """kli-scan's listing of the folder (waiting for it), or None (rg, or no answer)."""
        got = self.finish(deadline) if self.scan else None
        return got.listing if isinstance(got, Counts) else None

    def _finish(self, deadline: float) -> Counts | str:
        try:
            code = _wait(self.proc, deadline)
            if code is None:
                self.cancel()
                return "rg ran out of the search's time"
            self.log.seek(0)
            # The log is read a line at a time: on a tree of 420,000 files rg's is ~28 MB,
            # which read whole (bytes, text, lines) would triple search's peak memory.
            log = (raw.decode("utf-8", "surrogateescape").rstrip("\n") for raw in self.log)
            if code not in (0, 1) or (self.scan and code != 0):  # rg's 1: no line matched
                err = [x for x in log if x.strip() and not x.startswith(rg.DEBUG)]
                return f"{self.name} refused the pattern ({err[-1] if err else f'exit {code}'})"
            self.out.seek(0)
            if self.scan:
                lines, verdicts, listing = kli_scan.parse(self.out.read(), self.top)
                return Counts(lines, time.monotonic() - self.started, verdicts,
                              exact_names=True, listing=listing, program=binaries.SCAN)
            lines = rg.parse_counts(self.out.read(), self.top)  # the bytes dropped once parsed
            verdicts = rg.parse_verdicts(log, self.top, self.max_bytes)
            return Counts(lines, time.monotonic() - self.started, verdicts, note=self.note)
        finally:
            self.out.close()
            self.log.close()

    def done(self) -> bool:
        """Whether the engine has exited (``finish`` would not wait)."""
        return self.proc.poll() is not None

    def cancel(self) -> None:
        """Stop the engine (the search no longer needs it)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.out.close()
        self.log.close()


def listing_for(running: Running | None, jail: Jail, pattern: str,
                started: float) -> Listing | None:
    """The listing that stands in for the walk of ``pattern`` (``walk.walk(listed=)``): kli-scan's,
    waited for until the walk's time bound (begun at ``started``) ends, when it was started over
    the folder that walk visits whole; else None (the caller walks, rg or not running
    meanwhile)."""
    if running is None or not running.scan:
        return None
    if walk_mod.whole_folder(jail, pattern) != running.top:
        return None
    return running.listing(started + walk_mod.MAX_SECONDS)


def _wait(proc: subprocess.Popen[bytes], deadline: float) -> int | None:
    """The engine's exit status, or None at the deadline. Waits on a pidfd where there is one:
    ``Popen.wait(timeout=)`` polls with sleeps of up to 50 ms, which a fast search would feel."""
    left = max(deadline - time.monotonic(), 0.05)
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is not None:
        try:
            fd = pidfd_open(proc.pid)
        except OSError:  # already reaped, or no pidfd in this kernel
            pass
        else:
            try:
                ready, _, _ = select.select([fd], [], [], left)
            finally:
                os.close(fd)
            return proc.wait() if ready else None
    try:
        return proc.wait(timeout=left)
    except subprocess.TimeoutExpired:
        return None


def start(
    jail: Jail,
    translation: Translation,
    top: str,
    *,
    max_bytes: int,
    name_glob: str | None = None,
) -> Running | str:
    """Start the engine over the folder ``top`` (root-relative, "" for the root) so the caller
    can walk meanwhile; a string says why none can serve (not there, under the root, no
    start)."""
    binary, why = binaries.locate(jail)
    if binary is None:
        return why
    scan = os.path.basename(binary) == binaries.SCAN
    if scan:
        args = kli_scan.argv(binary, translation.pattern, top, max_bytes=max_bytes,
                             max_entries=walk_mod.MAX_ENTRIES, skip_dirs=VCS_DIRS,
                             name_glob=name_glob)
    else:
        args = rg.argv(binary, translation.pattern, top, max_bytes=max_bytes,
                       skip_dirs=VCS_DIRS, name_glob=name_glob)
    out = tempfile.TemporaryFile()
    log = tempfile.TemporaryFile()
    try:
        proc = subprocess.Popen(
            args, cwd=jail.root, env={}, stdin=subprocess.DEVNULL, stdout=out,
            stderr=log, close_fds=True,
        )
    except OSError as exc:
        out.close()
        log.close()
        return f"rg could not start ({exc})"
    return Running(proc, out, log, top, time.monotonic(), max_bytes, scan, why)
