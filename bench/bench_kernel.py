"""Kernel round trips and start-up, measured side by side in one run.

    .venv/bin/python bench/bench_kernel.py [--rounds 300] [--starts 7]

Rows (targets from issue 4):
  * ``read`` of a 200-line file through the kli.agent comm vs a bare comm echo (``ping``):
    at most 2.5x;
  * the same ``read`` vs an ``execute_request`` of ``pass`` on the same kernel: below it;
  * kernel start to first ``kernel_info`` reply, kli vs the stock ``python3`` kernel: at most
    1.2x.
Round trips are measured from a separate process through jupyter_client, as an agent sees them.
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import sys
import tempfile
import time
from typing import Any


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _execute_pass(kc: Any) -> float:
    started = time.perf_counter()
    msg_id = kc.execute("pass", store_history=False)
    while True:
        reply = kc.get_shell_msg(timeout=10)
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    elapsed = time.perf_counter() - started
    while True:  # drain this request's iopub (busy, execute_input, idle) outside the timing
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            break
        if (msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status"
                and msg["content"]["execution_state"] == "idle"):
            break
    return elapsed


def round_trips(rounds: int) -> dict[str, float]:
    from kli import client

    root = tempfile.mkdtemp(prefix="kli-bench-")
    with open(os.path.join(root, "two_hundred.py"), "w") as fh:
        for i in range(200):
            fh.write(f"value_{i:03d} = compute({i}, scale=3.5)  # line {i + 1} of the file\n")
    with client.start(cwd=root, label="bench", timeout=60) as k:
        kc = k.transport.client
        for _ in range(20):  # warm up every path
            k.ping()
            k.call("read", {"path": "two_hundred.py"})
            _execute_pass(kc)
        ping, read, execute = [], [], []
        for _ in range(rounds):  # interleaved, so drift hits every row alike
            ping.append(k.ping())
            started = time.perf_counter()
            result = k.call("read", {"path": "two_hundred.py"})
            read.append(time.perf_counter() - started)
            assert result.ok and result.details.get("lines") == 200, result.text[:200]
            execute.append(_execute_pass(kc))
    return {"ping": _median_ms(ping), "read": _median_ms(read), "execute": _median_ms(execute)}


def start_time(kernel_name: str) -> float:
    from jupyter_client.manager import KernelManager

    km = KernelManager(kernel_name=kernel_name)
    started = time.perf_counter()
    km.start_kernel(cwd=tempfile.gettempdir())
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        return time.perf_counter() - started
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--starts", type=int, default=7)
    ns = parser.parse_args(argv)

    rt = round_trips(ns.rounds)
    starts: dict[str, list[float]] = {"kli": [], "python3": []}
    start_time("kli")  # warm the file cache for both
    start_time("python3")
    for _ in range(ns.starts):
        for name in starts:
            starts[name].append(start_time(name))
    kli_start, py_start = _median_ms(starts["kli"]), _median_ms(starts["python3"])

    read_vs_ping = rt["read"] / rt["ping"]
    read_vs_exec = rt["read"] / rt["execute"]
    start_ratio = kli_start / py_start
    print(f"kernel benchmark — {ns.rounds} interleaved round trips, {ns.starts} starts per kernel "
          f"(Python {sys.version.split()[0]})\n")
    print("| measurement | median | compared with | its median | ratio | target |")
    print("|---|---:|---|---:|---:|---|")
    print(f"| `read` 200 lines via kli.agent comm | {rt['read']:.2f} ms | bare comm echo (`ping`) "
          f"| {rt['ping']:.2f} ms | {read_vs_ping:.2f}x | <= 2.5x "
          f"{'met' if read_vs_ping <= 2.5 else 'MISSED'} |")
    print(f"| `read` 200 lines via kli.agent comm | {rt['read']:.2f} ms | `execute_request` of "
          f"`pass` | {rt['execute']:.2f} ms | {read_vs_exec:.2f}x | < 1x "
          f"{'met' if read_vs_exec < 1 else 'MISSED'} |")
    print(f"| start to first `kernel_info` reply, kli | {kli_start:.0f} ms | stock `python3` "
          f"kernel | {py_start:.0f} ms | {start_ratio:.2f}x | <= 1.2x "
          f"{'met' if start_ratio <= 1.2 else 'MISSED'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
