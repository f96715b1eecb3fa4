"""The cost of the box (docs/sandbox.md), with and without it in one run.

    .venv/bin/python bench/bench_sandbox.py [--repeat N]

Prints a Markdown table (paste it under "## The box" in docs/benchmarks.md):

- ``bash true`` through ``Workspace.call`` with the box off and with the setting on (each command
  started under ``bwrap``: new namespaces, the binds);
- ``bash true`` and ``eval pass`` as an agent's calls (``kli.client``) to a plain ``kli`` kernel
  and to a ``kli-sandboxed`` kernel (the kernel in the box; every message through the launcher's
  proxies; a command starts in the box the kernel is already in);
- each kernel's start, until it answers a call.

Medians of ``--repeat`` interleaved runs (each kind in turn, so a load change hits all alike),
the minimum in brackets, and the ratio box / no box.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

from kli.tools import Workspace


def _timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _row(name: str, off: list[float], on: list[float]) -> str:
    m_off, m_on = statistics.median(off), statistics.median(on)
    return (f"| {name} | {m_off * 1000:.2f} ({min(off) * 1000:.2f}) ms | "
            f"{m_on * 1000:.2f} ({min(on) * 1000:.2f}) ms | {m_on / m_off:.2f}× "
            f"({min(on) / min(off):.2f}×) |")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=200)
    ns = parser.parse_args()
    if shutil.which("bwrap") is None:
        print("bubblewrap (bwrap) is not installed: apt-get install bubblewrap", file=sys.stderr)
        return 1
    from kli.client import start

    base = tempfile.mkdtemp(prefix="kli-bench-box-")
    rows = []
    try:
        roots = {}
        for name in ("off", "on", "kli", "kli-sandboxed"):
            roots[name] = os.path.join(base, name)
            os.makedirs(roots[name])
        ws_off = Workspace(roots["off"])
        ws_on = Workspace(roots["on"], settings={"sandbox": "on"})
        agent = {"source": "agent"}
        starts: dict[str, float] = {}
        clients = {}
        for kernel in ("kli", "kli-sandboxed"):
            t = time.perf_counter()
            clients[kernel] = start(kernel, cwd=roots[kernel])
            clients[kernel].call("eval", {"code": "pass"})
            starts[kernel] = time.perf_counter() - t
        runs: dict[str, Callable[[], object]] = {
            "ws off": lambda: ws_off.call("bash", {"command": "true"}, **agent),
            "ws on": lambda: ws_on.call("bash", {"command": "true"}, **agent),
            "k bash off": lambda: clients["kli"].call("bash", {"command": "true"}),
            "k bash on": lambda: clients["kli-sandboxed"].call("bash", {"command": "true"}),
            "k eval off": lambda: clients["kli"].call("eval", {"code": "pass"}),
            "k eval on": lambda: clients["kli-sandboxed"].call("eval", {"code": "pass"}),
        }
        for fn in runs.values():  # warm
            fn()
        times: dict[str, list[float]] = {k: [] for k in runs}
        for _ in range(ns.repeat):
            for key, fn in runs.items():
                times[key].append(_timed(fn))
        for kernel in clients.values():
            kernel.close()
        rows.append(_row("`bash true`, Workspace.call (setting on: each command under bwrap)",
                         times["ws off"], times["ws on"]))
        rows.append(_row("`bash true`, an agent's call to the kernel (`kli` vs `kli-sandboxed`)",
                         times["k bash off"], times["k bash on"]))
        rows.append(_row("`eval pass`, an agent's call to the kernel (`kli` vs `kli-sandboxed`)",
                         times["k eval off"], times["k eval on"]))
        rows.append(f"| kernel start until it answers `eval pass` (once) | "
                    f"{starts['kli']:.2f} s | {starts['kli-sandboxed']:.2f} s | "
                    f"{starts['kli-sandboxed'] / starts['kli']:.2f}× |")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    load = os.getloadavg()[0]
    print(f"{ns.repeat} interleaved runs each after a warm-up; median (minimum); load average "
          f"{load:.1f} on {os.cpu_count()} CPUs\n")
    print("| measure | box off | box on | ratio |\n|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
