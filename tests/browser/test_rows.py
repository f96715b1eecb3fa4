"""The activity panel's *Tool calls* rows say what state each call is in, in a real JupyterLab
and Chromium (docs/review.md): an agent's held edit reads "held", then "written by you" in the
same row once the person accepts it (a held command "ran by you"); a rejected one "rejected by you" with the note, and the
person's Reject is not listed as a call of the agent; a repair preview reads "preview" (not a
red error), then "written by you"; a held move's card shows its steps; a cell is named by its
notebook, position and first line, its id a hover away; an accepted change undone from its
row reads "undone". Screenshots go to tests/artifacts/
(rows-*)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kli.tools.file.anchors import line_hash
from tests.waiting import wait_until

pytestmark = pytest.mark.browser

FUNC = "def f():\n    x = 1\n    return x\n"


def row_of(panel: Any, event_id: str) -> Any:
    return panel.locator(f".kli-Row[data-id='{event_id}']")


def state_of(row: Any) -> str:
    return str(row.locator(".kli-Row-ok").inner_text())


def newest_row(panel: Any, tool: str, text: str) -> Any:
    row = panel.locator(f".kli-Row[data-tool='{tool}']", has_text=text).first
    row.wait_for()
    return row


def test_rows_say_held_preview_written_and_rejected_and_whose_decision_it_was(lab: Any) -> None:
    from kli import client

    root: Path = lab.server.root
    (root / "held.py").write_text("a = 1\nb = 2\n")
    (root / "fix.py").write_text(FUNC)
    (root / "to_move.txt").write_text("moved\n")
    lab.open("rows.ipynb", ["import math\nr = math.pi", "b = 2\nprint(b)"])
    lab.run("%kli approval review").locator(".jp-OutputArea-output").wait_for()
    panel = lab.activity_panel(320)
    agent = client.connect(str(lab.connection_file()), label="row agent",
                           timeout=30)
    try:
        # A held edit: "held" while it waits, "written by you" in the same row after Accept.
        assert agent.call("read", {"path": "held.py"}).ok
        r = agent.call("edit", {"input": f"@@ held.py\n= 2:{line_hash('b = 2')}\n~b = 20\n"})
        pid = r.details["proposal"]
        row = newest_row(panel, "edit", "held.py")
        event_id = row.get_attribute("data-id")
        wait_until(lambda: state_of(row) == "held", "the held row to read held")
        assert row.get_attribute("data-state") == "held"
        lab.screenshot("rows-held", panel)
        item = panel.locator(f".kli-Pending-item[data-candidate='{pid}']")
        item.get_by_role("button", name="Accept").click()
        item.locator(".kli-Repair[data-state='written']").wait_for()
        same = row_of(panel, str(event_id))
        wait_until(lambda: state_of(same) == "written by you", "the row to read written by you")
        assert same.get_attribute("data-by") == "you"
        assert (root / "held.py").read_text() == "a = 1\nb = 20\n"
        # Expanded, it says the decision and offers the Undo of what the Accept wrote.
        same.locator(".kli-Row-toggle").click()
        assert same.locator(".kli-Row-decision").inner_text() == "Accepted by you."
        # Its Undo takes the change back, and the row says so.
        same.locator(".kli-Row-undoOne").click()
        wait_until(lambda: state_of(same) == "undone", "the row to read undone")
        assert (root / "held.py").read_text() == "a = 1\nb = 2\n"
        same.locator(".kli-Row-redo").wait_for()  # the open row kept the Undo's outcome
        assert same.locator(".kli-Row-decision").inner_text() == (
            "Accepted, then undone, by you.")
        same.locator(".kli-Row-toggle").click()

        # A held write, rejected with a note: "rejected by you", the note on the proposal's
        # row, and no `edit reject_repair=…` row of the agent's.
        w = agent.call("write", {"path": "notes.md", "content": "# notes\n"})
        pid = w.details["proposal"]
        row = newest_row(panel, "write", "notes.md")
        wait_until(lambda: state_of(row) == "held", "the held write to read held")
        item = panel.locator(f".kli-Pending-item[data-candidate='{pid}']")
        item.locator("input.kli-Repair-note").fill("call it README.md")
        item.get_by_role("button", name="Reject").click()
        wait_until(lambda: state_of(row) == "rejected by you", "the row to read rejected by you")
        row.locator(".kli-Row-toggle").click()
        assert row.locator(".kli-Row-decision").inner_text() == (
            "Rejected by you. Note for the agent: call it README.md")
        assert panel.locator(".kli-Row", has_text="reject_repair").count() == 0
        assert not (root / "notes.md").exists()
        lab.screenshot("rows-rejected", panel)
        row.locator(".kli-Row-toggle").click()

        # A repair preview: "preview", not a red error; "written by you" after its Accept.
        assert agent.call("read", {"path": "fix.py"}).ok
        h2, h3 = line_hash("    x = 1"), line_hash("    return x")
        p = agent.call("edit", {"input": f"@@ fix.py\n= 2:{h2}..3:{h3}\n~    x = 1\n"
                                         "~    y = [1, 2\n~    return x\n", "repair": "preview"})
        cid = p.details["candidate"]
        row = newest_row(panel, "edit", "fix.py")
        wait_until(lambda: state_of(row) == "preview", "the preview row to read preview")
        assert row.get_attribute("data-ok") == "true"
        color = row.locator(".kli-Row-ok").evaluate("e => getComputedStyle(e).color")
        error = row.evaluate("e => getComputedStyle(e).getPropertyValue('--jp-error-color1')")
        assert color.replace(" ", "") != error.strip().replace(" ", "")
        lab.screenshot("rows-preview", panel)
        item = panel.locator(f".kli-Pending-item[data-candidate='{cid}']")
        item.get_by_role("button", name="Accept").click()
        wait_until(lambda: state_of(row) == "written by you", "the preview row to read written")
        assert "y = [1, 2]" in (root / "fix.py").read_text()
        # The person's Accept is on the preview's row, not an `edit accept_repair` of the agent.
        assert panel.locator(".kli-Row", has_text="accept_repair").count() == 0

        # A held command: "held", then "ran by you" (it wrote nothing itself).
        b = agent.call("bash", {"command": "echo ran > ran.txt"})
        pid = b.details["proposal"]
        row = row_of(panel, str(newest_row(panel, "bash", "echo ran").get_attribute("data-id")))
        wait_until(lambda: state_of(row) == "held", "the held command to read held")
        panel.locator(f".kli-Pending-item[data-candidate='{pid}']").get_by_role(
            "button", name="Accept").click()
        wait_until(lambda: state_of(row) == "ran by you", "the command's row to read ran by you")
        assert (root / "ran.txt").read_text() == "ran\n"

        # A held move: the card shows the steps Accept takes.
        m = agent.call("ws_mv", {"src": "to_move.txt", "dst": "moved/to_move.txt"})
        pid = m.details["proposal"]
        item = panel.locator(f".kli-Pending-item[data-candidate='{pid}']")
        steps = item.locator(".kli-Pending-steps li")
        steps.first.wait_for()
        assert steps.all_inner_texts() == m.details["steps"]
        assert "move to_move.txt to moved/to_move.txt" in steps.all_inner_texts()
        lab.screenshot("rows-steps", item)
        item.get_by_role("button", name="Reject").click()
        wait_until(lambda: item.count() == 0 or item.locator(
            ".kli-Repair[data-state='rejected']").count() == 1, "the move to be rejected")

        # A cell proposal: named by its notebook, position and first line; the id on hover.
        read = agent.call("read", {"path": "rows.ipynb"})
        second = read.details["cell_ids"][1]
        c = agent.call("edit", {"input": f"@@ rows.ipynb#{second}\n"
                                         f"= 1:{line_hash('b = 2')}\n~b = 3\n"})
        pid = c.details["proposal"]
        item = panel.locator(f".kli-Pending-item[data-candidate='{pid}']")
        path = item.locator(".kli-FileChange-path")
        path.wait_for()
        assert path.inner_text() == "rows.ipynb cell 2: b = 2"
        assert second in str(path.get_attribute("title"))
        row = newest_row(panel, "edit", "rows.ipynb")
        summary = row.locator(".kli-Row-summary")
        assert summary.inner_text() == "rows.ipynb cell 2: b = 2"
        assert second not in summary.inner_text()
        assert second in str(row.locator(".kli-Row-toggle").get_attribute("title"))
        lab.screenshot("rows-cell", panel)
        item.get_by_role("button", name="Reject").click()
        wait_until(lambda: state_of(row) == "rejected by you", "the cell row to read rejected")
    finally:
        agent.close()
        lab.run("%kli approval auto").locator(".jp-OutputArea-output").wait_for()
    assert lab.console_errors() == []
