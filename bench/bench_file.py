"""Benchmark of the kli file surface's read side, side by side with its peers in one run.

    .venv/bin/python bench/bench_file.py [--tree DIR] [--repeat N] [--mem-mb MB] [--no-memory]

Prints a Markdown table (paste it under "## File surface: read, find, search" in
docs/benchmarks.md):

- ``search`` over a large real tree (default: this interpreter's site-packages) vs
  ``grep -rn`` (the target: ≤ 2× its time), ``grep -rnI`` (grep skipping binary files, as
  search does) and ripgrep ``rg -n -uu`` where installed (no ignore files, hidden files
  searched, binary skipped — the same file set as search). Same pattern, same tree; the peers
  write their output to a scratch file, search returns its capped text (the whole tree is still
  scanned: counts are exact). Not /dev/null: GNU grep detects an output of /dev/null and then
  stops reading each file at its first match, which would not be the same work.
- ``find '**/*.py'`` vs GNU ``find TREE -name '*.py'`` (target ≤ 1.5×).
- peak RSS of a child process running one search over ≥ 500 MB of generated text files
  (target ≤ 150 MB), with a bare interpreter + import baseline and grep's peak for scale.

Timings (``bench/timing.py``, shared with bench_search.py) are medians of ``--repeat`` runs
after one warm-up run (page cache warm for all), kli and its peer alternating run by run so
load from other processes hits both alike. Each cell shows wall / CPU time (user + system; for
search, its process and its children, the rg it starts included): on a shared machine the wall
time includes waiting for a CPU, so the CPU ratio is the steadier comparison; the targets are
judged on wall time.
search/find run in-process through ``Workspace.call`` — how a kernel runs them; the peers run as
child processes, so their figures include a process start (~1 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from timing import count_lines, fmt_pair, paired_times, peak_rss_mb, run_peer  # bench/timing.py

from kli.tools import Workspace

SEARCHES = [
    ("literal", "def __init__"),
    ("regex", r"class \w+Error\("),
]


def fmt_ratio(a: tuple[float, float], b: tuple[float, float], target: float | None) -> str:
    wall, cpu = a[0] / b[0], a[1] / max(b[1], 1e-9)
    verdict = "" if target is None else (" ✓" if wall <= target else " ✗")
    return f"{wall:.2f}×{verdict} / {cpu:.2f}×"


def make_corpus(directory: str, total_mb: int) -> tuple[int, int]:
    """Text files of 2,000,000 bytes each (just under search's 2 MiB cap), ``total_mb`` MB in
    all, with a match every ~997 lines. Returns (files, bytes)."""
    line_words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    lines = []
    for i in range(30_000):
        if i % 997 == 0:
            lines.append(f"    needle {i} = compute(value_{i}, other_{i % 13})  # marker")
        else:
            words = " ".join(line_words[(i + k) % 8] for k in range(8))
            lines.append(f"{i:06d} {words} {i * 7919 % 100003}")
    block = ("\n".join(lines) + "\n").encode()
    size = 2_000_000
    block = (block * (size // len(block) + 1))[:size]
    block = block[: block.rfind(b"\n") + 1]
    files = 0
    written = 0
    sub = ""
    while written < total_mb * 1_000_000:
        if files % 50 == 0:
            sub = os.path.join(directory, f"d{files // 50:02d}")
            os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, f"f{files:04d}.txt"), "wb") as fh:
            fh.write(block)
        files += 1
        written += len(block)
    return files, written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", default=sysconfig.get_paths()["purelib"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--mem-mb", type=int, default=520)
    ap.add_argument("--no-memory", action="store_true")
    opts = ap.parse_args()
    tree = os.path.realpath(opts.tree)
    ws = Workspace(tree)
    rg = shutil.which("rg")
    nfiles = sum(len(f) for _d, _s, f in os.walk(tree))
    nbytes = sum(
        os.path.getsize(os.path.join(d, f))
        for d, _s, fs in os.walk(tree)
        for f in fs
        if not os.path.islink(os.path.join(d, f))
    )
    print(
        f"Tree: {tree} — {nfiles} files, {nbytes / 1e6:.0f} MB; {os.cpu_count()} CPUs "
        f"(load average {os.getloadavg()[0]:.1f}); Python {sys.version.split()[0]}; "
        f"repeat {opts.repeat} (median, alternating)."
    )
    print()
    print(
        "| task | kli wall / CPU | peer | peer wall / CPU | kli ÷ peer wall / CPU | target (wall) |"
    )
    print("|---|---|---|---|---|---|")

    for label, pattern in SEARCHES:
        d = ws.call("search", {"pattern": pattern, "path": "**"}).details

        def search(p: str = pattern) -> object:
            return ws.call("search", {"pattern": p, "path": "**"})

        peers = [
            # GNU grep -E reads \w and \( as Python re does, so the pattern is the same string.
            ("grep -rn", ["grep", "-rn", "-E", pattern, tree], "≤ 2×"),
            ("grep -rnI", ["grep", "-rnI", "-E", pattern, tree], ""),
        ]
        if rg:
            peers.append(("rg -n -uu", [rg, "-n", "-uu", pattern, tree], ""))
        grep_lines = count_lines(["grep", "-rnI", "-E", pattern, tree])
        for name, argv, target in peers:
            ours, t = paired_times(search, run_peer(argv), opts.repeat)
            print(
                f"| search {label} `{pattern}` in `**` | {fmt_pair(ours)} | `{name}` | "
                f"{fmt_pair(t)} | {fmt_ratio(ours, t, 2.0 if target else None)} | {target} |"
            )
        print(
            f"| ↳ counts | {d['lines_matched']} lines in {d['files_matched']} files "
            f"({d['searched']} searched, {d['skipped_binary']} binary + "
            f"{d['skipped_too_large']} > 2 MiB skipped; shown: {d['files_shown']} files / "
            f"{d['lines_shown']} lines) | `grep -rnI` | {grep_lines} lines | | |"
        )

    found = ws.call("find", {"pattern": "**/*.py"})
    gnu = ["find", tree, "-name", "*.py"]
    ours, t = paired_times(
        lambda: ws.call("find", {"pattern": "**/*.py"}), run_peer(gnu), opts.repeat
    )
    gnu_count = count_lines(gnu)
    print(
        f"| find `**/*.py` | {fmt_pair(ours)} | `find -name '*.py'` | {fmt_pair(t)} | "
        f"{fmt_ratio(ours, t, 1.5)} | ≤ 1.5× |"
    )
    print(
        f"| ↳ counts | {found.details['count']} paths (first 1000 listed) | `find` | "
        f"{gnu_count} paths | | |"
    )

    if opts.no_memory:
        return
    if not os.path.exists("/usr/bin/time"):
        print("\n(peak memory not measured: GNU /usr/bin/time is not installed)")
        return
    with tempfile.TemporaryDirectory(prefix="kli-bench-mem-") as corpus:
        files, written = make_corpus(corpus, opts.mem_mb)
        code = (
            "import json,sys\nfrom kli.tools import Workspace\n"
            "ws=Workspace(sys.argv[1])\n"
            "r=ws.call('search',{'pattern':r'needle \\d+ =','path':'**','context':2})\n"
            "assert r.ok, r.text\nprint(json.dumps(r.details))\n"
        )
        base = "import sys\nfrom kli.tools import Workspace\nWorkspace(sys.argv[1])\n"
        peak, wall, _out = peak_rss_mb([sys.executable, "-c", code, corpus])
        peak_base, _, _out = peak_rss_mb([sys.executable, "-c", base, corpus])
        peak_grep, wall_grep, _out = peak_rss_mb(
            ["grep", "-rn", "-E", "needle [0-9]+ =", corpus])
        check = subprocess.run([sys.executable, "-c", code, corpus], capture_output=True, text=True)
        d = json.loads(check.stdout)
        print(
            f"| peak RSS, search over {written / 1e6:.0f} MB ({files} files) | "
            f"{peak:.0f} MB ({wall:.1f} s; interpreter + import alone {peak_base:.0f} MB) | "
            f"`grep -rn` | {peak_grep:.1f} MB ({wall_grep:.1f} s) | | "
            f"≤ 150 MB{' ✓' if peak <= 150 else ' ✗'} |"
        )
        print(
            f"| ↳ counts | {d['lines_matched']} lines in {d['files_matched']} files, "
            f"{d['searched']} searched | | | | |"
        )


if __name__ == "__main__":
    main()
