"""Benchmark of the JupyterLab extension's inline diff: time from running a cell that displays
an edit result to its view in the page, for the extension's renderer (CodeMirror merge view of
``application/vnd.kli.edit+json``) and, side by side in the same page, JupyterLab's rendering of
the bundle's ``text/html`` fallback (the coloured diff the kernel sends for frontends without
the extension). Real JupyterLab, real kli kernel, headless Chromium.

    .venv/bin/python bench/bench_extension.py [--lines 200,2000,20000] [--repeat 7]

Prints a Markdown table (paste it under "## Extension" in docs/benchmarks.md).

For each file size the kernel first builds the bundle of a ``write`` that changes 1% of the
lines, spread over the file (untimed). Each timed cell only ``display``s it: the full bundle
(the extension renders it) or the bundle without the kli MIME type (JupyterLab renders the
HTML). The time runs from ``notebook:run-cell`` to the first animation frame after the view's
element (``.kli-DiffView .cm-editor`` / ``.jp-RenderedHTMLCommon``) is in the cell, measured
in the page. Extension and peer runs alternate; the median of ``repeat`` after one warm-up.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

_TIMED_RUN_JS = """
async ([source, selector]) => {
  const app = window.jupyterapp;
  const nb = app.shell.currentWidget.content;
  nb.activeCellIndex = nb.widgets.length - 1;
  await app.commands.execute('notebook:insert-cell-below');
  const cell = nb.activeCell;
  cell.model.sharedModel.setSource(source);
  const node = cell.node;
  const t0 = performance.now();
  const seen = new Promise(resolve => {
    const check = () => !!node.querySelector(selector);
    if (check()) { resolve(); return; }
    const mo = new MutationObserver(() => { if (check()) { mo.disconnect(); resolve(); } });
    mo.observe(node, { subtree: true, childList: true });
  });
  app.commands.execute('notebook:run-cell');
  await seen;
  await new Promise(r => requestAnimationFrame(() => r()));
  const ms = performance.now() - t0;
  await app.commands.execute('notebook:delete-cell');
  return ms;
}
"""

SETUP_CELL = """
from kli.kernel.display import edit_bundle
from kli.tools import Workspace
import os
_ws = Workspace(os.getcwd())
bundles = {}
for n in %(sizes)r:
    path = f"bench_{n}.py"
    lines = [f"value_{i} = compute({i}, 'x' * {i %% 40})" for i in range(n)]
    with open(path, "w") as f:
        f.write("\\n".join(lines) + "\\n")
    step = 100
    new = [l + "  # changed" if i %% step == step // 2 else l for i, l in enumerate(lines)]
    r = _ws.call("write", {"path": path, "content": "\\n".join(new) + "\\n"})
    assert r.ok, r.text
    b = edit_bundle("write", r, "bench")
    bundles[n] = (b, {k: v for k, v in b.items() if k != "application/vnd.kli.edit+json"})
print("ready")
"""


def _conftest() -> Any:
    spec = importlib.util.spec_from_file_location(
        "kli_browser_conftest", REPO / "tests" / "browser" / "conftest.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", default="200,2000,20000")
    ap.add_argument("--repeat", type=int, default=7)
    ns = ap.parse_args()
    sizes = [int(x) for x in ns.lines.split(",")]
    lab_mod = _conftest()
    from playwright.sync_api import sync_playwright

    rows = []
    with tempfile.TemporaryDirectory() as tmp, lab_mod.start_lab_server(Path(tmp)) as server, \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=lab_mod.CHROMIUM, headless=True,
                                     args=lab_mod.CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 950})
            page.set_default_timeout(120_000)
            lab = lab_mod.Lab(page, server)
            lab.open("bench.ipynb")
            lab.run(SETUP_CELL % {"sizes": sizes}).locator(
                ".jp-OutputArea-output", has_text="ready").wait_for()
            for n in sizes:
                ext_cell = f"display(bundles[{n}][0], raw=True)"
                html_cell = f"display(bundles[{n}][1], raw=True)"
                ext_sel = ".kli-DiffView .cm-editor"
                html_sel = ".jp-RenderedHTMLCommon"
                page.evaluate(_TIMED_RUN_JS, [ext_cell, ext_sel])  # warm-up
                page.evaluate(_TIMED_RUN_JS, [html_cell, html_sel])
                ext, html = [], []
                for _ in range(ns.repeat):
                    ext.append(page.evaluate(_TIMED_RUN_JS, [ext_cell, ext_sel]))
                    html.append(page.evaluate(_TIMED_RUN_JS, [html_cell, html_sel]))
                rows.append((n, statistics.median(ext), statistics.median(html)))
        finally:
            browser.close()

    print("| file lines (1% changed) | extension: merge view | JupyterLab: text/html diff "
          "| ratio |")
    print("|---:|---:|---:|---:|")
    for n, ext_ms, html_ms in rows:
        print(f"| {n:,} | {ext_ms:.0f} ms | {html_ms:.0f} ms | {ext_ms / html_ms:.1f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
