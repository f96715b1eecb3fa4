"""Running a command in a child process with bounded capture and a hard deadline.

Shared by kli's ``bash`` and slmcode's ``ws_shell``. ``run_command``:

- starts the child in its own session (so its own process group, with no controlling
  terminal: a program that opens ``/dev/tty`` fails instead of waiting for a keyboard);
- feeds ``input_text`` to its stdin (nothing — an immediate end of file — by default);
- reads stdout and stderr concurrently while it runs, each into a BOUNDED buffer of at most
  ``cap`` characters: the first ``cap - tail`` characters are kept as the head, the last
  ``tail`` characters in a rolling tail, everything between is counted and dropped at once.
  Memory stays bounded however much the command prints (``yes | head -c 5G``);
- on timeout sends SIGTERM to the whole process group, then SIGKILL after ``KILL_GRACE``;
- on cancel (``cancel``, a ``threading.Event`` set by another thread, by default the one
  ``CANCEL`` holds for the calling context: the kernel sets it when a client cancels the
  request) kills the tree the same way, within ``CANCEL_POLL`` seconds, and reports
  ``cancelled``;
- when the main child exits but something it started in the background still holds the
  pipes, reads for ``ORPHAN_GRACE`` more seconds, then kills the process group and stops
  reading (``orphans_killed``). A background job whose output was redirected away from the
  pipes (``server > log 2>&1 &``) does not hold them and is left running.

A kill (timeout, cancel, orphans, interrupt) reaches the whole tree the command started, not only its
process group: the child's environment carries ``KLI_RUN=<token>`` (``MARK_VAR``), which every
descendant inherits, and after the group kill ``/proc`` is scanned for processes holding the
token — those that left the group (``setsid``, ``nohup`` in a new session, a daemon's double
fork) get SIGKILL too, rescanning until none is left (``escaped`` counts them). What cannot be
killed (another user's, after ``sudo``) is reported as still running (``survivors``), never
as killed. Limits: a descendant started with a cleared environment (``env -i``) is not found;
without ``/proc`` (macOS) only the group is killed.

Output is decoded as UTF-8 with invalid bytes replaced; counts are in characters.
"""

from __future__ import annotations

import codecs
import contextlib
import contextvars
import fcntl
import itertools
import os
import select
import signal
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Literal

# Seconds between SIGTERM and SIGKILL when a process group is killed.
KILL_GRACE = 0.5
# Seconds to keep reading after the main child exits while something else holds the pipes.
ORPHAN_GRACE = 0.5
# Bytes asked for per read; the pipes are enlarged to this size where the OS allows.
READ_SIZE = 1 << 20
# How often (seconds) the exit of the main child is polled where pidfd is unavailable.
POLL_INTERVAL = 0.05
# The environment variable that marks every process a run started (see the module docstring).
MARK_VAR = "KLI_RUN"
# Rounds of scan-and-SIGKILL for marked processes outside the group (each catches what the
# previous round's processes forked before they died).
TREE_KILL_ROUNDS = 20
# How often (seconds) a run with a cancel event checks it.
CANCEL_POLL = 0.05
# The cancel event of the request the calling context serves (None: not cancellable); the
# kernel's comm hub sets it around a tool call (kli.kernel.comms), ``run_command`` reads it.
CANCEL: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "kli_run_cancel", default=None)
_run_ids = itertools.count(1)


