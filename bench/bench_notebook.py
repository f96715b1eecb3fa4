"""Benchmark of an anchored cell edit on disk: ``edit`` of one line of one cell of a notebook,
beside the same ``edit`` of a plain file holding the same lines (as ``.txt``: no checks; as
``.py``: the Python check, and the live image's stale-module note), and beside a peer's blind
cell write (nbformat.read, set the source, nbformat.write — no anchors, no stale check, what an
MCP notebook tool does on disk), side by side in one run.

    .venv/bin/python bench/bench_notebook.py [--cells 10 100 1000] [--repeat 15]

Prints a Markdown table (paste it under "## Notebooks on disk" in docs/benchmarks.md). Each
notebook cell has 5 source lines and a 3-line stream output; the plain file holds every cell's
source lines. The cell edit is Python-checked like the ``.py`` file. Each kli edit replaces one line of the middle cell using the fresh anchors of the
previous edit (no read in between). Runs alternate (median of ``repeat`` after a warm-up) so
machine load hits all three.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

from kli.tools import Workspace
from kli.tools.file.anchors import line_hash


def _sources(cells: int) -> list[str]:
    return [
        "\n".join(f"value_{c}_{i} = {c} * {i}" for i in range(4)) + f"\nprint(value_{c}_3)"
        for c in range(cells)
    ]


def _notebook(path: Path, sources: list[str]) -> None:
    nb = new_notebook(metadata={"language_info": {"name": "python"}})
    for c, src in enumerate(sources):
        cell = new_code_cell(src, id=f"cell-{c}", execution_count=c + 1)
        cell.outputs = [new_output("stream", name="stdout", text="1\n2\n3\n")]
        nb.cells.append(cell)
    nbformat.write(nb, str(path))



def run(cells: int, repeat: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sources = _sources(cells)
        _notebook(root / "nb.ipynb", sources)
        (root / "same.py").write_text("\n".join(sources) + "\n")
        (root / "same.txt").write_text("\n".join(sources) + "\n")
        ws = Workspace(tmp)
        mid = cells // 2
        file_line = mid * 5 + 2  # line 2 of the middle cell, in the plain file
        ws.call("read", {"path": f"nb.ipynb#cell-{mid}"})
        for name in ("same.py", "same.txt"):
            ws.call("read", {"path": name, "start": file_line - 2, "end": file_line + 2})
        first = f"value_{mid}_1 = {mid} * 1"
        state = {"cell": first, "same.py": first, "same.txt": first}

        def cell_edit(n: int) -> None:
            new = f"value_{mid}_1 = {n}"
            anchor = f"2:{line_hash(state['cell'])}"
            r = ws.call("edit", {"input": f"@@ nb.ipynb#cell-{mid}\n= {anchor}\n~{new}\n"})
            assert r.ok, r.text
            state["cell"] = new

        def file_edit(name: str) -> Callable[[int], None]:
            def edit(n: int) -> None:
                new = f"value_{mid}_1 = {n}"
                anchor = f"{file_line}:{line_hash(state[name])}"
                r = ws.call("edit", {"input": f"@@ {name}\n= {anchor}\n~{new}\n"})
                assert r.ok, r.text
                state[name] = new

            return edit

        def blind(n: int) -> None:
            nb = nbformat.read(str(root / "nb.ipynb"), 4)
            lines = nb.cells[mid].source.split("\n")
            lines[1] = f"value_{mid}_1 = {n}"
            nb.cells[mid].source = "\n".join(lines)
            nbformat.write(nb, str(root / "nb.ipynb"))
            state["cell"] = lines[1]

        runs = {"cell": cell_edit, "txt": file_edit("same.txt"), "py": file_edit("same.py"),
                "blind": blind}
        times: dict[str, list[float]] = {name: [] for name in runs}
        for n in range(repeat + 1):
            for name, fn in runs.items():
                t = time.perf_counter()
                fn(n)
                if n:
                    times[name].append(time.perf_counter() - t)
        return {k: statistics.median(v) * 1000 for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", type=int, nargs="+", default=[10, 100, 1000])
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    print("| cells (lines) | `edit` of a cell, ms | `edit` of the lines as .txt, ms | as .py, ms | "
          "nbformat read + write (blind), ms | cell / .txt | cell / blind |")
    print("|---|---|---|---|---|---|---|")
    for cells in args.cells:
        t = run(cells, args.repeat)
        print(f"| {cells} ({cells * 5}) | {t['cell']:.2f} | {t['txt']:.2f} | {t['py']:.2f} | "
              f"{t['blind']:.2f} | {t['cell'] / t['txt']:.1f}× | {t['cell'] / t['blind']:.1f}× |")


if __name__ == "__main__":
    main()
