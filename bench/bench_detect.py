"""Benchmark of change detection (``kli.tools.core.snapshot``): its overhead on ``bash true``.

    /work/venv-base/bin/python bench/bench_detect.py [--files N] [--repeat R]

Makes a tree of ``--files`` small files (default 10,000: 100 folders of 100 files of ~40
bytes, plus a ``.git`` folder of 2,000 files that is skipped), then runs ``bash true`` through
``Workspace.call`` with ``change_detection`` on — watched (inotify, the default on Linux) and
walked (``snapshot.WATCH`` false: the walk every other system gets) — and off, interleaved call
by call, and prints a Markdown table (medians, minimum in brackets; paste under "## Change
detection" in docs/benchmarks.md). Also: the first call (it reads the small files' bytes once;
watched, it also puts the watches), a call after a person changed a file between calls, a
call that changes one file, and bare ``subprocess.run(['sh','-c','true'])``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time

from kli.tools import Workspace
from kli.tools.core import snapshot


def make_tree(root: str, files: int) -> None:
    per = 100
    for i in range(files):
        folder = os.path.join(root, f"pkg{i // per:03d}")
        if i % per == 0:
            os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"mod{i % per:03d}.py"), "w") as fh:
            fh.write(f"VALUE_{i} = {i}  # a small module\n")
    git = os.path.join(root, ".git", "objects")
    os.makedirs(git)
    for i in range(min(2000, files * 20 // 100)):
        with open(os.path.join(git, f"o{i}"), "w") as fh:
            fh.write("x")


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def fmt(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}) ms"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=200)
    a = ap.parse_args()
    watching = snapshot.WATCH and snapshot._inotify() is not None
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(os.path.realpath(tmp), "tree")
        make_tree(root, a.files)
        on = Workspace(root, {"change_detection": True})
        off = Workspace(root, {"change_detection": False})

        def walked(cmd: str = "true", ws: Workspace = on) -> None:
            snapshot.WATCH = False
            try:
                ws.call("bash", {"command": cmd})
            finally:
                snapshot.WATCH = watching

        # the first calls, each on a tree of its own just written (after a warm-up of both
        # ways on a tiny tree: imports, libc)
        tiny = os.path.join(tmp, "tiny")
        make_tree(tiny, 10)
        Workspace(tiny).call("bash", {"command": "true"})
        walked(ws=Workspace(tiny))
        other = os.path.join(tmp, "other")
        make_tree(other, a.files)
        first_walk = timed(lambda: walked(ws=Workspace(other, {"change_detection": True})))
        first = timed(lambda: on.call("bash", {"command": "true"}))
        r = on.call("bash", {"command": "true"})
        watched = r.details["detection"]["files_watched"]
        for _ in range(5):  # warm-up
            on.call("bash", {"command": "true"})
            walked()
            off.call("bash", {"command": "true"})
        t_on: list[float] = []
        t_walk: list[float] = []
        t_off: list[float] = []
        t_bare: list[float] = []
        for _ in range(a.repeat):
            t_on.append(timed(lambda: on.call("bash", {"command": "true"})))
            t_walk.append(timed(walked))
            t_off.append(timed(lambda: off.call("bash", {"command": "true"})))
            t_bare.append(timed(lambda: subprocess.run(["sh", "-c", "true"], check=False)))
        t_person: list[float] = []
        t_change: list[float] = []
        t_change_walk: list[float] = []
        for i in range(min(a.repeat, 50)):
            with open(os.path.join(root, "pkg001", "mod001.py"), "a") as fh:  # the person
                fh.write(f"# {i}\n")
            t_person.append(timed(lambda: on.call("bash", {"command": "true"})))
            cmd = f"echo {i} >> pkg000/mod000.py"
            t_change.append(timed(lambda cmd=cmd: on.call("bash", {"command": cmd})))
            t_change_walk.append(timed(lambda cmd=cmd: walked(cmd)))
        off_med, off_min = statistics.median(t_off), min(t_off)
        load = os.getloadavg()[0]
        print(f"Tree: {a.files} files in {a.files // 100} folders + 2000 in .git (skipped); "
              f"{watched} watched; inotify {'on' if watching else 'not available'}; "
              f"{os.cpu_count()} CPUs, load average {load:.1f}; {a.repeat} interleaved runs, "
              "median (minimum).\n")
        print("| measure | time | ratio |")
        print("|---|---|---|")
        print(f"| `bash true`, detection on, watched (inotify) | {fmt(t_on)} | "
              f"{statistics.median(t_on) / off_med:.2f}× ({min(t_on) / off_min:.2f}×) of off |")
        print(f"| `bash true`, detection on, walked (two tree walks) | {fmt(t_walk)} | "
              f"{statistics.median(t_walk) / off_med:.2f}× ({min(t_walk) / off_min:.2f}×) of off |")
        print(f"| `bash true`, detection off (`change_detection: false`) | {fmt(t_off)} | 1 |")
        print(f"| `subprocess.run(['sh','-c','true'])` | {fmt(t_bare)} | — |")
        print(f"| first call, watched (walk, watches, reads the small files once) | {first:.1f} ms | — |")
        print(f"| first call, walked (reads the small files once) | {first_walk:.1f} ms | — |")
        print(f"| `bash true` after a person changed a file, watched | {fmt(t_person)} | — |")
        print(f"| `bash` appending to one file, watched (diff + undo record) | {fmt(t_change)} | — |")
        print(f"| `bash` appending to one file, walked (diff + undo record) | {fmt(t_change_walk)} | — |")

if __name__ == "__main__":
    main()
