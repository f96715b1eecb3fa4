"""Benchmark of search / ws_grep / find / ws_glob against ripgrep, GNU grep and GNU find, in
one run (issue 27).

    .venv/bin/python bench/bench_search.py [--tree DIR] [--big DIR] [--copies N]
        [--repeat N] [--big-repeat N] [--no-python-row] [--no-memory] [--keep-time-bound]
        [--big-no-grep] [--big-memory-only]

Prints a Markdown table (pasted under "## File surface: search at ripgrep speed" in
docs/benchmarks.md):

- ``search`` (literal ``def __init__`` and regex ``class \\w+Error\\(`` over ``**``) and
  ``ws_grep`` (a literal absent from the tree, so every file is read, and the regex, which
  stops at its 50-hit cap), each interleaved with ``rg -n -uu`` and ``grep -rnI`` on the same
  pattern, on a real tree (default: this interpreter's site-packages) and on a tree
  ``--copies`` times larger (default 10: hard-linked copies of the first, made under /tmp —
  deterministic, the page cache holds it once, and every path is a separate file to open
  and read). A Python-only row (``KLI_SEARCH_NO_RG=1``, firstpass.binaries.OFF_ENV) gives the fallback.
- ``find '**/*.py'`` and ``ws_glob '**/*.py'`` vs GNU ``find . -name '*.py'``.
- peak RSS of a child process running one search over each tree (``/usr/bin/time -f %M``),
  and of rg itself (search's rg runs as a separate process).

The walk's bounds (100,000 entries, 10 s: docs/tools.md) would cut a search of the larger tree
short (then search goes without rg: see search.py); its rows lift the entry bound
(``MAX_ENTRIES``) so the whole tree is searched as the peers do, and say so. The 10 s time
bounds (the walk's, ws_grep's) are lifted for every row unless ``--keep-time-bound``: on a
loaded machine a search would stop at them and measure nothing (the counts rows show
``stopped``).

Timings (bench/timing.py): medians of ``--repeat`` rounds after a warm-up, ours and the peers
interleaved round by round; each cell is wall / CPU (user + system of this process and its
children — rg included for ours). On a shared machine compare the ratios, not the times.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable
from typing import Any

from timing import Timing, count_lines, fmt_pair, interleaved, peak_rss_mb, run_peer

from kli.tools import Workspace
from kli.tools.core.jail import Jail
from kli.tools.file import walk as walk_mod
from kli.tools.file.firstpass import binaries
from kli.tools.ws import ws_grep as ws_grep_mod

SEARCHES = [("literal", "def __init__"), ("regex", r"class \w+Error\(")]
ABSENT = "zq_absent_literal_qz"


def ratio(a: Timing, b: Timing) -> str:
    return f"{a[0] / b[0]:.2f}× / {a[1] / max(b[1], 1e-9):.2f}×"


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
    """``copies`` hard-linked copies of ``tree`` under ``big`` (kept between runs)."""
    if os.path.isdir(big) and sorted(os.listdir(big)) == [f"copy{i:02d}" for i in range(copies)]:
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
d = r.details
print(f"{d['files_matched']} files, {d['lines_matched']} lines, engine {d['engine']} "
      f"({d['engine_pass']})")
"""


class _Lifted:
    """The walk's entry bound (the 10× tree) and the 10 s time bounds of the walk and ws_grep
    (on a loaded machine a search of the real tree would stop at them, and then measure
    nothing) lifted, restored on exit."""

    def __init__(self, entries: bool, seconds: bool) -> None:
        self.entries, self.seconds = entries, seconds

    def __enter__(self) -> None:
        self.saved = (walk_mod.MAX_ENTRIES, walk_mod.MAX_SECONDS, ws_grep_mod.MAX_SECONDS)
        if self.entries:
            walk_mod.MAX_ENTRIES = 10**8
        if self.seconds:
            walk_mod.MAX_SECONDS = ws_grep_mod.MAX_SECONDS = 3600.0

    def __exit__(self, *exc: object) -> None:
        walk_mod.MAX_ENTRIES, walk_mod.MAX_SECONDS, ws_grep_mod.MAX_SECONDS = self.saved


