"""Only a person decides (issue 23, docs/review.md): the review magics run by an agent's own
call — a cell of its ``run_cells``, its ``eval`` — neither accept a held call nor switch
approval off; the same magic typed by the person does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.kernel


def test_review_magics_run_by_an_agents_call_decide_nothing_and_typed_ones_do(
        kernel: Any, kroot: Path) -> None:
    ui, _hello = kernel.open_comm("kli.ui", {"replay": 0})
    agent, _ = kernel.open_comm("kli.agent", {"label": "sly"})
    try:
        assert kernel.request(ui, {"op": "approval", "mode": "review", "kind": "file"})[
            "approval"] == {"file": "review", "shell": "auto", "eval": "auto"}
        held = kernel.call(agent, "write", {"path": "held.txt", "content": "x\n"})
        pid = held["details"]["proposal"]
        by_eval = kernel.call(agent, "eval", {
            "code": f"get_ipython().run_line_magic('kli', 'accept {pid}')"})
        assert "not typed by a person" in by_eval["text"], by_eval["text"]
        nested = kernel.call(agent, "eval", {  # a magic tool call inside: still the agent's
            "code": "get_ipython().run_line_magic('kli', "
                    "'eval get_ipython().run_line_magic(\"kli\", \"approval auto\")')"})
        assert "not typed by a person" in nested["text"], nested["text"]
        (kroot / "sly.ipynb").write_text(json.dumps({
            "nbformat": 4, "nbformat_minor": 5, "metadata": {},
            "cells": [{"cell_type": "code", "id": "off", "metadata": {}, "outputs": [],
                       "execution_count": None, "source": "%kli approval auto"}]}))
        ran = kernel.call(agent, "run_cells", {"path": "sly.ipynb", "cell": "off"})
        assert "not typed by a person" in ran["text"], ran["text"]
        assert not (kroot / "held.txt").exists()
        modes = kernel.request(ui, {"op": "replay", "limit": 0})["approval"]
        assert modes["file"] == "review"
        _, outputs = kernel.execute(f"%kli accept {pid}")  # the person types it
        assert any(f"Accepted proposal {pid}" in o["content"].get("text", "") for o in outputs)
        assert (kroot / "held.txt").read_text() == "x\n"
    finally:
        kernel.request(ui, {"op": "approval", "mode": "auto"})
        kernel.close_comm(agent)
        kernel.close_comm(ui)


def test_an_accepted_run_stops_at_a_cell_changed_while_earlier_cells_ran(
        kernel: Any, kroot: Path) -> None:
    """Accept runs exactly the cells shown: one changed after the Accept's check (here by the
    cell before it) is not run, and the run stops there."""
    nb = kroot / "run.ipynb"
    swap = ("import json, pathlib\n"
            f"p = pathlib.Path({str(nb)!r})\n"
            "d = json.loads(p.read_text())\n"
            "d['cells'][1]['source'] = 'print(\"swapped in\")'\n"
            "p.write_text(json.dumps(d))\n"
            "print('c1 ran')")
    nb.write_text(json.dumps({
        "nbformat": 4, "nbformat_minor": 5, "metadata": {},
        "cells": [{"cell_type": "code", "id": cid, "metadata": {}, "outputs": [],
                   "execution_count": None, "source": src}
                  for cid, src in (("c1", swap), ("c2", "print('c2 as shown')"))]}))
    ui, _hello = kernel.open_comm("kli.ui", {"replay": 0})
    agent, _ = kernel.open_comm("kli.agent", {"label": "runner"})
    try:
        kernel.request(ui, {"op": "approval", "mode": "review", "kind": "eval"})
        held = kernel.call(agent, "run_cells", {"path": "run.ipynb", "from": "c1"})
        assert [s["what"] for s in held["details"]["sources"]] == ["run.ipynb#c1",
                                                                   "run.ipynb#c2"]
        done = kernel.request(ui, {"op": "accept", "candidate": held["details"]["proposal"]})
        assert "c1 ran" in done["text"], done["text"]
        assert "run.ipynb#c2 changed since the person accepted the run, so it was not run" \
            in done["text"]
        assert "swapped in" not in done["text"] and not done["ok"]
        cells = json.loads(nb.read_text())["cells"]
        assert cells[0]["execution_count"] is not None and cells[1]["execution_count"] is None
    finally:
        kernel.request(ui, {"op": "approval", "mode": "auto"})
        kernel.close_comm(agent)
        kernel.close_comm(ui)
