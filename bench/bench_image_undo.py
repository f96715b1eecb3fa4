"""The cost of recording the live image for undo, per agent call, in one run (issue 33).

    .venv/bin/python bench/bench_image_undo.py [--rounds 300] [--kernel-rounds 150]

A namespace of 2,000 names (ints and small lists) and a 50 MB numpy array that no call
touches. Three calls, each with recording (setting ``image_undo``, the default) and without,
interleaved so a load change on a shared machine hits both alike; the medians and their ratio:

- ``total = total + 1``: rebinds a name (a change is recorded: the old int is kept);
- ``items.append(1)``: changes a small list in place (it is pickled before and after);
- ``n = big.shape[0]``: reads the 50 MB array (only read: never copied) and binds ``n``.

Two hosts: ``Workspace.call`` in this process (the tool alone, no transport: the harshest
ratio) and an agent's call to a real kli kernel through ``kli.client`` (what an agent pays).
Then the memory the records hold (``kli.tools.image.record.RECORDS``) after the in-process
rounds, and their bound.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

CALLS = ("total = total + 1", "items.append(1)", "n = big.shape[0]")
SETUP = ("import numpy as np\n"
         "for _i in range(1997):\n"
         "    globals()[f'name_{_i}'] = [_i] if _i % 3 == 0 else _i\n"
         "big = np.zeros(50 * 1024 * 1024 // 8)\nitems = []\ntotal = 0\n")


Timing = tuple[float, float]  # (median, minimum) in ms
Row = tuple[Timing, Timing, float]  # with recording, without, the median of the rounds' ratios


def _ms(samples: list[float]) -> Timing:
    return statistics.median(samples) * 1000, min(samples) * 1000


def _interleaved(call: Callable[[str, bool], Any], rounds: int,
                 switch: Callable[[bool], None] = lambda record: None) -> dict[str, Row]:
    """Median ms of each call with recording and without, alternating every round
    (``switch(record)`` runs before each half, untimed), and the median of each round's ratio
    (the two halves of a round run a moment apart: a load change between rounds, on a shared
    machine, moves both)."""
    got: dict[tuple[str, bool], list[float]] = {(c, r): [] for c in CALLS for r in (True, False)}
    for record in (True, False):
        switch(record)
        for code in CALLS:
            call(code, record)
    for i in range(rounds):
        for record in ((True, False) if i % 2 else (False, True)):
            switch(record)
            for code in CALLS:
                t = time.perf_counter()
                call(code, record)
                got[(code, record)].append(time.perf_counter() - t)
    return {code: (_ms(got[(code, True)]), _ms(got[(code, False)]), statistics.median(
        w / o for w, o in zip(got[(code, True)], got[(code, False)], strict=True)))
        for code in CALLS}


def in_process(rounds: int) -> dict[str, Row]:
    from kli.tools.core.workspace import Workspace

    ns: dict[str, Any] = {}
    exec(SETUP, ns)
    on = Workspace(tempfile.mkdtemp(prefix="kli-bench-img-"), namespace=ns)
    off = Workspace(tempfile.mkdtemp(prefix="kli-bench-img-"), settings={"image_undo": False},
                    namespace=ns)

    def call(code: str, record: bool) -> None:
        if len(ns["items"]) > 50:
            ns["items"].clear()
        r = (on if record else off).call("eval", {"code": code})
        assert r.ok, r.text

    return _interleaved(call, rounds)


def in_kernel(rounds: int) -> dict[str, Row]:
    from jupyter_client.manager import KernelManager

    from kli import client

    root = tempfile.mkdtemp(prefix="kli-bench-img-k-")
    os.makedirs(os.path.join(root, ".kli"))
    settings = os.path.join(root, ".kli", "settings.json")
    km = KernelManager(kernel_name="kli")
    km.start_kernel(cwd=root)
    try:
        agent = client.connect(km.connection_file, label="bench", timeout=60)
        try:
            r = agent.call("eval", {"code": SETUP})
            assert r.ok, r.text
            def switch(record: bool) -> None:  # the setting, read per call (by mtime)
                with open(settings, "w") as fh:
                    json.dump({"image_undo": record}, fh)
                stamp = time.time() + (1 if record else 2)
                os.utime(settings, (stamp, stamp))

            def call(code: str, record: bool) -> None:
                r = agent.call("eval", {"code": code + ("\nitems.clear()" if "items" in code else "")})
                assert r.ok, r.text

            return _interleaved(call, rounds, switch)
        finally:
            agent.close()
    finally:
        km.shutdown_kernel(now=True)


def _table(title: str, rows: dict[str, Row]) -> None:
    print(f"\n{title} median (minimum); the ratio of the medians (of the minimums), and the median of"
          " the rounds' ratios")
    print("| call | with recording (ms) | without (ms) | ratio | rounds' ratio |\n|---|---|---|---|---|")
    for code, ((w_med, w_min), (o_med, o_min), paired) in rows.items():
        print(f"| `{code}` | {w_med:.3f} ({w_min:.3f}) | {o_med:.3f} ({o_min:.3f}) | "
              f"{w_med / o_med:.2f}× ({w_min / o_min:.2f}×) | {paired:.3f}× |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--kernel-rounds", type=int, default=150)
    ns = parser.parse_args(argv)
    from kli.tools.image import record

    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}; a namespace of 2,000 names and a 50 MB array no call touches")
    _table("In process (Workspace.call, no transport):", in_process(ns.rounds))
    held = record.RECORDS.held()
    print(f"\nrecords kept: {len(record.RECORDS.by_change)} (bound {record.MAX_RECORDS}), "
          f"holding {held / 1024:.1f} KiB (bound image_undo_budget_mb = {record.BUDGET_MB} MB; "
          f"an object over image_undo_object_mb = {record.OBJECT_MAX_MB} MB is not copied)")
    if ns.kernel_rounds:
        _table("An agent's call to a kli kernel (kli.client over the comm):",
               in_kernel(ns.kernel_rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
