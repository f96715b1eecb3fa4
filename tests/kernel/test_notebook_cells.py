"""Notebook cells through a real kli kernel's ``kli.agent`` comm (jupyter_client): read a
notebook as cells, edit a cell, insert one, and have an edit refused when the person changed
the cell on disk after the read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from kli.tools.file.anchors import line_hash

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def agent(kernel: Any) -> str:
    comm_id, hello = kernel.open_comm("kli.agent", {"label": "notebook agent"})
    assert hello["op"] == "hello"
    return comm_id


def _write(path: Path) -> None:
    nb = new_notebook(metadata={"kernelspec": {"name": "kli", "language": "python",
                                               "display_name": "kli"}})
    nb.cells = [new_code_cell("total = 1 + 1\nprint(total)", id="sum"),
                new_markdown_cell("# Notes", id="notes")]
    nbformat.write(nb, str(path))


def test_an_agent_reads_edits_and_inserts_cells_through_the_comm(
    kernel: Any, kroot: Path, agent: str
) -> None:
    path = kroot / "work.ipynb"
    _write(path)
    read = kernel.call(agent, "read", {"path": "work.ipynb"})
    assert read["ok"] and read["details"]["cell_ids"] == ["sum", "notes"]
    assert f"1:{line_hash('total = 1 + 1')}|total = 1 + 1" in read["text"]
    patch = f"@@ work.ipynb#sum\n= 1:{line_hash('total = 1 + 1')}\n~total = 2 + 2\n"
    edited = kernel.call(agent, "edit", {"input": patch})
    assert edited["ok"], edited["text"]
    assert edited["details"]["files"][0]["path"] == "work.ipynb#sum"
    inserted = kernel.call(agent, "cells", {"path": "work.ipynb", "op": "insert",
                                            "where": "after", "anchor": "sum",
                                            "source": "total * 10"})
    assert inserted["ok"], inserted["text"]
    nb = nbformat.read(str(path), 4)
    nbformat.validate(nb)
    assert [c.source for c in nb.cells] == ["total = 2 + 2\nprint(total)", "total * 10", "# Notes"]
    assert nb.cells[1].id == inserted["details"]["cell"]


def test_a_cell_the_person_changed_after_the_read_is_refused_and_kept(
    kernel: Any, kroot: Path, agent: str
) -> None:
    path = kroot / "shared.ipynb"
    _write(path)
    assert kernel.call(agent, "read", {"path": "shared.ipynb"})["ok"]
    nb = nbformat.read(str(path), 4)
    nb.cells[0].source = "total = 40 + 2\nprint(total)"  # the person's change, saved
    nbformat.write(nb, str(path))
    patch = f"@@ shared.ipynb#sum\n= 1:{line_hash('total = 1 + 1')}\n~total = 3\n"
    edited = kernel.call(agent, "edit", {"input": patch})
    assert not edited["ok"] and edited["details"]["error"] == "stale"
    assert "shared.ipynb#sum" in edited["text"]
    assert nbformat.read(str(path), 4).cells[0].source == "total = 40 + 2\nprint(total)"
    # The markdown cell it did not touch is still editable with the anchors it read.
    patch = f"@@ shared.ipynb#notes\n+ 1:{line_hash('# Notes')}\n~more\n"
    assert kernel.call(agent, "edit", {"input": patch})["ok"]
