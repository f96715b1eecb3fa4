"""Background shell jobs: started by ``bash`` with ``run_in_background``, read, listed, killed.

A job is a shell command running in its own session (so its own process group, no terminal),
with stdin at end of file. One reader thread per job drains its stdout and stderr into
``JobStream`` sinks with the same caps as a foreground ``bash`` (``OUTPUT_CAP`` characters per
stream: the first ``OUTPUT_CAP - CAPTURE_TAIL`` kept, the last ``CAPTURE_TAIL`` kept, the rest
counted and dropped as it arrives), so memory stays bounded however long the job runs.

Reads are incremental: each stream keeps a cursor, and a read returns only what was produced
since the previous read (what fell in the dropped middle is counted, not shown).

Jobs belong to the session that started them (``Session.state``); they survive between calls
and end when they exit, are killed (``bash_kill``), pass their own ``timeout``, or their
session ends — a session's closer kills every job's whole process group, and so does the
host's shutdown (``Workspace.close``) and, as a last resort, interpreter exit (``atexit``).

File changes: with change detection on, a job is watched from the tree its start left until
it ends (``_watch``, an ``undo.on_finish`` hook; ``Job.when_done`` runs ``undo.ended`` on the
reader thread before ``done`` is set); what it created, modified or deleted under the root is
one recorded change (``Job.changes``), shown by the first ``bash_output`` after the end and in
a ``call`` event.

Limits (named here): ``MAX_RUNNING_JOBS`` running jobs per session; ``MAX_KEPT_JOBS`` jobs
remembered per session (the oldest finished one is forgotten first). A kill reaches the job's
whole tree as for foreground ``bash`` (``runner.Tree``: its group, and through the mark in
their environment the descendants that left it — ``setsid``, a double-forking daemon). A
kernel killed with SIGKILL runs no clean-up: its jobs are orphaned.
"""

from __future__ import annotations

import atexit
import codecs
import contextlib
import itertools
import os
import select
import signal
import subprocess
import threading
import time
import traceback
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kli.tools.core import undo
from kli.tools.core.registry import Call
from kli.tools.core.result import ToolResult
from kli.tools.core.session import Session
from kli.tools.process.runner import KILL_GRACE, READ_SIZE, BoundedText, Tree

MAX_RUNNING_JOBS = 8
MAX_KEPT_JOBS = 32
MAX_JOB_TIMEOUT = 86_400  # seconds; a background job's own timeout is clamped to this
STATE_KEY = "bash_jobs"

_ids = itertools.count(1)
_all_jobs: weakref.WeakSet[Job] = weakref.WeakSet()


class JobStream(BoundedText):
    """A ``BoundedText`` that also answers "what is new since position ``pos``"."""

    def __init__(self, cap: int, tail: int) -> None:
        super().__init__(cap, tail)
        self.lock = threading.Lock()
        self.cursor = 0  # characters handed out by reads so far

    def add_locked(self, text: str) -> None:
        with self.lock:
            self.add(text)

    def take_new(self) -> tuple[str, str, int]:
        """(head, tail, total) of the characters produced since the last take, in the shape
        ``present.stream_section`` shows: ``tail`` is non-empty only when characters between
        them were dropped (``total - len(head) - len(tail)`` of them)."""
        with self.lock:
            start, end = self.cursor, self.total
            self.cursor = end
            if end <= start:
                return "", "", 0
            head = self.head
            tail = "".join(self._tail)
            # head holds [0, len(head)); the tail buffer holds [end - len(tail), end) — when
            # nothing was dropped that starts right where the head ends.
            head_end, tail_start = len(head), end - len(tail)
            first = head[start:] if start < head_end else ""
            second = tail[max(start, tail_start) - tail_start :]
            if tail_start > max(start, head_end):  # a dropped stretch lies between them
                return first, second, end - start
            return first + second, "", end - start


