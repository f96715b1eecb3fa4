"""Every notebook edit and run is an event of the ``kli.ui`` comm (the activity panel): a cell
edit names the cell it changed, a ``run_cells`` call its cells and their outcome."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from kli.tools.file.anchors import line_hash

pytestmark = pytest.mark.kernel


def test_a_cell_edit_and_a_cell_run_are_events_of_the_activity_panel(
    kernel: Any, kroot: Path
) -> None:
    nb = new_notebook()
    nb.cells = [new_code_cell("v = 2", id="calc"), new_code_cell("v * 21", id="show")]
    nbformat.write(nb, str(kroot / "events.ipynb"))
    agent, _ = kernel.open_comm("kli.agent", {"label": "events agent"})
    assert kernel.call(agent, "read", {"path": "events.ipynb"})["ok"]
    edit = kernel.call(agent, "edit", {"input": f"@@ events.ipynb#calc\n= 1:{line_hash('v = 2')}\n"
                                                "~v = 3\n"})
    assert edit["ok"], edit["text"]
    run = kernel.call(agent, "run_cells", {"path": "events.ipynb", "from": "calc"})
    assert run["ok"], run["text"]
    assert "63" in run["text"]
    _, hello = kernel.open_comm("kli.ui", {"replay": 2})
    edit_event, run_event = hello["events"]
    assert edit_event["tool"] == "edit" and edit_event["session_label"] == "events agent"
    assert edit_event["details"]["files"][0]["path"] == "events.ipynb#calc"
    assert run_event["tool"] == "run_cells" and run_event["ok"]
    assert [c["cell"] for c in run_event["details"]["cells"]] == ["calc", "show"]
    written = nbformat.read(str(kroot / "events.ipynb"), 4)
    assert written.cells[1].outputs[0]["data"]["text/plain"] == "63"


def test_run_cells_waits_for_the_cell_the_person_is_running(kernel: Any, kroot: Path) -> None:
    import time

    nb = new_notebook()
    nb.cells = [new_code_cell("after_person = person_done", id="next")]
    nbformat.write(nb, str(kroot / "wait.ipynb"))
    agent, _ = kernel.open_comm("kli.agent", {"label": "waiting agent"})
    started = time.monotonic()
    kernel.kc.execute("import time\ntime.sleep(1.5)\nperson_done = True\n")  # the person's cell
    time.sleep(0.2)
    run = kernel.call(agent, "run_cells", {"path": "wait.ipynb", "cell": "next"})
    assert run["ok"], run["text"]  # it ran after the person's cell defined person_done
    assert time.monotonic() - started >= 1.5
    kernel.settle()
