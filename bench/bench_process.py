"""Benchmark of the kli process tools, side by side with their peers in one run.

    .venv/bin/python bench/bench_process.py [--repeat N] [--gigabytes G] [--peer-mb MB]

Prints a Markdown table (paste it under "## Process tools: bash, eval" in docs/benchmarks.md):

- overhead of ``bash`` running ``true`` through ``Workspace.call`` (validation, gate, interactive
  check, process group, pipes, result text) vs ``subprocess.run(['sh', '-c', 'true'])`` — the
  target is ≤ 1.3× — and ``run_command`` alone. Medians of ``--repeat`` interleaved runs.
  For context, the same against ``subprocess.run(..., capture_output=True)`` (which, like
  bash, pipes and reads both streams). Also the CPU time the calling process spends per call (``time.process_time``), which load on
  a shared machine disturbs less than wall time.
- ``eval`` of ``1 + 1`` through ``Workspace.call``, for scale.
- peak RSS of a child interpreter while ``bash`` caps ``yes | head -c {G}G`` (default 5 GB),
  above the same child's idle peak after importing kli (target ≤ 64 MB above idle); and, for
  scale, the peer ``subprocess.run(..., capture_output=True)`` holding ``--peer-mb`` of the same
  output (it keeps all of it: it cannot be run on 5 GB here).
- the same for an ``eval`` printing loop stopped by a 3 s timeout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from kli.tools import Workspace
from kli.tools.process.runner import run_command

_MEMORY_CHILD = """
import json, resource, subprocess, sys, time
from kli.tools import Workspace

def hwm_kb():
    # This process's own peak RSS (VmHWM). ru_maxrss may carry the parent's high-water mark
    # into a child started by fork/vfork + exec.
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

ws = Workspace(sys.argv[1])
ws.call("bash", {"command": "true"})  # warm: every module the call needs is imported
ws.call("eval", {"code": "1"})
idle = hwm_kb()
t = time.perf_counter()
mode = sys.argv[2]
if mode == "peer":
    p = subprocess.run(["sh", "-c", sys.argv[3]], capture_output=True)
    produced = len(p.stdout)
else:
    r = ws.call(mode, json.loads(sys.argv[3]))
    produced = r.details["stdout_total"]
seconds = time.perf_counter() - t
peak = hwm_kb()
print(json.dumps({"idle_kb": idle, "peak_kb": peak, "produced": produced, "seconds": seconds}))
"""


def _memory(root: str, mode: str, arg: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _MEMORY_CHILD, root, mode, arg],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument("--gigabytes", type=int, default=5)
    parser.add_argument("--peer-mb", type=int, default=512)
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="kli-bench-process-")
    ws = Workspace(root)
    peer: list[float] = []
    tool: list[float] = []
    runner: list[float] = []
    evals: list[float] = []
    capturing: list[float] = []
    cpu: dict[str, list[float]] = {"peer": [], "tool": []}
    for fn in (
        lambda: subprocess.run(["sh", "-c", "true"], check=False),
        lambda: ws.call("bash", {"command": "true"}),
        lambda: run_command(["sh", "-c", "true"], cwd=root, timeout=30, cap=1 << 20),
        lambda: ws.call("eval", {"code": "1 + 1"}),
    ):
        fn()  # warm-up
    for _ in range(args.repeat):
        for fn, bucket in (
            (lambda: subprocess.run(["sh", "-c", "true"], check=False), peer),
            (lambda: ws.call("bash", {"command": "true"}), tool),
            (lambda: run_command(["sh", "-c", "true"], cwd=root, timeout=30, cap=1 << 20), runner),
            (lambda: ws.call("eval", {"code": "1 + 1"}), evals),
            (lambda: subprocess.run(["sh", "-c", "true"], capture_output=True), capturing),
        ):
            c = time.process_time()
            t = time.perf_counter()
            fn()
            bucket.append(time.perf_counter() - t)
            if bucket is peer or bucket is tool:
                cpu["peer" if bucket is peer else "tool"].append(time.process_time() - c)
    peer_ms, tool_ms = _median_ms(peer), _median_ms(tool)
    peer_min, tool_min, runner_min = (min(b) * 1000 for b in (peer, tool, runner))

    big = f"yes | head -c {args.gigabytes}G"
    mem_tool = _memory(root, "bash", json.dumps({"command": big, "timeout": 300}))
    mem_peer = _memory(root, "peer", f"yes | head -c {args.peer_mb}M")
    loop = {"code": "while True:\n    print('x' * 1000)", "timeout": 3}
    mem_eval = _memory(root, "eval", json.dumps(loop))

    def mb(kb: float) -> str:
        return f"{kb / 1024:.1f} MB"

    with open("/proc/loadavg") as fh:
        load = fh.read().split()[0]
    print(
        f"Python {sys.version.split()[0]}, {args.repeat} interleaved runs each, median (min); "
        f"load average {load} on {os.cpu_count()} CPUs.\n"
    )
    print("| measure | kli | peer | ratio / target |")
    print("|---|---|---|---|")
    print(
        f"| `bash` running `true` (Workspace.call) | {tool_ms:.2f} ({tool_min:.2f}) ms | "
        f"{peer_ms:.2f} ({peer_min:.2f}) ms `subprocess.run(['sh','-c','true'])` | "
        f"{tool_ms / peer_ms:.2f}× ({tool_min / peer_min:.2f}×), target ≤ 1.3× |"
    )
    print(
        f"| `run_command(['sh','-c','true'])` alone | {_median_ms(runner):.2f} "
        f"({runner_min:.2f}) ms | {peer_ms:.2f} ({peer_min:.2f}) ms | "
        f"{_median_ms(runner) / peer_ms:.2f}× ({runner_min / peer_min:.2f}×) |"
    )
    print(
        f"| ↳ peer that captures too: `subprocess.run(..., capture_output=True)` | "
        f"{tool_ms:.2f} ({tool_min:.2f}) ms | {_median_ms(capturing):.2f} "
        f"({min(capturing) * 1000:.2f}) ms | {tool_ms / _median_ms(capturing):.2f}× "
        f"({tool_min / (min(capturing) * 1000):.2f}×) |"
    )
    cpu_peer, cpu_tool = (statistics.mean(cpu[k]) * 1000 for k in ("peer", "tool"))
    print(
        f"| ↳ CPU time of the calling process per call (mean) | {cpu_tool:.3f} ms | "
        f"{cpu_peer:.3f} ms | {cpu_tool / cpu_peer:.2f}× |"
    )
    print(f"| `eval` of `1 + 1` (Workspace.call) | {_median_ms(evals):.3f} ms | — | — |")
    for label, mem in (
        ("`bash` capping `" + big.replace("|", "\\|") + "`", mem_tool),
        ("`eval` printing loop for 3 s (timeout)", mem_eval),
    ):
        above = mem["peak_kb"] - mem["idle_kb"]
        print(
            f"| peak RSS, {label}: {mem['produced'] / 1e9:.2f} GB produced in "
            f"{mem['seconds']:.1f} s | {mb(mem['peak_kb'])} ({mb(above)} above idle "
            f"{mb(mem['idle_kb'])}) | — | {mb(above)} ≤ 64 MB |"
        )
    above_peer = mem_peer["peak_kb"] - mem_peer["idle_kb"]
    print(
        f"| peak RSS, peer `subprocess.run(capture_output=True)` of `yes \\| head -c "
        f"{args.peer_mb}M` | — | {mb(mem_peer['peak_kb'])} ({mb(above_peer)} above idle) | "
        "keeps everything |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
