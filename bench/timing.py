"""Side-by-side timing for the benchmarks that compare a kli tool with command-line peers
(bench_search.py, bench_file.py): one home for the interleaved loop.

    interleaved({"name": (fn, in_process), ...}, repeat) -> {"name": (wall, cpu)}

Every function runs once as a warm-up (page cache, first-use translations), then ``repeat``
rounds run each function in turn, so a load change on a shared machine hits all alike; the
answer is the median wall and CPU seconds of each. CPU is user + system time: of this process
and its children for an in-process function (a tool called through ``Workspace.call``; the rg
that search starts is a child), of the children alone for a peer run as a child process.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable

Timing = tuple[float, float]  # (wall seconds, CPU seconds), medians


def cpu_self_and_children() -> tuple[float, float]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def interleaved(runs: dict[str, tuple[Callable[[], object], bool]], repeat: int) -> dict[str, Timing]:
    """Median (wall, CPU) of each function of ``runs`` (see the module docstring)."""
    for fn, _in_process in runs.values():
        fn()
    walls: dict[str, list[float]] = {name: [] for name in runs}
    cpus: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, (fn, in_process) in runs.items():
            c0 = cpu_self_and_children()
            t = time.perf_counter()
            fn()
            walls[name].append(time.perf_counter() - t)
            c1 = cpu_self_and_children()
            cpus[name].append((c1[1] - c0[1]) + (c1[0] - c0[0] if in_process else 0.0))
    return {name: (statistics.median(walls[name]), statistics.median(cpus[name]))
            for name in runs}


def paired_times(ours: Callable[[], object], peer: Callable[[], object],
                 repeat: int) -> tuple[Timing, Timing]:
    """``interleaved`` for one in-process function and one peer."""
    got = interleaved({"ours": (ours, True), "peer": (peer, False)}, repeat)
    return got["ours"], got["peer"]


def run_peer(argv: list[str], cwd: str | None = None) -> Callable[[], object]:
    """A peer run writing its stdout to a scratch file. Not /dev/null: GNU grep detects an
    output of /dev/null and then stops reading each file at its first match."""

    def go() -> object:
        with tempfile.TemporaryFile() as sink:
            return subprocess.run(argv, cwd=cwd, stdout=sink, stderr=subprocess.DEVNULL,
                                  check=False)

    return go


def fmt_pair(t: Timing) -> str:
    return f"{t[0] * 1000:.0f} ms / {t[1] * 1000:.0f} ms"


def peak_rss_mb(argv: list[str]) -> tuple[float, float, str]:
    """Run ``argv`` as a child; (its peak RSS in MB, wall seconds, its stdout).

    Started by GNU ``/usr/bin/time -f %M``: a child forked straight from this (large) process
    would inherit this process's high-water mark in ``ru_maxrss`` (Linux keeps it across
    exec), which would hide the figure being measured."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as out:
        t = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name, *argv],
                              capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t
        kib = int(out.read().strip().splitlines()[-1])
    return kib / 1024, wall, done.stdout.strip()


def count_lines(argv: list[str], cwd: str | None = None) -> int:
    """Lines a peer prints (its hit count, for the counts rows)."""
    return subprocess.run(argv, cwd=cwd, capture_output=True, check=False).stdout.count(b"\n")
