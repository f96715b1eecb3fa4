"""A turn undone from the Timeline takes back the live image with the cell, in a real
JupyterLab, in Chromium (docs/live-image.md, "Undo and the image"): a chat turn's session (an
agent labelled as the persona labels a turn) edits a cell and changes the kernel's values; the
Timeline lists the image as part of the turn; "Undo this turn" puts the cell's source and the
kernel's values back (the person's next cell prints the old ones), marks the turn undone, says
so, and offers no second "Undo this turn"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.waiting import wait_until

pytestmark = pytest.mark.browser

TURN = "chat img.chat turn 1"
BEFORE = "note = 'before'"


def test_undo_this_turn_puts_back_the_cell_and_the_kernels_values(lab: Any) -> None:
    from kli import client
    from kli.tools.file.anchors import line_hash

    root: Path = lab.server.root
    name = "img-undo.ipynb"
    lab.open(name, [("note", BEFORE)])
    assert json.loads((root / name).read_text())["cells"][0]["id"] == "note"
    lab.run("total = 1\nitems = [1]").locator(".jp-OutputArea-output").count()
    lab.wait_idle()
    panel = lab.activity_panel(360)
    panel.get_by_role("tab", name="Timeline").click()
    timeline = panel.locator(".kli-Timeline")
    timeline.wait_for()
    agent = client.connect(str(lab.connection_file()), label=TURN, timeout=30)
    try:
        assert agent.call("read", {"path": f"{name}#note"}).ok
        e = agent.call("edit", {"input": f"@@ {name}#note\n= 1:{line_hash(BEFORE)}\n~note = 'agent'\n"})
        assert e.ok, e.text
        v = agent.call("eval", {"code": "total = 2\nitems.append(2)"})
        assert v.ok and v.details["image"][0]["mutated"] == ["items"], v.text
        session = timeline.locator(f".kli-Timeline-session[data-label='{TURN}']")
        entries = session.locator(".kli-Timeline-entry")
        wait_until(lambda: entries.count() == 2, "the turn's two changes in the timeline")
        assert "image: total, items" in entries.nth(1).inner_text()
        cell = lab.page.locator(".jp-Notebook .jp-Cell").first
        wait_until(lambda: "note = 'agent'" in cell.inner_text(), "the agent's edit in the cell")
        lab.screenshot("image-undo-turn", panel)

        session.get_by_role("button", name="Undo this turn").click()
        wait_until(lambda: "note = 'before'" in cell.inner_text(), "the cell as before the turn")
        wait_until(lambda: all(entries.nth(i).get_attribute("data-undone") == "true"
                               for i in range(2)), "the turn's changes marked undone")
        wait_until(lambda: session.get_by_role("button", name="Undo this turn").count() == 0,
                   "no second Undo this turn")
        printed = lab.run("print(total, items)").locator(".jp-OutputArea-output")
        wait_until(lambda: printed.count() > 0 and "1 [1]" in printed.first.inner_text(),
                   "the kernel's values as before the turn")
        lab.screenshot("image-undo-turn-undone", panel)
        assert lab.console_errors() == []
    finally:
        agent.close()
