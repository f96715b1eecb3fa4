"""A cell's own view of an agent's change in a JupyterLab WITHOUT jupyter-collaboration (the
open-model path: the kernel edits the tab's model through the extension), in Chromium: the
applied edit's diff shows on the cell, and a held cell edit's Accept on the cell writes exactly
the shown text into the open tab (tests/browser/test_cell_diff.py has the live-document case)."""

from __future__ import annotations

import time

import pytest

from kli import client
from kli.tools.file.anchors import line_hash
from tests.browser.conftest import Lab, browser, page  # noqa: F401 (fixtures)
from tests.browser.test_cell_diff import cell_text, shown_new_text
from tests.notebook_live.test_open_model import COLLAB_LAB_PLUGINS, lab, lab_server  # noqa: F401
from tests.waiting import wait_until

pytestmark = pytest.mark.browser


def test_without_collaboration_a_cell_shows_the_edit_and_accepts_a_held_one_into_the_tab(
    lab: Lab,  # noqa: F811
) -> None:
    lab.open("plaincell.ipynb", ["p = 1", "q = 2"])
    config = lab.page.evaluate(
        "() => JSON.parse(document.getElementById('jupyter-config-data').textContent)")
    assert set(COLLAB_LAB_PLUGINS) <= set(config.get("disabledExtensions") or ())
    agent = client.connect(str(lab.connection_file()), label="plain agent",
                           timeout=30)
    cells = lab.page.locator(".jp-Notebook .jp-Cell")
    try:
        # The tab's model reaches the kernel a moment after the kernel starts.
        real = repr(str((lab.server.root / "plaincell.ipynb").resolve()))
        has_tab = ("print(get_ipython().kernel.workspace.notebooks.models.has(" + real + "))")
        wait_until(lambda: agent.call("eval", {"code": has_tab}).text.strip().endswith("True"),
                   "the tab's model known to the kernel")
        read = agent.call("read", {"path": "plaincell.ipynb"})
        first, second = read.details["cell_ids"][:2]
        r = agent.call("edit", {"input": f"@@ plaincell.ipynb#{first}\n"
                                         f"= 1:{line_hash('p = 1')}\n~p = 10\n"})
        assert r.ok, r.text
        wait_until(lambda: cell_text(lab, 0) == "p = 10", "the edit in the tab")
        item = cells.nth(0).locator(".kli-CellDiff-item[data-kind='applied']")
        item.wait_for()
        assert shown_new_text(item) == "p = 10"

        lab.run("%kli approval review file").locator(".jp-OutputArea-output").wait_for()
        held = agent.call("edit", {"input": f"@@ plaincell.ipynb#{second}\n"
                                            f"= 1:{line_hash('q = 2')}\n~q = 20\n"})
        assert held.details.get("status") == "pending", held.text
        pid = held.details["proposal"]
        proposal = cells.nth(1).locator(f".kli-CellDiff-item[data-candidate='{pid}']")
        proposal.wait_for()
        shown = shown_new_text(proposal)
        time.sleep(0.5)
        assert cell_text(lab, 1) == "q = 2"
        proposal.get_by_role("button", name="Accept").click()
        wait_until(lambda: cell_text(lab, 1) == shown == "q = 20", "the accepted text in the tab")
        proposal.locator("xpath=self::*[@data-state='written']").wait_for()
    finally:
        agent.close()
        lab.run("%kli approval auto")
    assert lab.console_errors() == []
