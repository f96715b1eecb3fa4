"""Benchmark of an anchored cell edit into the live document (issue 17): an agent's ``edit`` of
one line of a cell of a notebook open on a Jupyter server with jupyter-collaboration, from the
agent's call to the text being visible to another client of the room (the person's view; a Y
client here, no browser), beside the same ``edit`` of a plain file and of a notebook nobody has
open (on disk), through the same kernel and connection, in one run.

    PYTHONPATH=... .venv/bin/python bench/bench_live_notebook.py [--repeat 11]

Prints a Markdown table (docs/benchmarks.md, "Notebooks in the live document"). The server and
the person's client are those of tests/notebook_live/conftest.py. Runs alternate; medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kli import client
from kli.tools.file.anchors import line_hash
from tests.notebook_live.conftest import Person, start_collab_server

LINES = ["a = 1", "b = 2", "c = a + b", "print(c)", "c"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=11)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, start_collab_server(Path(tmp)) as server:
        src = "\n".join(LINES)
        live = server.new_notebook("live.ipynb", [("top", "x = 0"), ("mid", src),
                                                  ("end", "y = 0")])
        server.new_notebook("closed.ipynb", [("top", "x = 0"), ("mid", src), ("end", "y = 0")])
        (server.root / "plain.txt").write_text("x = 0\n" + src + "\ny = 0\n")
        kernel_id = server.start_session(live)
        agent = client.connect_server(server.url, kernel_id=kernel_id, timeout=60)
        person = Person(server, live)
        try:
            for p in (live, "closed.ipynb", "plain.txt"):
                assert agent.call("read", {"path": p}).ok
            current = {k: LINES[2] for k in ("live", "closed", "plain")}
            times: dict[str, list[float]] = {"live": [], "live_call": [], "closed": [],
                                             "plain": []}
            for i in range(args.repeat + 1):
                for kind in ("live", "closed", "plain"):
                    new = f"c = a + b + {i}"
                    old = current[kind]
                    if kind == "plain":
                        patch = f"@@ plain.txt\n= 4:{line_hash(old)}\n~{new}\n"
                    else:
                        nb = live if kind == "live" else "closed.ipynb"
                        patch = f"@@ {nb}#mid\n= 3:{line_hash(old)}\n~{new}\n"
                    t0 = time.perf_counter()
                    r = agent.call("edit", {"input": patch})
                    t1 = time.perf_counter()
                    assert r.ok, r.text
                    if kind == "live":
                        while new not in person.sources()[1]:
                            time.sleep(0.0005)
                        t2 = time.perf_counter()
                        if i:
                            times["live"].append((t2 - t0) * 1000)
                            times["live_call"].append((t1 - t0) * 1000)
                    elif i:
                        times[kind].append((t1 - t0) * 1000)
                    current[kind] = new
        finally:
            person.close()
            agent.close()
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"repeat {args.repeat}, medians in ms\n")
    print("| edit of one line | agent call returned, ms | visible to the person, ms | / plain file |")
    print("|---|---|---|---|")
    print(f"| cell of the open notebook (live Y document) | {med['live_call']:.1f} | "
          f"{med['live']:.1f} | {med['live'] / med['plain']:.1f}× |")
    print(f"| cell of a notebook nobody has open (disk) | {med['closed']:.1f} | — (on reload) | "
          f"{med['closed'] / med['plain']:.1f}× |")
    print(f"| plain file (.txt) | {med['plain']:.1f} | — | 1.0× |")


if __name__ == "__main__":
    main()
