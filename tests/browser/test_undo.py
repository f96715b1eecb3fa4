"""Undo from the activity panel in a real JupyterLab, in Chromium (docs/review.md): an agent's
``bash`` that writes a file shows the file's diff in its row; "Undo this change" takes it back
and "Redo" puts it back;
after the person changed a file the undo is refused naming it, and "Undo anyway" restores the
bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.waiting import wait_until

pytestmark = pytest.mark.browser


def test_the_panel_shows_a_bash_change_and_undoes_it(lab: Any) -> None:
    from kli import client

    root: Path = lab.server.root
    (root / "log.txt").write_text("first\n")
    lab.open("undo.ipynb")
    lab.run("%kli changes").locator(".jp-OutputArea-output").wait_for()
    panel = lab.activity_panel(320)
    agent = client.connect(str(lab.connection_file()), label="undo agent",
                           timeout=30)
    try:
        r = agent.call("bash", {"command": "echo second >> log.txt"})
        assert r.details["files"][0]["change_kind"] == "modified", r.text
        last = panel.locator(".kli-Row[data-tool='bash']").last
        last.wait_for()
        first_id = last.get_attribute("data-id")
        row = panel.locator(f".kli-Row[data-id='{first_id}']")
        row.locator(".kli-Row-toggle").click()
        assert "second" in row.locator(".kli-Row-body").inner_text()
        lab.screenshot("undo-row", panel)
        row.get_by_role("button", name="Undo this change").click()
        wait_until(lambda: (root / "log.txt").read_text() == "first\n", "the undo")
        # the file changes before the kernel's reply reaches the row: wait for the row's text
        wait_until(lambda: "took back change" in row.locator(".kli-Row-undoOutcome").inner_text(),
                   "the undo's outcome in the row")
        row.get_by_role("button", name="Redo").click()
        wait_until(lambda: (root / "log.txt").read_text() == "first\nsecond\n", "the redo")

        r2 = agent.call("bash", {"command": "echo third > log.txt"})
        (root / "log.txt").write_text("the person's\n")
        others = panel.locator(f".kli-Row[data-tool='bash']:not([data-id='{first_id}'])")
        others.first.wait_for()
        row2 = panel.locator(f".kli-Row[data-id='{others.first.get_attribute('data-id')}']")
        row2.locator(".kli-Row-toggle").click()
        row2.get_by_role("button", name="Undo this change").click()
        outcome = row2.locator(".kli-Row-undoOutcome")
        wait_until(lambda: "undo refused: log.txt changed" in outcome.inner_text(), "the refusal")
        assert (root / "log.txt").read_text() == "the person's\n"
        assert "press Undo anyway" in outcome.inner_text() and "force" not in outcome.inner_text()
        row2.get_by_role("button", name="Undo anyway").click()
        wait_until(lambda: (root / "log.txt").read_text() == "first\nsecond\n", "the forced undo")
        assert r2.details["change"]
    finally:
        agent.close()


def test_the_panels_undo_of_an_agents_edit_restores_the_bytes_exactly(lab: Any) -> None:
    """Issue 14: undo of an agent's ``edit`` (not only of a ``bash`` change) from the panel puts
    back the file's bytes as they were — CRLF line endings and a missing final newline
    included — and its redo puts the edit back."""
    from kli import client
    from kli.tools.file.anchors import line_hash

    root: Path = lab.server.root
    original = b"alpha = 1\r\nbeta = 2\r\ngamma = 3"
    (root / "crlf.py").write_bytes(original)
    lab.open("undo-edit.ipynb")
    lab.run("%kli changes").locator(".jp-OutputArea-output").wait_for()
    panel = lab.activity_panel(320)
    agent = client.connect(str(lab.connection_file()), label="edit agent",
                           timeout=30)
    try:
        assert agent.call("read", {"path": "crlf.py"}).ok
        anchor = line_hash("beta = 2\r")  # a CRLF file's hashed text keeps its \r
        r = agent.call("edit", {"input": f"@@ crlf.py\n= 2:{anchor}\n~beta = 20\n"})
        assert r.ok, r.text
        edited = (root / "crlf.py").read_bytes()
        assert edited == b"alpha = 1\r\nbeta = 20\r\ngamma = 3\r\n"  # an edit ends the file
        row = panel.locator(".kli-Row[data-tool='edit']").last
        row.wait_for()
        row.locator(".kli-Row-toggle").click()
        row.get_by_role("button", name="Undo this change").click()
        wait_until(lambda: (root / "crlf.py").read_bytes() == original, "the undo of the edit")
        wait_until(lambda: "took back change" in row.locator(".kli-Row-undoOutcome").inner_text(),
                   "the undo's outcome in the row")
        row.get_by_role("button", name="Redo").click()
        wait_until(lambda: (root / "crlf.py").read_bytes() == edited, "the redo of the edit")
    finally:
        agent.close()