@dataclass
class RunOutcome:
    """What a command did.

    ``stdout``/``stderr`` are the kept heads: the whole stream when it fit in ``cap``
    characters, otherwise its first ``cap - tail`` characters. ``stdout_tail``/``stderr_tail``
    are empty when the stream fit, otherwise its last ``tail`` characters (never overlapping
    the head). ``*_total`` count every character produced; ``*_dropped`` what was neither in
    the head nor the tail.
    """

    exit_code: int | None  # None when killed by timeout or cancel; 128 + N when killed by signal N
    stdout: str
    stderr: str
    stdout_total: int
    stderr_total: int
    timed_out: bool
    duration: float
    stdout_tail: str = ""
    stderr_tail: str = ""
    orphans_killed: bool = False
    signal: int | None = None  # the signal that ended the main child, if one did
    escaped: int = 0  # processes killed that had left the group (setsid, daemons)
    survivors: tuple[int, ...] = ()  # pids the run started that could not be killed
    cancelled: bool = False  # its cancel event was set: the tree was killed as on timeout

    def kill_note(self) -> str | None:
        """What the kills reached beyond the main child, in words (None when nothing was
        killed and nothing survived): the note ``bash`` and ``ws_shell`` show."""
        if not (self.orphans_killed or self.escaped or self.survivors):
            return None
        parts = []
        if self.orphans_killed:
            parts.append("background processes still holding the output pipes after the "
                         "command ended were killed")
        if self.escaped:
            parts.append(f"{self.escaped} process(es) that had left the process group "
                         "(setsid, nohup, a daemon) were found by the run's mark and killed too")
        if self.survivors:
            pids = ", ".join(str(p) for p in self.survivors[:10])
            parts.append(f"{len(self.survivors)} process(es) the command started could NOT be "
                         f"killed and are still running (pid {pids}: another user's?)")
        return "; ".join(parts)

    @property
    def stdout_dropped(self) -> int:
        return self.stdout_total - len(self.stdout) - len(self.stdout_tail)

    @property
    def stderr_dropped(self) -> int:
        return self.stderr_total - len(self.stderr) - len(self.stderr_tail)


class BoundedText:
    """A character sink keeping a head of ``head_cap`` and a rolling tail of ``tail_cap``."""

    def __init__(self, cap: int, tail: int = 0) -> None:
        tail = max(0, min(tail, cap))
        self.head_cap = cap - tail
        self.tail_cap = tail
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self.total = 0

    def add(self, text: str) -> None:
        if not text:
            return
        self.total += len(text)
        room = self.head_cap - self._head_len
        if room > 0:
            part = text[:room]
            self._head.append(part)
            self._head_len += len(part)
            text = text[room:]
            if not text:
                return
        if self.tail_cap == 0:
            return
        if len(text) >= self.tail_cap:
            self._tail.clear()
            self._tail.append(text[-self.tail_cap :])
            self._tail_len = self.tail_cap
            return
        self._tail.append(text)
        self._tail_len += len(text)
        while self._tail_len > self.tail_cap:
            excess = self._tail_len - self.tail_cap
            first = self._tail[0]
            if len(first) <= excess:
                self._tail.popleft()
                self._tail_len -= len(first)
            else:
                self._tail[0] = first[excess:]
                self._tail_len -= excess

    @property
    def head(self) -> str:
        return "".join(self._head)

    @property
    def tail(self) -> str:
        """The rolling tail; empty unless the text overflowed the head and the tail together
        (when it did not, head + tail is the whole text and the tail is folded into the head)."""
        if self.total <= self.head_cap + self.tail_cap:
            return ""
        return "".join(self._tail)

    def kept(self) -> tuple[str, str]:
        """(head, tail) as ``RunOutcome`` holds them."""
        if self.total <= self.head_cap + self.tail_cap:
            return self.head + "".join(self._tail), ""
        return self.head, self.tail


@dataclass
class Tree:
    """Every process one command started: its process group (``group``, the leader's pid) and,
    through ``MARK_VAR=token`` in their environment, those that left it. ``escaped`` and
    ``survivors`` record what the kills reached beyond the group and what could not be killed.
    Shared by ``run_command`` and background jobs (``jobs.py``)."""

    token: bytes
    group: int = 0
    escaped: set[int] = field(default_factory=set)
    survivors: set[int] = field(default_factory=set)

    @classmethod
    def mark(cls, env: dict[str, str] | None) -> tuple[Tree, dict[str, str]]:
        """A new tree and the environment (``env``, or this process's) for its leader."""
        token = f"{os.getpid()}-{next(_run_ids)}-{time.monotonic_ns()}"
        child_env = dict(os.environ if env is None else env)
        child_env[MARK_VAR] = token
        return cls(token.encode()), child_env

    def marked(self) -> list[int]:
        """Pids of live processes holding the mark (empty without ``/proc``; a zombie's
        environment reads empty, so the dead are not listed)."""
        needle = MARK_VAR.encode() + b"=" + self.token + b"\0"
        me = os.getpid()
        found = []
        try:
            names = os.listdir("/proc")
        except OSError:
            return []
        for name in names:
            if not name.isdigit() or int(name) == me:
                continue
            try:
                with open(f"/proc/{name}/environ", "rb") as fh:
                    data = fh.read()
            except OSError:  # gone, or another user's
                continue
            if needle in data:
                found.append(int(name))
        return found

    def signal(self, sig: int) -> bool:
        """Send ``sig`` to the group and to every marked process; True when anything was
        signalled."""
        sent = False
        if self.group > 0:  # never 0: killpg(0) would signal this process's own group
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.group, sig)
                sent = True
        for pid in self.marked():
            sent = self._send(pid, sig) or sent
        return sent

    def finish(self) -> None:
        """SIGKILL the group and every process still marked, rescanning until none is left
        (``TREE_KILL_ROUNDS``); what is still there then is a survivor."""
        if self.group > 0:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.group, signal.SIGKILL)
        for _ in range(TREE_KILL_ROUNDS):
            pids = self.marked()
            if not pids:
                self.survivors.clear()
                return
            for pid in pids:
                self._send(pid, signal.SIGKILL)
            time.sleep(0.01)  # SIGKILL is delivered asynchronously; let the dead go
        self.survivors.update(self.marked())

    def _send(self, pid: int, sig: int) -> bool:
        try:
            outside = os.getpgid(pid) != self.group
            os.kill(pid, sig)
        except ProcessLookupError:
            return False
        except PermissionError:
            self.survivors.add(pid)
            return False
        if outside:
            self.escaped.add(pid)
        return True


