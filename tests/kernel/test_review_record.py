"""What the kernel tells the panel about a proposal, so its row can say what state the call is
in (docs/protocol.md): a held move's candidate carries its steps; a person's Accept reports the
change it recorded (its Undo) in `resolved`, and a later hello replays how the proposals
ended; a cell's change says where the cell is in its notebook."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from kli.tools.file.anchors import line_hash

pytestmark = pytest.mark.kernel


def ui_msg(kernel: Any, ui: str, op: str, since: int, **match: Any) -> dict[str, Any]:
    msg = kernel.wait_for(lambda m: m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == ui
                          and m["content"]["data"].get("op") == op
                          and all(m["content"]["data"].get(k) == v for k, v in match.items()),
                          since=since)
    data: dict[str, Any] = msg["content"]["data"]
    return data


@pytest.fixture(scope="module")
def ui(kernel: Any) -> Any:
    ui, _hello = kernel.open_comm("kli.ui", {"replay": 0})
    reply = kernel.request(ui, {"op": "approval", "mode": "review", "kind": "file"})
    assert reply["approval"]["file"] == "review"
    yield ui
    kernel.request(ui, {"op": "approval", "mode": "auto"})
    kernel.close_comm(ui)


def test_a_held_move_shows_its_steps_on_the_proposal(kernel: Any, kroot: Path, ui: str) -> None:
    (kroot / "old_name.txt").write_text("x\n")
    agent, _ = kernel.open_comm("kli.agent", {"label": "mover"})
    start = len(kernel.seen)
    r = kernel.call(agent, "ws_mv", {"src": "old_name.txt", "dst": "sub/new_name.txt"})
    assert r["details"].get("status") == "pending", r["text"]
    pid = r["details"]["proposal"]
    proposed = ui_msg(kernel, ui, "proposed", start)["candidate"]
    assert proposed["candidate"] == pid
    assert proposed["steps"] == r["details"]["steps"]
    assert "move old_name.txt to sub/new_name.txt" in proposed["steps"]
    # The hello of a panel opened now lists it with its steps too.
    late, hello = kernel.open_comm("kli.ui", {"replay": 0})
    [pending] = [c for c in hello["pending"] if c["candidate"] == pid]
    assert pending["steps"] == proposed["steps"]
    kernel.close_comm(late)
    assert kernel.request(ui, {"op": "reject", "candidate": pid})["ok"]
    kernel.close_comm(agent)


def test_an_accept_reports_the_change_it_wrote_and_a_new_panel_learns_every_outcome(
    kernel: Any, kroot: Path, ui: str
) -> None:
    (kroot / "kept.txt").write_text("a\n")
    agent, _ = kernel.open_comm("kli.agent", {"label": "writer"})
    assert kernel.call(agent, "read", {"path": "kept.txt"})["ok"]
    start = len(kernel.seen)
    held = kernel.call(agent, "edit", {"input": f"@@ kept.txt\n= 1:{line_hash('a')}\n~b\n"})
    taken = kernel.call(agent, "write", {"path": "dropped.txt", "content": "no\n"})
    accepted, rejected = held["details"]["proposal"], taken["details"]["proposal"]
    a = kernel.request(ui, {"op": "accept", "candidate": accepted})
    assert a["ok"], a["text"]
    change = a["details"]["change"]
    got = ui_msg(kernel, ui, "resolved", start, candidate=accepted)
    assert got["status"] == "written" and got["by"] == "ui" and got["change"] == change
    assert kernel.request(ui, {"op": "reject", "candidate": rejected, "note": "not now"})["ok"]
    late, hello = kernel.open_comm("kli.ui", {"replay": 0})
    kernel.close_comm(late)
    outcome = {d["candidate"]: d for d in hello["resolved"]}
    assert outcome[accepted]["status"] == "written" and outcome[accepted]["change"] == change
    assert outcome[rejected]["status"] == "rejected" and outcome[rejected]["by"] == "ui"
    assert outcome[rejected]["note"] == "not now" and "change" not in outcome[rejected]
    # The change the resolution names is the one Undo takes back.
    undo = kernel.request(ui, {"op": "undo", "change": change})
    assert undo["ok"], undo["text"]
    assert (kroot / "kept.txt").read_text() == "a\n"
    kernel.close_comm(agent)


def test_a_cells_change_says_its_position_in_the_notebook(kernel: Any, kroot: Path, ui: str) -> None:
    nb = new_notebook()
    nb.cells = [new_markdown_cell("# Title", id="head"), new_code_cell("x = 1", id="calc")]
    nbformat.write(nb, str(kroot / "placed.ipynb"))
    agent, _ = kernel.open_comm("kli.agent", {"label": "cells"})
    assert kernel.call(agent, "read", {"path": "placed.ipynb"})["ok"]
    start = len(kernel.seen)
    r = kernel.call(agent, "edit", {"input": f"@@ placed.ipynb#calc\n= 1:{line_hash('x = 1')}\n"
                                             "~x = 2\n"})
    pid = r["details"]["proposal"]
    [f] = r["details"]["files"]
    assert f["path"] == "placed.ipynb#calc" and f["cell_index"] == 2
    proposed = ui_msg(kernel, ui, "proposed", start)["candidate"]
    assert proposed["files"][0]["cell_index"] == 2
    assert kernel.request(ui, {"op": "reject", "candidate": pid})["ok"]
    kernel.close_comm(agent)