def bench_tree(tree: str, label: str, repeat: int, lifted: bool, python_row: bool,
               memory: bool, rows: list[str], *, lift_time: bool = True,
               grep: bool = True) -> None:
    rg = binaries.rg_installed()[0] or "rg"  # the peer: plain rg
    ws = Workspace(tree)
    note = " (entry bound lifted)" if lifted else ""

    def tool(name: str, args: dict[str, Any], last: dict[str, Any]) -> Callable[[], None]:
        def go() -> None:
            # A fresh session per call: the loop guard must not answer repeated calls.
            last["r"] = ws.call(name, args, session=ws.open_session())
        return go

    def peers(pattern: str, regex: bool) -> dict[str, tuple[Callable[[], object], bool]]:
        got: dict[str, tuple[Callable[[], object], bool]] = {
            "`rg -n -uu`": (run_peer([rg, "-n", "-uu", pattern, "."], tree), False)}
        if grep:
            got["`grep -rnI`"] = (run_peer(["grep", "-rnIE" if regex else "-rnI", pattern,
                                            "."], tree), False)
        return got

    with _Lifted(lifted, lift_time):
        for kind, pattern in SEARCHES:
            last: dict[str, Any] = {}
            got = interleaved({"ours": (tool("search", {"pattern": pattern, "path": "**"}, last),
                                        True), **peers(pattern, kind == "regex")}, repeat)
            for name, t in got.items():
                if name != "ours":
                    rows.append(f"| {label}: search {kind} `{pattern}`{note} | "
                                f"{fmt_pair(got['ours'])} | {name} | {fmt_pair(t)} | "
                                f"{ratio(got['ours'], t)} |")
            d = last["r"].details
            rows.append(
                f"| ↳ counts | {d['lines_matched']} lines in {d['files_matched']} files "
                f"({d['searched']} searched, {d['skipped_binary']} binary + "
                f"{d['skipped_too_large']} > 2 MiB skipped; engine {d['engine']} "
                f"({d['engine_pass']}); stopped "
                f"{d['stopped']}) | "
                f"`rg -n -uu` | {count_lines([rg, '-n', '-uu', pattern, '.'], tree)} lines | |")
            switched = []
            if kind == "literal" and d["engine_pass"] == binaries.SCAN:
                switched.append((binaries.ENGINE_ENV, "rg", "rg as the first pass (kli-scan off)",
                                 ("engine_pass", "rg")))
            if kind == "literal" and python_row:
                switched.append((binaries.OFF_ENV, "1", "Python only (rg off)",
                                 ("engine", "python")))
            for env, value, what, (key, want) in switched:
                os.environ[env] = value
                try:
                    got = interleaved({"ours": (tool("search", {"pattern": pattern,
                                                                "path": "**"}, last), True),
                                       "rg": (run_peer([rg, "-n", "-uu", pattern, "."], tree),
                                              False)}, max(1, repeat // 2))
                finally:
                    del os.environ[env]
                assert last["r"].details[key] == want
                rows.append(f"| {label}: search {kind}, {what}{note} | "
                            f"{fmt_pair(got['ours'])} | `rg -n -uu` | {fmt_pair(got['rg'])} | "
                            f"{ratio(got['ours'], got['rg'])} |")
        for kind, pattern in (("absent literal (reads every file)", ABSENT),
                              ("regex (stops at 50 hits)", SEARCHES[1][1])):
            last = {}
            got = interleaved({"ours": (tool("ws_grep", {"pattern": pattern}, last), True),
                               **peers(pattern, kind.startswith("regex"))}, repeat)
            for name, t in got.items():
                if name != "ours":
                    rows.append(f"| {label}: ws_grep {kind}{note} | {fmt_pair(got['ours'])} | "
                                f"{name} (all hits) | {fmt_pair(t)} | "
                                f"{ratio(got['ours'], t)} |")
            d = last["r"].details
            rows.append(f"| ↳ | {d.get('count')} hits shown (capped: {bool(d.get('capped'))}); "
                        f"engine {d.get('engine')} ({d.get('engine_pass')}) | | | |")
        gnu = run_peer(["find", ".", "-name", "*.py"], tree)
        for name in ("find", "ws_glob"):
            last = {}
            got = interleaved({"ours": (tool(name, {"pattern": "**/*.py"}, last), True),
                               "find": (gnu, False)}, repeat)
            rows.append(f"| {label}: {name} `**/*.py`{note} | {fmt_pair(got['ours'])} | "
                        f"`find -name '*.py'` | {fmt_pair(got['find'])} | "
                        f"{ratio(got['ours'], got['find'])} |")

    if memory:
        rows.append(memory_row(tree, label))


def memory_row(tree: str, label: str) -> str:
    """Peak RSS of one search over the whole tree (bounds lifted), of rg, and of grep."""
    first = binaries.locate(Jail(tree))[0] or "rg"  # the first pass search runs
    mb, _, out = peak_rss_mb([sys.executable, "-c", MEMORY_CHILD, tree, SEARCHES[0][1]])
    if os.path.basename(first) == binaries.SCAN:
        args = [first, "--max-filesize", str(2 * 2**20), "--sniff", "8192", "--regexp",
                SEARCHES[0][1], "--", tree]
    else:
        args = [first, "--no-config", "-uu", "-c", SEARCHES[0][1], tree]
    first_mb, _, _ = peak_rss_mb(args)
    grep_mb, _, _ = peak_rss_mb(["grep", "-rnI", SEARCHES[0][1], tree])
    return (f"| {label}: peak RSS, one search (whole tree) | {mb:.0f} MB kernel side + "
            f"{first_mb:.0f} MB {os.path.basename(first)} ({out}) | `grep -rnI` | "
            f"{grep_mb:.0f} MB | |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", default=sysconfig.get_paths()["purelib"])
    ap.add_argument("--big", default=os.path.join(tempfile.gettempdir(), "kli-bench-search-10x"))
    ap.add_argument("--copies", type=int, default=10, help="0: the real tree only")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--big-repeat", type=int, default=2)
    ap.add_argument("--no-python-row", action="store_true")
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--keep-time-bound", action="store_true",
                    help="keep the 10 s bounds (a quiet machine stays far below them)")
    ap.add_argument("--big-no-grep", action="store_true",
                    help="the larger tree against rg only (grep reads it several times slower)")
    ap.add_argument("--big-memory-only", action="store_true",
                    help="the larger tree: peak memory only, no timings")
    args = ap.parse_args()
    rg, why = binaries.rg_installed()
    if rg is None:
        sys.exit(f"rg is needed for this benchmark: {why}")
    tree = os.path.realpath(args.tree)
    files, size = tree_stats(tree)
    if args.copies:
        make_big(tree, args.big, args.copies)
    print(f"Tree: {tree} — {files} files, {size / 1e6:.0f} MB; 10× tree: {args.big}, "
          f"{args.copies} hard-linked copies ({files * args.copies} files, "
          f"{size * args.copies / 1e9:.1f} GB read per search); {os.cpu_count()} CPUs, load "
          f"average {os.getloadavg()[0]:.1f} at the start; Python {sys.version.split()[0]}; "
          f"rg {rg}; first pass {binaries.locate(Jail(tree))[0]}; repeat {args.repeat} (10× tree: {args.big_repeat}).\n")
    rows = ["| task | kli wall / CPU | peer | peer wall / CPU | kli ÷ peer wall / CPU |",
            "|---|---|---|---|---|"]
    lift = not args.keep_time_bound
    bench_tree(tree, "tree", args.repeat, False, not args.no_python_row, not args.no_memory,
               rows, lift_time=lift)
    print("\n".join(rows), flush=True)
    if args.copies and args.big_memory_only:
        print("\n" + memory_row(args.big, f"{args.copies}× tree"))
    elif args.copies:
        rows = rows[:2]
        bench_tree(args.big, f"{args.copies}× tree", args.big_repeat, True, False,
                   not args.no_memory, rows, lift_time=lift, grep=not args.big_no_grep)
        print("\n" + "\n".join(rows))
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
