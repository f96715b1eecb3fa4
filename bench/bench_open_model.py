"""Benchmark of an anchored cell edit into a JupyterLab tab's open model (issue 17, no
jupyter-collaboration): an agent's ``edit`` of one line of a cell of a notebook open in a tab of
real JupyterLab in Chromium, from the agent's call to the new text being in the page's model
(the page records when its cell changed), beside the same ``edit`` of a cell of a notebook
nobody has open (on disk) and of a plain file, through the same kernel and connection, in one
run.

    PYTHONPATH=... .venv/bin/python bench/bench_open_model.py [--repeat 11]

Prints a Markdown table (docs/benchmarks.md, "Notebooks in a tab's open model"). The server,
the extension build and Chromium are those of tests/browser/conftest.py, with collaboration
turned off as tests/notebook_live/test_open_model.py does. Runs alternate; medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kli import client
from kli.tools.file.anchors import line_hash
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, Lab, start_lab_server
from tests.notebook_live.test_open_model import _without_collaboration

LINES = ["a = 1", "b = 2", "c = a + b", "print(c)", "c"]

# Records, in the page, the wall-clock time (ms) at which the middle cell's source changes.
WATCH_JS = """() => {
  const m = window.jupyterapp.shell.currentWidget.content.widgets[1].model.sharedModel;
  window.kliChanged = [];
  m.changed.connect(() => window.kliChanged.push([Date.now(), m.getSource()]));
}"""


def main() -> None:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=11)
    args = ap.parse_args()
    src = "\n".join(LINES)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        _without_collaboration(base / "config")
        with start_lab_server(base) as server, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                         args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            lab = Lab(page, server)
            lab.open("tab.ipynb", ["x = 0", src, "y = 0"])
            server.new_notebook("closed.ipynb", ["x = 0", src, "y = 0"])
            (server.root / "plain.txt").write_text("x = 0\n" + src + "\ny = 0\n")
            agent = client.connect(str(server.connection_file(lab.notebook)), timeout=30)
            try:
                _run(agent, page, args.repeat)
            finally:
                agent.close()
                browser.close()


def _run(agent: Any, page: Any, repeat: int) -> None:
    deadline = time.monotonic() + 30
    while "True" not in agent.call("eval", {"code": (
            "import os\nprint(get_ipython().kernel.workspace.notebooks.models.has("
            "os.path.realpath('tab.ipynb')))")}).text:
        if time.monotonic() > deadline:
            raise SystemExit("the tab's report did not reach the kernel")
        time.sleep(0.2)
    ids = {}
    for p in ("tab.ipynb", "closed.ipynb", "plain.txt"):
        r = agent.call("read", {"path": p})
        assert r.ok, r.text
        if p.endswith(".ipynb"):
            ids[p] = r.details["cell_ids"][1]
    page.evaluate(WATCH_JS)
    current = {k: LINES[2] for k in ("tab", "closed", "plain")}
    times: dict[str, list[float]] = {"tab": [], "tab_call": [], "closed": [], "plain": []}
    for i in range(repeat + 1):
        for kind in ("tab", "closed", "plain"):
            new = f"c = a + b + {i}"
            old = current[kind]
            if kind == "plain":
                patch = f"@@ plain.txt\n= 4:{line_hash(old)}\n~{new}\n"
            else:
                nb = f"{kind}.ipynb"
                patch = f"@@ {nb}#{ids[nb]}\n= 3:{line_hash(old)}\n~{new}\n"
            wall0 = time.time()
            t0 = time.perf_counter()
            r = agent.call("edit", {"input": patch})
            took = (time.perf_counter() - t0) * 1000
            assert r.ok, r.text
            current[kind] = new
            if i == 0:
                continue  # warm-up
            if kind == "tab":
                seen = None
                deadline = time.monotonic() + 10
                while seen is None and time.monotonic() < deadline:
                    changes = page.evaluate("() => window.kliChanged")
                    seen = next((at for at, text in changes if new in text), None)
                assert seen is not None, "the edit never reached the page"
                times["tab"].append(seen - wall0 * 1000)
                times["tab_call"].append(took)
            else:
                times[kind].append(took)
    counted = agent.call("eval", {"code": "\n".join([
        "m = get_ipython().kernel.workspace.notebooks.models",
        "_kli_n = []",
        "_kli_send = m._request",
        "m._request = lambda *a, **k: (_kli_n.append(a[2].op), _kli_send(*a, **k))[1]",
    ])})
    assert counted.ok, counted.text
    new = "c = a + b + counted"
    r = agent.call("edit", {"input": f"@@ tab.ipynb#{ids['tab.ipynb']}\n"
                                     f"= 3:{line_hash(current['tab'])}\n~{new}\n"})
    assert r.ok, r.text
    ops = agent.call("eval", {"code": "m._request = _kli_send\nprint(_kli_n)"}).text
    print(f"Messages to the tab for one edit: {ops.strip().splitlines()[-1]}\n")
    plain = statistics.median(times["plain"])
    print(f"Medians of {repeat} alternating runs (ms).\n")
    print("| edit of one line | agent call returned, ms | in the page's model, ms | / plain file |")
    print("|---|---|---|---|")
    tab_call = statistics.median(times["tab_call"])
    print(f"| cell of the notebook open in a tab (open model) | {tab_call:.1f} | "
          f"{statistics.median(times['tab']):.1f} | {tab_call / plain:.1f}× |")
    closed = statistics.median(times["closed"])
    print(f"| cell of a notebook nobody has open (disk) | {closed:.1f} | — (on reload) | "
          f"{closed / plain:.1f}× |")
    print(f"| plain file (.txt) | {plain:.1f} | — | 1.0× |")


if __name__ == "__main__":
    main()