@dataclass(eq=False)
class Job:
    """One background job. ``exit_code`` is None while it runs (128 + N when signal N ended
    it); ``status`` is running / exited / killed / timed out."""

    id: str
    command: str
    directory: str
    proc: subprocess.Popen[bytes]
    stdout: JobStream
    stderr: JobStream
    tree: Tree
    started: float = field(default_factory=time.time)
    timeout: float | None = None
    ended: float | None = None
    exit_code: int | None = None
    signal: int | None = None
    killed_by: str | None = None  # "bash_kill" | "timeout" | "session end"
    reader: threading.Thread | None = None
    done: threading.Event = field(default_factory=threading.Event)
    pipes_open: bool = True
    # What the job changed under the root (``undo``'s watch): a ToolResult once it ended.
    changes: Any = None
    changes_shown: bool = False  # bash_output showed its files
    watch: Any = None  # its ``undo.Watch`` (change detection on)
    last_change: Any = None  # the change its files so far were last recorded as
    on_exit: Callable[[Job], None] | None = None
    exited: bool = False  # the reader is past the point where it runs ``on_exit``
    exit_lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def pgid(self) -> int:
        return self.proc.pid

    @property
    def running(self) -> bool:
        return self.exit_code is None

    @property
    def status(self) -> str:
        if self.running:
            return "running"
        if self.killed_by == "timeout":
            return "timed out"
        if self.killed_by is not None:
            return "killed"
        return "exited"

    def seconds(self) -> float:
        return (self.ended or time.time()) - self.started

    def kill(self, reason: str) -> bool:
        """SIGTERM the job's whole tree (its group and what left it), SIGKILL what is left
        after ``KILL_GRACE``; True when something was signalled. Idempotent."""
        if self.running and self.killed_by is None:
            self.killed_by = reason
        signalled = self.tree.signal(signal.SIGTERM)
        if signalled:
            # wait for the leader; the reader records its exit code
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(KILL_GRACE)
            self.tree.finish()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(KILL_GRACE)
        self.done.wait(KILL_GRACE * 2)
        return signalled

    def when_done(self, hook: Callable[[Job], None]) -> None:
        """Run ``hook(job)`` once the job has ended, on its reader thread before ``done`` is
        set (so a read that waits for the exit sees what the hook did); at once, here, when
        the job has already ended."""
        with self.exit_lock:
            if not self.exited:
                self.on_exit = hook
                return
        hook(self)

    def facts(self) -> dict[str, Any]:
        return {
            "job_id": self.id,
            "command": self.command,
            "status": self.status,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "pid": self.proc.pid,
            "seconds": round(self.seconds(), 3),
            "stdout_chars": self.stdout.total,  # characters (UTF-8 decoded), as bash counts
            "stderr_chars": self.stderr.total,
            "unread": (self.stdout.total - self.stdout.cursor)
            + (self.stderr.total - self.stderr.cursor),
            **({"change": self.changes.details["change"]}
               if self.changes is not None and "change" in self.changes.details else
               {"change": self.last_change} if self.last_change else {}),
        }

    def describe(self, finished: bool | None = None) -> str:
        """One line: running for how long, or how it ended, with its exit code. ``finished``
        False: running, whatever the process is doing now (a read taken before the job was
        done, whose output may not all be in)."""
        if self.running or finished is False:
            return f"job {self.id} is running ({self.seconds():.1f} s so far)"
        how = {"timed out": f"timed out after {self.timeout:g} s and was killed"
               if self.timeout else "timed out", "killed": f"was killed ({self.killed_by})"}
        head = how.get(self.status, "exited")
        return f"job {self.id} {head}: exit code {self.exit_code} after {self.seconds():.1f} s"


def _drain(job: Job, out_fd: int, err_fd: int) -> None:
    """The reader thread: pipes into the sinks until both close, then the leader's exit."""
    sinks = {out_fd: job.stdout, err_fd: job.stderr}
    decoders = {fd: codecs.getincrementaldecoder("utf-8")("replace") for fd in sinks}
    poller = select.poll()
    for fd in sinks:
        poller.register(fd, select.POLLIN)
    open_fds = set(sinks)
    deadline = job.started + job.timeout if job.timeout else None
    try:
        while open_fds:
            wait_ms = 200.0
            if deadline is not None:
                left = deadline - time.time()
                if left <= 0 and job.running:
                    job.kill("timeout")
                    deadline = None
                    continue
                wait_ms = min(wait_ms, max(left, 0) * 1000)
            if job.running and job.proc.poll() is not None:
                _record_exit(job)
            for fd, _ in poller.poll(wait_ms):
                data = os.read(fd, READ_SIZE)
                if data:
                    sinks[fd].add_locked(decoders[fd].decode(data))
                else:
                    sinks[fd].add_locked(decoders[fd].decode(b"", final=True))
                    poller.unregister(fd)
                    open_fds.discard(fd)
        job.pipes_open = False
        while job.proc.poll() is None:
            if deadline is not None and time.time() >= deadline:
                job.kill("timeout")
                deadline = None
            with contextlib.suppress(subprocess.TimeoutExpired):
                job.proc.wait(0.2)
        _record_exit(job)
    finally:
        for fd in sinks:
            with contextlib.suppress(OSError):
                os.close(fd)
        job.pipes_open = False
        if job.proc.poll() is not None:
            _record_exit(job)
        with job.exit_lock:
            job.exited = True
            hook, job.on_exit = job.on_exit, None
        if hook is not None:
            try:
                hook(job)
            except Exception:  # a broken watcher must never keep the job from ending
                traceback.print_exc()
        job.done.set()


def _record_exit(job: Job) -> None:
    code = job.proc.returncode
    if code is None or job.exit_code is not None:
        return
    job.ended = time.time()
    if code < 0:
        job.signal = -code
        job.exit_code = 128 - code
    else:
        job.exit_code = code


