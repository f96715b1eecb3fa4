"""`read` latency while a cell runs vs when the kernel is idle, in one run (issue 15).

    .venv/bin/python bench/bench_live_image.py [--rounds 200] [--cell 30]

One kli kernel; an agent attached through kli.client (the comm, as an agent sees it) and a
second jupyter_client client that runs the cell, as a person's notebook would. Rows: `read` of
a 200-line file with the kernel idle; the same `read` while a `time.sleep` cell runs (answered
on the kernel's tool subshell); idle again; and an `eval` sent during the cell, which waits for
it by design (its latency is the rest of the cell).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time


def _ms(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return statistics.median(samples) * 1000, p95 * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--cell", type=float, default=30.0, help="seconds the busy cell sleeps")
    ns = parser.parse_args(argv)

    from jupyter_client.manager import KernelManager

    from kli import client

    root = tempfile.mkdtemp(prefix="kli-bench-busy-")
    with open(os.path.join(root, "two_hundred.py"), "w") as fh:
        for i in range(200):
            fh.write(f"value_{i:03d} = compute({i}, scale=3.5)  # line {i + 1} of the file\n")
    km = KernelManager(kernel_name="kli")
    km.start_kernel(cwd=root)
    # Its own client and Session: two clients from km.client() share one Session, whose id is
    # the shell socket's ZMQ identity, so the kernel's replies would reach only one of them.
    from jupyter_client.blocking import BlockingKernelClient

    person = BlockingKernelClient(connection_file=km.connection_file)
    person.load_connection_file()
    person.start_channels()
    person.wait_for_ready(timeout=60)
    agent = client.attach_manager(km, label="bench")

    def reads(n: int) -> list[float]:
        out = []
        for _ in range(n):
            started = time.perf_counter()
            result = agent.call("read", {"path": "two_hundred.py"})
            out.append(time.perf_counter() - started)
            assert result.ok and result.details.get("lines") == 200, result.text[:200]
        return out

    try:
        reads(20)  # warm every path, the tool subshell included
        idle_before = reads(ns.rounds)
        person.execute(f"import time\ntime.sleep({ns.cell})", store_history=False)
        time.sleep(0.5)
        cell_started = time.perf_counter() - 0.5
        busy = reads(ns.rounds)
        busy_done = time.perf_counter() - cell_started
        if busy_done >= ns.cell:
            raise SystemExit(f"the reads took {busy_done:.1f} s, longer than the cell; "
                             "give a longer --cell")
        status = agent.request({"op": "ping"})
        sent = time.perf_counter()
        evaluated = agent.call("eval", {"code": "1"}, timeout=ns.cell + 30)
        eval_wait = time.perf_counter() - sent
        assert evaluated.ok
        left = ns.cell - (sent - cell_started)
        idle_after = reads(ns.rounds)
    finally:
        agent.close()
        person.stop_channels()
        km.shutdown_kernel(now=False)

    ib, ib95 = _ms(idle_before)
    bz, bz95 = _ms(busy)
    ia, ia95 = _ms(idle_after)
    running = status.get("status", {}).get("running", {})
    print(f"live-image benchmark — {ns.rounds} `read` calls (200 lines) per row, one kernel, "
          f"a {ns.cell:g} s cell (Python {sys.version.split()[0]})\n")
    print("| measurement | median | p95 | vs idle (median) |")
    print("|---|---:|---:|---:|")
    print(f"| `read` via kli.agent comm, kernel idle | {ib:.2f} ms | {ib95:.2f} ms | 1.00x |")
    print(f"| `read` via kli.agent comm, during the running cell | {bz:.2f} ms | {bz95:.2f} ms | "
          f"{bz / ib:.2f}x |")
    print(f"| `read` via kli.agent comm, idle again | {ia:.2f} ms | {ia95:.2f} ms | "
          f"{ia / ib:.2f}x |")
    print(f"| `eval` sent during the cell (waits for it by design) | {eval_wait * 1000:.0f} ms "
          f"| | cell had {left * 1000:.0f} ms left |")
    print(f"\n`ping` during the cell: busy={status.get('status', {}).get('busy')}, running "
          f"{running.get('kind')} for {running.get('seconds')} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