def _kill_group(child: _Child) -> None:
    """SIGTERM the child's tree, give it ``KILL_GRACE`` to go, then SIGKILL whatever is left
    (``Tree.finish``)."""
    child.tree.signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.proc.wait(KILL_GRACE)
    # Members that ignored SIGTERM, a leader that exited before its children, escapees.
    child.tree.finish()


def _enlarge_pipe(fd: int) -> None:
    """Grow a pipe to ``READ_SIZE`` (Linux; 1031 is F_SETPIPE_SZ before Python exposed it)."""
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), READ_SIZE)


# How a pump ended: both pipes closed and the leader exited; the deadline passed; the leader
# exited but something it started held the pipes past ORPHAN_GRACE; the cancel event was set.
Ended = Literal["done", "timeout", "orphans", "cancelled"]


def run_command(
    argv: list[str],
    *,
    cwd: str,
    input_text: str = "",
    timeout: float,
    cap: int,
    env: dict[str, str] | None = None,
    tail: int = 0,
    executable: str | None = None,
    cancel: threading.Event | None = None,
) -> RunOutcome:
    """Run ``argv`` in ``cwd`` and return what it did; see the module docstring.

    ``env`` is the child's whole environment (None: inherit this process's). ``tail`` is how
    many of the ``cap`` characters per stream are reserved for the end of a long stream (0:
    head only). ``executable`` is the program to start when it is not ``argv[0]`` looked up
    in PATH (``argv[0]`` is still what the program sees as its name). Raises ``OSError`` when
    the program cannot be started (missing shell, bad ``cwd``). ``cancel`` (default: the
    ``CANCEL`` of the calling context): once set, the run ends as a timeout does, but reports
    ``cancelled``; set before the start, nothing is started.

    Three steps: spawn (``_Child.spawn``), pump the pipes until the child is done or must be
    killed (``_Pump.run``), reap (``_reap``). The common case — a short command that prints
    little — is kept lean (``bash`` running ``true`` is benchmarked against a bare
    ``subprocess.run``): one ``poll`` object, no selector layer, and the sinks and decoders of
    a stream are made only when it has data.
    """
    started = time.monotonic()
    deadline = started + timeout
    if cancel is None:
        cancel = CANCEL.get()
    if cancel is not None and cancel.is_set():
        return RunOutcome(None, "", "", 0, 0, False, 0.0, cancelled=True)
    child = _Child.spawn(argv, cwd=cwd, env=env, executable=executable,
                         with_stdin=bool(input_text))
    pump = _Pump(child, input_text, cap, tail, cancel)
    # An interrupt (KeyboardInterrupt, a caller's deadline exception) ends the run as a timeout
    # does: nothing is left running behind.
    ended: Ended = "timeout"
    try:
        ended = pump.run(deadline)
    except BaseException:
        _kill_group(child)
        raise
    finally:
        child.close()
        ended = _reap(child, ended, deadline)
    return _outcome(child, pump, ended, started)


