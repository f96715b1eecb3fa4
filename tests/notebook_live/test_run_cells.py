"""run_cells runs cells in the kernel's image as cells: outputs and execution counts land in the
live Y document (with jupyter-collaboration) or in the file (a notebook nobody has open), and the
agent gets them back bounded."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from kli import client
from tests.notebook_live.conftest import CollabServer, Person, live_notebook

pytestmark = [pytest.mark.kernel, pytest.mark.notebook_live]


@pytest.fixture(scope="module")
def live(collab: CollabServer) -> Iterator[tuple[str, Any, Person]]:
    with live_notebook(collab, "run.ipynb", [
        ("setup", "n = 6\nprint('n is', n)"),
        ("show", "n * 7"),
        ("boom", "1 / 0"),
        ("after", "print('never')"),
    ]) as live:
        yield live


def test_cells_run_as_cells_and_their_outputs_appear_in_the_live_document(
    live: tuple[str, Any, Person]
) -> None:
    name, agent, person = live
    r = agent.call("run_cells", {"path": name, "cells": ["setup", "show"]})
    assert r.ok, r.text
    assert r.details["document"] == "ydoc"
    assert "n is 6" in r.text and "42" in r.text
    counts = [c["execution_count"] for c in r.details["cells"]]
    assert counts[1] == counts[0] + 1
    person.wait_for(lambda: person.cell(1).get("execution_count") == counts[1])
    setup, show = person.cell(0), person.cell(1)
    assert setup["outputs"][0]["output_type"] == "stream"
    assert "".join(setup["outputs"][0]["text"]) == "n is 6\n"
    assert show["outputs"][0]["data"]["text/plain"] == "42"
    # the image is the kernel's: the person's next cell sees what the agent's run defined
    assert "6" in agent.call("eval", {"code": "n"}).text


def test_a_run_from_a_cell_stops_at_the_first_error_which_appears_in_the_cell(
    live: tuple[str, Any, Person]
) -> None:
    name, agent, person = live
    # "show" needs the n that "setup" defines: defined here, whether or not the test that runs
    # setup ran before in this kernel (it may run later, or on another xdist worker)
    assert agent.call("eval", {"code": "n = 6"}).ok
    r = agent.call("run_cells", {"path": name, "from": "show"})
    assert not r.ok and r.details["error"] == "error"
    assert [c["cell"] for c in r.details["cells"]] == ["show", "boom"]
    assert "ZeroDivisionError" in r.text and "never" not in r.text
    person.wait_for(lambda: any(o.get("output_type") == "error"
                                for o in person.cell(2).get("outputs", [])))
    assert person.cell(2)["outputs"][0]["ename"] == "ZeroDivisionError"
    assert person.cell(3)["outputs"] == []


def test_a_cell_past_the_timeout_is_stopped_and_says_so(live: tuple[str, Any, Person]) -> None:
    name, agent, _person = live
    assert agent.call("read", {"path": name}).ok
    ins = agent.call("cells", {"path": name, "op": "insert", "where": "end",
                               "source": "import time\ntime.sleep(30)"})
    assert ins.ok, ins.text
    r = agent.call("run_cells", {"path": name, "cell": ins.details["cell"], "timeout": 1})
    assert not r.ok and r.details["error"] == "timeout", r.text
    assert "stopped after" in r.text
    assert "ok" in agent.call("eval", {"code": "'ok'"}).text  # the kernel is still up


def test_run_cells_writes_outputs_into_the_file_of_a_notebook_nobody_has_open(
    tmp_path: Path
) -> None:
    nb = new_notebook(metadata={"kernelspec": {"name": "kli", "language": "python",
                                               "display_name": "kli"}})
    nb.cells = [new_markdown_cell("# Title", id="title"),
                new_code_cell("print('from disk')\n{'a': 1}", id="code")]
    path = tmp_path / "disk.ipynb"
    nbformat.write(nb, str(path))
    with client.start(cwd=str(tmp_path), timeout=60) as agent:
        r = agent.call("run_cells", {"path": "disk.ipynb", "from": "title"})
        assert r.ok, r.text
        assert r.details["cells"][0]["status"] == "skipped"
        assert r.details.get("document", "disk") == "disk"
    written = nbformat.read(str(path), 4)
    nbformat.validate(written)
    cell = written.cells[1]
    assert cell.execution_count == r.details["cells"][1]["execution_count"]
    assert cell.outputs[0]["text"] == "from disk\n"
    assert cell.outputs[1]["data"]["text/plain"] == "{'a': 1}"
    assert json.loads(path.read_text())["cells"][0]["source"] == ["# Title"]  # kept as stored


def test_run_cells_outside_a_kernel_is_refused_naming_eval(tmp_path: Path) -> None:
    from kli.tools import Workspace

    nb = new_notebook()
    nb.cells = [new_code_cell("1", id="one")]
    nbformat.write(nb, str(tmp_path / "a.ipynb"))
    r = Workspace(str(tmp_path)).call("run_cells", {"path": "a.ipynb", "cell": "one"})
    assert not r.ok and r.details["error"] == "no_kernel" and "eval" in r.text


def test_a_running_cell_is_stopped_by_the_kernels_interrupt(live: tuple[str, Any, Person]) -> None:
    import threading
    import time

    name, agent, _person = live
    assert agent.call("read", {"path": name}).ok
    ins = agent.call("cells", {"path": name, "op": "insert", "where": "end",
                               "source": "import time\nfor _ in range(600): time.sleep(0.05)"})
    assert ins.ok, ins.text
    timer = threading.Timer(1.5, agent.interrupt)
    timer.start()
    started = time.monotonic()
    r = agent.call("run_cells", {"path": name, "cell": ins.details["cell"], "timeout": 60})
    timer.join()
    assert not r.ok and r.details["error"] == "interrupted", r.text
    assert time.monotonic() - started < 20
    assert "KeyboardInterrupt" in r.text
