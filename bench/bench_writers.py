"""Concurrent writers (issue 18): edits lost when two kli processes, or a kli process and an
appender that takes no lock, write one file at once.

    .venv/bin/python bench/bench_writers.py [--edits 500] [--appends 1500]

The writer processes are those of tests/hardening/test_concurrent_writers.py
(tests/hardening/_writers.py); they import ``kli`` from the environment's PYTHONPATH, so the same
script measures an older tree (``git archive OLD tools kernel client`` into DIR/kli and
``PYTHONPATH=DIR``) against the current one. Prints a Markdown table (docs/reliability.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

WRITERS = os.path.join(os.path.dirname(__file__), "..", "tests", "hardening", "_writers.py")


def _run(roles: list[tuple[str, dict[str, object]]]) -> list[dict[str, object]]:
    procs = [
        subprocess.Popen(
            [sys.executable, WRITERS, role, json.dumps(args)], stdout=subprocess.PIPE, text=True
        )
        for role, args in roles
    ]
    out = []
    for p in procs:
        stdout, _ = p.communicate(timeout=900)
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


def two_kli(edits: int, tool: str) -> str:
    with tempfile.TemporaryDirectory() as root:
        path = os.path.join(root, "f.txt")
        with open(path, "w") as fh:
            fh.write("A\nB\n")
        go = time.time() + 2
        results = _run([
            ("kli", {"root": root, "tool": tool, "marker": m, "tag": t, "count": edits,
                     "start_at": go})
            for m, t in (("A", "a"), ("B", "b"))
        ])
        with open(path) as fh:
            lines = set(fh.read().split("\n"))
    applied = [x for r in results for x in r["applied"]]  # type: ignore[attr-defined]
    lost = [x for x in applied if x not in lines]
    refused = sum(sum(r["refused"].values()) for r in results)  # type: ignore[attr-defined]
    return (f"| two kli processes, {tool}, {edits} edits each | {len(applied)} | {len(lost)} | "
            f"— | {refused} |")


def with_appender(edits: int, appends: int, tool: str) -> str:
    with tempfile.TemporaryDirectory() as root:
        path = os.path.join(root, "f.txt")
        with open(path, "w") as fh:
            fh.write("A\n")
        go = time.time() + 2
        kli, app = _run([
            ("kli", {"root": root, "tool": tool, "marker": "A", "tag": "a", "count": edits,
                     "start_at": go}),
            ("appender", {"path": path, "count": appends, "start_at": go}),
        ])
        with open(path) as fh:
            lines = set(fh.read().split("\n"))
    applied = kli["applied"]
    lost = [x for x in applied if x not in lines]  # type: ignore[union-attr]
    lost_appends = [x for x in app["written"] if x not in lines]  # type: ignore[union-attr]
    refused = sum(kli["refused"].values())  # type: ignore[union-attr]
    return (f"| kli {tool} ({edits} edits) and an appender ({appends} lines, no lock) | "
            f"{len(applied)} | {len(lost)} | {len(lost_appends)} | {refused} |")  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edits", type=int, default=500)
    parser.add_argument("--appends", type=int, default=1500)
    args = parser.parse_args()
    print("| writers | edits reported applied | of them lost | appended lines lost | "
          "refusals (retried) |")
    print("|---|---:|---:|---:|---:|")
    print(two_kli(args.edits, "edit"))
    print(two_kli(args.edits, "ws_edit"))
    print(with_appender(args.edits, args.appends, "edit"))


if __name__ == "__main__":
    main()