@dataclass
class _Child:
    """A started child in its own session, and the descriptors this process holds for it:
    the read ends of its stdout and stderr, the write end of its stdin (-1: its stdin is
    /dev/null), a pidfd (-1: none on this platform; the exit is polled)."""

    proc: subprocess.Popen[bytes]
    out_fd: int
    err_fd: int
    stdin_fd: int
    pidfd: int
    fds: list[int]  # every descriptor still open, closed by ``close``
    tree: Tree  # what the child starts; MARK_VAR is in its environment

    @classmethod
    def spawn(cls, argv: list[str], *, cwd: str, env: dict[str, str] | None,
              executable: str | None, with_stdin: bool) -> _Child:
        # The pipes are made here and handed to Popen as descriptors: Popen's own PIPE wraps
        # each in a buffered file object the pump never uses (a measurable cost on short
        # commands). Python makes them close-on-exec; the child's dup2 onto 0, 1 and 2 clears
        # that there.
        fds: list[int] = []
        tree, env = Tree.mark(env)
        try:
            out_fd, out_w = os.pipe()
            fds += (out_fd, out_w)
            err_fd, err_w = os.pipe()
            fds += (err_fd, err_w)
            stdin_r, stdin_fd = os.pipe() if with_stdin else (-1, -1)
            if with_stdin:
                fds += (stdin_fd, stdin_r)
            proc = subprocess.Popen(
                argv,
                executable=executable,
                cwd=cwd,
                env=env,
                stdin=stdin_r if with_stdin else subprocess.DEVNULL,
                stdout=out_w,
                stderr=err_w,
                start_new_session=True,
                close_fds=True,
            )
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        # The child holds its own copies: only the ends this process reads or writes stay open.
        for fd in (out_w, err_w, stdin_r):
            if fd >= 0:
                os.close(fd)
                fds.remove(fd)
        pidfd = -1
        with contextlib.suppress(AttributeError, OSError):
            pidfd = os.pidfd_open(proc.pid)  # type: ignore[attr-defined,unused-ignore]
            fds.append(pidfd)
        tree.group = proc.pid
        return cls(proc, out_fd, err_fd, stdin_fd, pidfd, fds, tree)

    def close_stdin(self) -> None:
        """The child sees the end of its input."""
        os.close(self.stdin_fd)
        self.fds.remove(self.stdin_fd)
        self.stdin_fd = -1

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds.clear()


