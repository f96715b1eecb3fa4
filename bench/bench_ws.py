"""slmcode tools side by side with their command-line peers, in one run.

    .venv/bin/python bench/bench_ws.py [TREE]

TREE defaults to this interpreter's standard library. ws_* tools run in process through
``Workspace.call`` (as a kernel runs them, loop guard and result cap included); the peers are
child processes writing to a pipe. Each row is the median of 7 runs after a warm-up, tool and
peer alternating so machine load hits both alike. Prints a Markdown table.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable

from kli.tools import Workspace
from kli.tools.ws import shell_policy

RUNS = 7


def _median_ms(fn: Callable[[], object]) -> float:
    fn()
    times = []
    for _ in range(RUNS):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def _pair(tool: Callable[[], object], peer: Callable[[], object]) -> tuple[float, float]:
    tool(), peer()
    a: list[float] = []
    b: list[float] = []
    for _ in range(RUNS):
        t = time.perf_counter()
        tool()
        a.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        peer()
        b.append((time.perf_counter() - t) * 1000)
    return statistics.median(a), statistics.median(b)


def _run(argv: list[str], cwd: str) -> Callable[[], object]:
    return lambda: subprocess.run(argv, cwd=cwd, capture_output=True)


def main() -> int:
    tree = sys.argv[1] if len(sys.argv) > 1 else sysconfig.get_paths()["stdlib"]
    ws = Workspace(tree, {"shell_policy": "build"})

    def call(name: str, args: dict[str, object]) -> Callable[[], object]:
        # A fresh session per call: the loop guard must not answer repeated benchmark calls.
        return lambda: ws.call(name, args, session=ws.open_session())

    rows: list[tuple[str, str, float, str, float, str]] = []
    n_py = sum(1 for _d, _s, fs in os.walk(tree) for f in fs if f.endswith(".py"))

    absent = "zq_never_there_42"
    r = ws.call("ws_grep", {"pattern": absent, "glob": "*.py"}, session=ws.open_session())
    assert r.ok and r.details["count"] == 0, r.text
    a, b = _pair(call("ws_grep", {"pattern": absent, "glob": "*.py"}),
                 _run(["grep", "-rnI", "--include=*.py", absent, "."], tree))
    rows.append((f"ws_grep absent literal, all {n_py} .py files (full scan)", "", a,
                 "`grep -rnI --include=*.py`", b, ""))
    if shutil.which("rg"):  # interleaved with the tool again, as every other row
        a, b = _pair(call("ws_grep", {"pattern": absent, "glob": "*.py"}),
                     _run(["rg", "-n", "-uu", "-g", "*.py", absent, "."], tree))
        rows.append(("", "", a, "`rg -n -uu -g '*.py'`", b, ""))
    regex = r"class \w+Error\("
    r = ws.call("ws_grep", {"pattern": regex}, session=ws.open_session())
    a, b = _pair(call("ws_grep", {"pattern": regex}),
                 _run(["grep", "-rnIE", r"class [[:alnum:]_]+Error\(", "."], tree))
    rows.append((f"ws_grep regex `{regex}` (stops at the 50-hit cap)", f"{r.details['count']} hits",
                 a, "`grep -rnIE` (all hits)", b, ""))

    r = ws.call("ws_glob", {"pattern": "**/*.py"}, session=ws.open_session())
    a, b = _pair(call("ws_glob", {"pattern": "**/*.py"}),
                 _run(["find", ".", "-name", "*.py", "-type", "f"], tree))
    rows.append(("ws_glob `**/*.py` (walks all, shows 200)", f"{r.details['count']} matches", a,
                 "`find -name '*.py'`", b, ""))

    biggest = max(
        (os.path.join(d, f) for d, _s, fs in os.walk(tree) for f in fs if f.endswith(".py")),
        key=os.path.getsize,
    )
    rel = os.path.relpath(biggest, tree)
    total = sum(1 for _ in open(biggest, encoding="utf-8", errors="replace"))
    a, b = _pair(call("ws_read", {"path": rel, "offset": total // 2}),
                 _run(["sed", "-n", f"{total // 2},{total // 2 + 119}p", rel], tree))
    rows.append((f"ws_read 120-line window mid-file ({rel}, {total} lines)", "", a,
                 "`sed -n A,Bp`", b, ""))

    a, b = _pair(call("ws_shell", {"command": "true"}),
                 _run(["bash", "-c", "true"], tree))
    rows.append(("ws_shell `true` (policy check + group + capture)", "", a,
                 "`subprocess.run(['bash','-c','true'])`", b, ""))

    commands = ["pytest -q tests 2>&1 | tail -5", "git log --oneline -5", "grep -rn 'a b' src",
                "cd sub && make test", "echo $(id)", "rm -rf build"]
    t = time.perf_counter()
    n = 2000
    for _ in range(n):
        for c in commands:
            shell_policy.check(c, "build", "/p", "/p")
    per = (time.perf_counter() - t) / (n * len(commands)) * 1e6
    rows.append(("shell_policy.check, per command line", f"{per:.1f} µs", 0.0, "", 0.0, ""))

    print(f"tree: {tree}; median of {RUNS}; Python {sys.version.split()[0]}\n")
    print("| task | result | ws tool | peer | peer time | tool / peer |")
    print("|---|---|---|---|---|---|")
    for task, result, tool_ms, peer, peer_ms, _ in rows:
        ratio = f"{tool_ms / peer_ms:.2f}×" if peer_ms else ""
        tool_s = f"{tool_ms:.1f} ms" if tool_ms else ""
        peer_s = f"{peer_ms:.1f} ms" if peer_ms else ""
        print(f"| {task} | {result} | {tool_s} | {peer} | {peer_s} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
