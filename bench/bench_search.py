"""Benchmark of search / ws_grep / find against ripgrep, GNU grep and GNU find, in one run.

    .venv/bin/python bench/bench_search.py [--tree DIR] [--big DIR] [--copies N] [--repeat N]

Prints a Markdown table (pasted under "## File surface: search at ripgrep speed" in
docs/benchmarks.md):

- ``search`` (literal ``def __init__`` and regex ``class \\w+Error\\(`` over ``**``) and
  ``ws_grep`` (a literal absent from the tree, so every file is read, and the regex, which
  stops at its 50-hit cap) vs ``rg -n -uu`` and ``grep -rnI``, on a real tree (default: this
  interpreter's site-packages) and on a tree N times larger (``--copies``, default 10: hard-linked
  copies of the first, made under /tmp, so the page cache holds it; every path is a separate
  file to open and read). A Python-only row (rg switched off) gives today's fallback path.
- ``find '**/*.py'`` vs GNU ``find TREE -name '*.py'``.
- peak RSS of a child process running one search over each tree (``/usr/bin/time -f %M``),
  and of rg itself (search's rg runs as a separate process).

The walk's bounds (100,000 entries, 10 s: docs/tools.md) cut a search of the larger tree
short, as they should (then search goes without rg: see search.py); its rows are run with the
bounds lifted (``MAX_ENTRIES``,
``MAX_SECONDS``) so the whole tree is searched like the peers do, and say so.

Timings: medians of ``--repeat`` runs after a warm-up, ours and the peer alternating; each
cell is wall / CPU (user + system of this process and its children — rg included for ours).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from typing import Any

from kli.tools import Workspace
from kli.tools.core.jail import Jail
from kli.tools.file import rgscan
from kli.tools.file import walk as walk_mod

SEARCHES = [("literal", "def __init__"), ("regex", r"class \w+Error\(")]
ABSENT = "zq_absent_literal_qz"


def _cpu() -> tuple[float, float]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def paired(ours: Callable[[], Any], peer: Callable[[], Any], repeat: int) -> tuple[tuple[float, float], tuple[float, float]]:
    ours()
    peer()
    walls: tuple[list[float], list[float]] = ([], [])
    cpus: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for side, fn in enumerate((ours, peer)):
            c0 = _cpu()
            t = time.perf_counter()
            fn()
            walls[side].append(time.perf_counter() - t)
            c1 = _cpu()
            kids = c1[1] - c0[1]
            cpus[side].append(kids + (c1[0] - c0[0] if side == 0 else 0.0))
    return ((statistics.median(walls[0]), statistics.median(cpus[0])),
            (statistics.median(walls[1]), statistics.median(cpus[1])))


def fmt(t: tuple[float, float]) -> str:
    return f"{t[0] * 1000:.0f} ms / {t[1] * 1000:.0f} ms"


def ratio(a: tuple[float, float], b: tuple[float, float]) -> str:
    return f"{a[0] / b[0]:.2f}× / {a[1] / b[1]:.2f}×"


def run_peer(cmd: list[str], cwd: str) -> Callable[[], None]:
    def go() -> None:
        with tempfile.TemporaryFile() as out:
            subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL, check=False)
    return go


def peer_lines(cmd: list[str], cwd: str) -> int:
    with tempfile.TemporaryFile() as out:
        subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL, check=False)
        out.seek(0)
        return out.read().count(b"\n")


def tree_stats(tree: str) -> tuple[int, int]:
    files = size = 0
    for dirpath, _dirs, names in os.walk(tree):
        for n in names:
            p = os.path.join(dirpath, n)
            if os.path.isfile(p) and not os.path.islink(p):
                files += 1
                size += os.path.getsize(p)
    return files, size


def make_big(tree: str, big: str, copies: int) -> None:
    if os.path.isdir(big) and len(os.listdir(big)) == copies:
        return
    shutil.rmtree(big, ignore_errors=True)
    os.makedirs(big)
    for i in range(copies):
        subprocess.run(["cp", "-al", tree, os.path.join(big, f"copy{i:02d}")], check=True)


MEMORY_CHILD = r"""
import sys
from kli.tools import Workspace
from kli.tools.file import walk
walk.MAX_ENTRIES = 10**8
walk.MAX_SECONDS = 3600.0
r = Workspace(sys.argv[1]).call("search", {"pattern": sys.argv[2], "path": "**"})
print(r.details["files_matched"], r.details["lines_matched"], r.details["engine"])
"""


def peak_rss_mb(cmd: list[str]) -> tuple[float, str]:
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], capture_output=True, text=True,
                          check=False)
    return int(done.stderr.strip().splitlines()[-1]) / 1024, done.stdout.strip()


def bench_tree(tree: str, label: str, repeat: int, lifted: bool, rows: list[str]) -> None:
    rg, _ = rgscan.locate(Jail("/nonexistent"))
    ws = Workspace(tree)
    if lifted:
        walk_mod.MAX_ENTRIES = 10**8
        walk_mod.MAX_SECONDS = 3600.0
    note = " (walk bounds lifted)" if lifted else ""
    for kind, pattern in SEARCHES:
        last: dict[str, Any] = {}

        def ours(pattern: str = pattern, last: dict[str, Any] = last) -> None:
            last["r"] = ws.call("search", {"pattern": pattern, "path": "**"},
                                session=ws.open_session())

        peers = [("`rg -n -uu`", [rg or "rg", "-n", "-uu", pattern, "."]),
                 ("`grep -rnI`", ["grep", "-rnIE" if kind == "regex" else "-rnI", pattern, "."])]
        for name, cmd in peers:
            a, b = paired(ours, run_peer(cmd, tree), repeat)
            rows.append(f"| {label}: search {kind} `{pattern}`{note} | {fmt(a)} | {name} | "
                        f"{fmt(b)} | {ratio(a, b)} |")
        d = last["r"].details
        rows.append(
            f"| ↳ counts | {d['lines_matched']} lines in {d['files_matched']} files "
            f"({d['searched']} searched, {d['skipped_binary']} binary + "
            f"{d['skipped_too_large']} > 2 MiB skipped; engine {d['engine']}) | `rg -n -uu` | "
            f"{peer_lines(peers[0][1], tree)} lines | |")
        if kind == "literal" and not lifted:
            original = rgscan.locate
            rgscan.locate = lambda jail: (None, "off")  # type: ignore[assignment]
            try:
                a, b = paired(ours, run_peer(peers[0][1], tree), max(1, repeat // 2))
            finally:
                rgscan.locate = original  # type: ignore[assignment]
            rows.append(f"| {label}: search {kind}, Python only (rg off){note} | {fmt(a)} | "
                        f"`rg -n -uu` | {fmt(b)} | {ratio(a, b)} |")
    for kind, pattern in (("absent literal (reads every file)", ABSENT),
                          ("regex (stops at 50 hits)", SEARCHES[1][1])):
        def ours_g(pattern: str = pattern) -> None:
            # A fresh session per call: the loop guard must not answer repeated calls.
            ws.call("ws_grep", {"pattern": pattern}, session=ws.open_session())

        cmd = [rg or "rg", "-n", "-uu", pattern, "."]
        a, b = paired(ours_g, run_peer(cmd, tree), repeat)
        rows.append(f"| {label}: ws_grep {kind}{note} | {fmt(a)} | `rg -n -uu` (all hits) | "
                    f"{fmt(b)} | {ratio(a, b)} |")

    def ours_f() -> None:
        ws.call("find", {"pattern": "**/*.py"}, session=ws.open_session())

    a, b = paired(ours_f, run_peer(["find", ".", "-name", "*.py"], tree), repeat)
    rows.append(f"| {label}: find `**/*.py`{note} | {fmt(a)} | `find -name '*.py'` | {fmt(b)} "
                f"| {ratio(a, b)} |")
    walk_mod.MAX_ENTRIES = 100_000
    walk_mod.MAX_SECONDS = 10.0

    py = [sys.executable, "-c", MEMORY_CHILD, tree, SEARCHES[0][1]]
    mb, out = peak_rss_mb(py)
    rg_mb, _ = peak_rss_mb([rg or "rg", "--no-config", "-uu", "-c", SEARCHES[0][1], tree])
    grep_mb, _ = peak_rss_mb(["grep", "-rnI", SEARCHES[0][1], tree])
    rows.append(f"| {label}: peak RSS, one search (whole tree) | {mb:.0f} MB kernel side + "
                f"{rg_mb:.0f} MB rg ({out}) | `grep -rnI` | {grep_mb:.0f} MB | |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", default=sysconfig.get_paths()["purelib"])
    ap.add_argument("--big", default=os.path.join(tempfile.gettempdir(), "kli-bench-search-10x"))
    ap.add_argument("--copies", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rg, why = rgscan.locate(Jail("/nonexistent"))
    if rg is None:
        sys.exit(f"rg is needed for this benchmark: {why}")
    files, size = tree_stats(args.tree)
    if args.copies:
        make_big(args.tree, args.big, args.copies)
    load = os.getloadavg()[0]
    print(f"Tree: {args.tree} — {files} files, {size / 1e6:.0f} MB; 10× tree: {args.copies} "
          f"hard-linked copies ({files * args.copies} files, {size * args.copies / 1e9:.1f} GB "
          f"read per search); {os.cpu_count()} CPUs, load average {load:.1f} at the start; "
          f"Python {sys.version.split()[0]}; rg {rgscan._installed()[0]}; repeat "
          f"{args.repeat}.\n")
    rows = ["| task | kli wall / CPU | peer | peer wall / CPU | kli ÷ peer wall / CPU |",
            "|---|---|---|---|---|"]
    bench_tree(args.tree, "tree", args.repeat, False, rows)
    if args.copies:  # --copies 0: the real tree only
        bench_tree(args.big, "10× tree", max(1, args.repeat // 2), True, rows)
    print("\n".join(rows))
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