class _Pump:
    """Feeds a child's stdin and reads its stdout and stderr into bounded sinks, all through
    one ``poll(2)`` object (it needs no kernel object of its own, as epoll would: that matters
    for short commands)."""

    def __init__(self, child: _Child, input_text: str, cap: int, tail: int,
                 cancel: threading.Event | None = None) -> None:
        self.child = child
        self.cancel = cancel
        self.cap = cap
        self.tail = tail
        # Made on a stream's first data: fd -> (sink, incremental decoder).
        self.streams: dict[int, tuple[BoundedText, codecs.IncrementalDecoder]] = {}
        self.enlarged: set[int] = set()
        self.poller = select.poll()
        self.poller.register(child.out_fd, select.POLLIN)
        self.poller.register(child.err_fd, select.POLLIN)
        self.open_reads = 2
        # A memoryview, so slicing off what was sent copies nothing.
        self.pending = memoryview(input_text.encode("utf-8", "surrogateescape")
                                  if input_text else b"")
        self.sent = 0
        if child.stdin_fd >= 0:
            os.set_blocking(child.stdin_fd, False)
            self.poller.register(child.stdin_fd, select.POLLOUT)
        if child.pidfd >= 0:
            self.poller.register(child.pidfd, select.POLLIN)
        self.leader_exited_at: float | None = None

    def run(self, deadline: float) -> Ended:
        """Pump until both pipes closed and the leader exited, or kill the group at the
        deadline or ``ORPHAN_GRACE`` after the leader exited with its pipes still held."""
        child, proc = self.child, self.child.proc
        # With a pidfd the loop also waits for the leader's exit after both pipes close, so
        # no polling wait is needed afterwards (Popen.wait(timeout) sleeps in steps).
        while self.open_reads or (child.pidfd >= 0 and self.leader_exited_at is None):
            if not self.open_reads and proc.poll() is not None:
                break  # already a zombie: no need to sleep until the pidfd says so
            now = time.monotonic()
            if self.leader_exited_at is None and child.pidfd < 0 and proc.poll() is not None:
                self.leader_exited_at = now
            exited_at = self.leader_exited_at
            if self.open_reads and exited_at is not None and now - exited_at >= ORPHAN_GRACE:
                _kill_group(child)  # the main child is gone; what it started holds the pipes
                return "orphans"
            if now >= deadline:
                _kill_group(child)
                return "timeout"
            if self.cancel is not None and self.cancel.is_set():
                _kill_group(child)
                return "cancelled"
            wait = deadline - now
            if exited_at is not None:
                wait = min(wait, exited_at + ORPHAN_GRACE - now)
            elif child.pidfd < 0:
                wait = min(wait, POLL_INTERVAL)
            if self.cancel is not None:
                wait = min(wait, CANCEL_POLL)
            # poll takes milliseconds and rounds a fraction up, so a wait never ends early.
            for fd, _ in self.poller.poll(max(wait, 0.0) * 1000):
                if fd == child.pidfd:
                    self.poller.unregister(fd)
                    self.leader_exited_at = time.monotonic()
                elif fd == child.stdin_fd:
                    self._feed(fd)
                else:
                    self._drain(fd)
        return "done"

    def _feed(self, fd: int) -> None:
        """Write the next piece of the input; close stdin once all is sent or the child
        stopped reading it."""
        try:
            self.sent += os.write(fd, self.pending[self.sent : self.sent + 65536])
        except OSError:  # EPIPE: the child stopped reading its stdin
            self.sent = len(self.pending)
        if self.sent >= len(self.pending):
            self.poller.unregister(fd)
            self.child.close_stdin()

    def _drain(self, fd: int) -> None:
        """Read what an output pipe holds into its sink; at its end, flush its decoder."""
        data = os.read(fd, READ_SIZE)
        if not data:
            if fd in self.streams:
                sink, decoder = self.streams[fd]
                sink.add(decoder.decode(b"", final=True))
            self.poller.unregister(fd)
            self.open_reads -= 1
            return
        stream = self.streams.get(fd)
        if stream is None:
            stream = self.streams[fd] = (
                BoundedText(self.cap, self.tail),
                codecs.getincrementaldecoder("utf-8")("replace"),
            )
        if len(data) >= 65536 and fd not in self.enlarged:
            # A full default pipe: a big producer, worth fewer, larger reads.
            self.enlarged.add(fd)
            _enlarge_pipe(fd)
        stream[0].add(stream[1].decode(data))

    def kept(self, fd: int) -> tuple[str, str, int]:
        """(head, tail, total) of a stream; a stream that never had data is empty."""
        stream = self.streams.get(fd)
        if stream is None:
            return "", "", 0
        head, tail = stream[0].kept()
        return head, tail, stream[0].total


def _reap(child: _Child, ended: Ended, deadline: float) -> Ended:
    """Collect the leader's exit status and leave nothing of a timed-out group running; how
    the run ended (a leader that closed its own output and outlives the deadline makes a
    finished pump a timeout)."""
    proc = child.proc
    if proc.returncode is None and proc.poll() is None:
        if ended == "done":
            # Both pipes closed but the leader runs on: wait for it within the deadline.
            try:
                proc.wait(max(deadline - time.monotonic(), 0.0))
            except subprocess.TimeoutExpired:
                ended = "timeout"
                _kill_group(child)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(KILL_GRACE)
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait()
    if ended in ("timeout", "cancelled"):
        # Make sure no process of the tree outlives a kill, even one that ignored TERM.
        child.tree.finish()
    return ended


def _outcome(child: _Child, pump: _Pump, ended: Ended, started: float) -> RunOutcome:
    code = child.proc.returncode
    killed_by = -code if code is not None and code < 0 else None
    timed_out = ended == "timeout"
    exit_code = None if timed_out or ended == "cancelled" else (128 + killed_by if killed_by is not None else code)
    out_head, out_tail, out_total = pump.kept(child.out_fd)
    err_head, err_tail, err_total = pump.kept(child.err_fd)
    return RunOutcome(
        exit_code=exit_code,
        stdout=out_head,
        stderr=err_head,
        stdout_total=out_total,
        stderr_total=err_total,
        timed_out=timed_out,
        duration=time.monotonic() - started,
        stdout_tail=out_tail,
        stderr_tail=err_tail,
        orphans_killed=ended == "orphans",
        signal=killed_by,
        escaped=len(child.tree.escaped),
        survivors=tuple(sorted(child.tree.survivors)),
        cancelled=ended == "cancelled",
    )
