"""Benchmark of ``edit``: a hashline edit of a 100,000-line file vs a plain Python read + write
of the same file, side by side in one run (target: edit ≤ 3× the plain read + write).

    .venv/bin/python bench/bench_edit.py [--lines 100000] [--repeat 15] [--dir DIR]

Prints a Markdown table (paste it under "## File surface: edit" in docs/benchmarks.md).

Rows:
- plain read + write: ``open().read()``, replace one line by slicing, ``open('w').write()`` —
  what any edit costs at least, with no anchors, no checks and no atomicity;
- plain atomic read + write: the same through a temporary file, ``fsync`` and ``os.replace``
  (what ``edit`` does to be crash-safe), to separate the cost of durability from the rest;
- edit, one op: ``Workspace.call("edit", …)`` replacing one line in the middle, using the fresh
  anchors of the previous edit (no read in between, as the spec allows);
- edit, 10 ops spread over the file;
- edit of a 100,000-line Python file (balance scan + ``compile`` check of the result) — shown for
  scale; the target is for text files.

kli and peer runs alternate (median of ``repeat`` after a warm-up) so machine load hits both.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
from collections.abc import Callable

from kli.tools import Workspace
from kli.tools.file.anchors import line_hash


def make_text(lines: int, python: bool) -> str:
    if python:
        return "".join(f"v{i:06d} = 1\n" for i in range(lines))
    return "".join(f"line {i:06d} text\n" for i in range(lines))


def plain(path: str, target: int) -> Callable[[], None]:
    state = {"flip": False}

    def run() -> None:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        # Replace line `target` (1-based) by slicing at its offsets: the cheapest real edit.
        start = 0
        for _ in range(target - 1):
            start = text.index("\n", start) + 1
        end = text.index("\n", start)
        state["flip"] = not state["flip"]
        new = text[:start] + ("edited" if state["flip"] else "again") + text[end:]
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(new)

    return run


def plain_atomic(path: str, target: int) -> Callable[[], None]:
    state = {"flip": False}

    def run() -> None:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        lines = text.split("\n")
        state["flip"] = not state["flip"]
        lines[target - 1] = "edited" if state["flip"] else "again"
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

    return run


class Editor:
    """Alternating edits through ``Workspace.call``, each using the previous result's anchors."""

    def __init__(self, root: str, name: str, targets: list[int]) -> None:
        self.ws = Workspace(root)
        self.name = name
        self.targets = targets
        path = os.path.join(root, name)
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        self.current = {t: lines[t - 1] for t in targets}
        for t in targets:  # the read that precedes a first edit (not timed)
            r = self.ws.call("read", {"path": name, "start": max(1, t - 2), "end": t + 2})
            assert r.ok, r.text
        self.flip = False
        self.python = name.endswith(".py")

    def __call__(self) -> None:
        self.flip = not self.flip
        ops = []
        new = {}
        for t in self.targets:
            old = self.current[t]
            if self.python:
                value = f"v{t - 1:06d} = {'1' if self.flip else '2'}  # edited"
            else:
                value = f"edited {t}" if self.flip else f"again {t}"
            ops.append(f"= {t}:{line_hash(old)}\n~{value}")
            new[t] = value
        r = self.ws.call("edit", {"input": f"@@ {self.name}\n" + "\n".join(ops) + "\n"})
        if not r.ok:
            raise SystemExit(f"edit failed: {r.text[:400]}")
        shown = dict(re.findall(r"^(\d+):[0-9a-f]{2}\|(.*)$", r.text, re.M))
        for t in self.targets:
            assert shown[str(t)] == new[t], (t, shown.get(str(t)))
        self.current.update(new)


def median_ms(fn: Callable[[], None], times: list[float]) -> None:
    t0 = time.perf_counter()
    fn()
    times.append((time.perf_counter() - t0) * 1000)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--dir", default=None, help="where to put the files (default: a temp dir)")
    args = ap.parse_args()
    n = args.lines
    mid = n // 2
    spread = [1 + i * (n // 10) + 7 for i in range(10)]
    with tempfile.TemporaryDirectory(dir=args.dir) as root:
        files = {
            "big.txt": make_text(n, False),
            "peer.txt": make_text(n, False),
            "atomic.txt": make_text(n, False),
            "spread.txt": make_text(n, False),
            "big.py": make_text(n, True),
        }
        for name, text in files.items():
            with open(os.path.join(root, name), "w", encoding="utf-8") as fh:
                fh.write(text)
        size = len(files["big.txt"].encode())
        runners: dict[str, Callable[[], None]] = {
            "plain": plain(os.path.join(root, "peer.txt"), mid),
            "plain_atomic": plain_atomic(os.path.join(root, "atomic.txt"), mid),
            "edit1": Editor(root, "big.txt", [mid]),
            "edit10": Editor(root, "spread.txt", spread),
            "editpy": Editor(root, "big.py", [mid]),
        }
        times: dict[str, list[float]] = {k: [] for k in runners}
        for fn in runners.values():  # warm-up
            fn()
        for _ in range(args.repeat):
            for key, fn in runners.items():
                median_ms(fn, times[key])
        med = {k: statistics.median(v) for k, v in times.items()}
    base = med["plain"]
    print(
        f"{n:,} lines, {size / 1e6:.2f} MB text file; median of {args.repeat} after a warm-up; "
        f"load average {os.getloadavg()[0]:.1f}\n"
    )
    print("| task | time | vs plain read + write | target |")
    print("|---|---|---|---|")
    rows = [
        ("plain Python read + write (peer)", "plain", ""),
        ("plain read + write, atomic (tmp + fsync + rename)", "plain_atomic", ""),
        ("`edit`, 1 op (`= A:HH`), fresh anchors from the previous edit", "edit1", "≤ 3×"),
        ("`edit`, 10 ops spread over the file", "edit10", "≤ 3×"),
        ("`edit` of a 100,000-line `.py` (balance scan + `compile` check)", "editpy", ""),
    ]
    for label, key, target in rows:
        ratio = med[key] / base
        mark = (" ✓" if ratio <= 3 else " ✗") if target else ""
        print(f"| {label} | {med[key]:.1f} ms | {ratio:.2f}×{mark} | {target} |")


if __name__ == "__main__":
    main()