def start_job(
    session: Session,
    argv: list[str],
    *,
    command: str,
    executable: str | None,
    cwd: str,
    input_text: str,
    timeout: float | None,
    cap: int,
    tail: int,
) -> Job:
    """Start ``argv`` as a background job of ``session``; raises ``OSError`` when it cannot
    start and ``RuntimeError`` (with the message to show) when the session has too many
    running jobs."""
    jobs = session_jobs(session)
    running = [j for j in jobs.values() if j.running]
    if len(running) >= MAX_RUNNING_JOBS:
        raise RuntimeError(
            f"{len(running)} background jobs are already running in this session (at most "
            f"{MAX_RUNNING_JOBS}): wait for one to exit (bash_jobs lists them) or stop one "
            "with bash_kill, then start this one again. Nothing was run."
        )
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    stdin_r, stdin_w = os.pipe() if input_text else (-1, -1)
    tree, env = Tree.mark(None)
    try:
        proc = subprocess.Popen(
            argv,
            executable=executable,
            cwd=cwd,
            env=env,
            stdin=stdin_r if input_text else subprocess.DEVNULL,
            stdout=out_w,
            stderr=err_w,
            start_new_session=True,
            close_fds=True,
        )
    except BaseException:
        for fd in (out_r, out_w, err_r, err_w, stdin_r, stdin_w):
            if fd >= 0:
                os.close(fd)
        raise
    tree.group = proc.pid
    for fd in (out_w, err_w, stdin_r):
        if fd >= 0:
            os.close(fd)
    if stdin_w >= 0:
        # fed by its own thread so a job that reads slowly never blocks the call
        threading.Thread(
            target=_feed, args=(stdin_w, input_text), name="kli-job-stdin", daemon=True
        ).start()
    job = Job(
        id=f"job{next(_ids)}",
        command=command,
        directory=cwd,
        proc=proc,
        stdout=JobStream(cap, tail),
        stderr=JobStream(cap, tail),
        tree=tree,
        timeout=timeout,
    )
    job.reader = threading.Thread(
        target=_drain, args=(job, out_r, err_r), name=f"kli-{job.id}", daemon=True
    )
    job.reader.start()
    jobs[job.id] = job
    _all_jobs.add(job)
    _forget_old(jobs)
    return job


def _feed(fd: int, text: str) -> None:
    data = text.encode("utf-8", "surrogateescape")
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view[:65536])
            view = view[written:]
    except OSError:  # the job stopped reading its stdin
        pass
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)


def _forget_old(jobs: dict[str, Job]) -> None:
    finished = [j for j in jobs.values() if not j.running]
    while len(jobs) > MAX_KEPT_JOBS and finished:
        jobs.pop(finished.pop(0).id, None)


def session_jobs(session: Session) -> dict[str, Job]:
    """The session's jobs (made, with the closer that kills them, on first use)."""
    jobs: dict[str, Job] | None = session.state.get(STATE_KEY)
    if jobs is None:
        jobs = session.state[STATE_KEY] = {}
        session.closers[STATE_KEY] = lambda: kill_all(jobs, "session end")
    return jobs


def kill_all(jobs: dict[str, Job], reason: str) -> None:
    for job in list(jobs.values()):
        job.kill(reason)


@atexit.register
def _kill_every_job() -> None:
    for job in list(_all_jobs):
        with contextlib.suppress(Exception):
            if job.running or job.pipes_open:
                job.tree.finish()


def _watch(call: Call, tracker: undo.Tracker, result: ToolResult, settings: dict[str, Any]) -> None:
    """After a recorded ``bash`` that started a background job: watch the job's changes until
    it ends (module docstring)."""
    if call.tool.name != "bash" or not result.details.get("background"):
        return
    job = session_jobs(call.session).get(str(result.details.get("job_id")))
    w = undo.watch(call, tracker, settings) if job is not None else None
    if job is None or w is None:
        return

    def done(j: Job) -> None:
        j.changes = undo.ended(
            w, ok=j.exit_code == 0, text=j.describe(), details={**j.facts(), "job_completion": True},
            who=f"job {j.id}", args={**call.args, "job_id": j.id}, seconds=j.seconds())

    job.watch = w
    job.when_done(done)


def changes_so_far(job: Job) -> ToolResult | None:
    """What a running job changed under the root since its start or the last time this was
    asked, recorded as one change now (``undo.so_far``); None when nothing changed, the job
    is not watched, or it has ended."""
    w = job.watch
    if w is None or not job.running:
        return None
    got: ToolResult | None = undo.so_far(
        w, ok=True, text=job.describe(), details={**job.facts(), "job_progress": True},
        who=f"job {job.id} (so far)", args={**w.call.args, "job_id": job.id},
        seconds=job.seconds())
    if got is not None:
        job.last_change = got.details.get("change")
    return got


undo.on_finish(_watch)
