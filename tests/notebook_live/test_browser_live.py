"""In real JupyterLab with jupyter-collaboration, in Chromium: a person types into one cell while
an agent edits another — both changes survive, with no "file changed on disk" dialog; and when
the person changes the very cell the agent read, the agent's edit is refused and their text
stays. (The fixtures are tests/browser's: the same JupyterLab, extension and Chromium.)"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from kli import client
from kli.tools.file.anchors import line_hash
from tests.browser.conftest import browser, lab, lab_server, page  # noqa: F401 (fixtures)

pytest.importorskip("jupyter_server_ydoc", reason="jupyter-collaboration is not installed")
pytestmark = [pytest.mark.browser, pytest.mark.notebook_live]


def _cell_text(ui: Any, index: int) -> str:
    return str(ui.page.evaluate(
        "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i]"
        ".model.sharedModel.getSource()", index))


def _wait(check: Any, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_a_person_typing_in_one_cell_and_an_agent_editing_another_both_survive(
    lab: Any,  # noqa: F811
) -> None:
    lab.open("rtc.ipynb", ["p = 1", "q = 2"])
    agent = client.connect(str(lab.connection_file()), label="rtc agent",
                           timeout=30)
    try:
        read = agent.call("read", {"path": "rtc.ipynb"})
        assert read.ok, read.text
        first, second = read.details["cell_ids"][:2]
        editor = lab.page.locator(".jp-Notebook .jp-Cell").nth(0).locator(".cm-content")
        editor.click()
        lab.page.keyboard.press("End")
        results: list[Any] = []
        agent_edit = threading.Thread(target=lambda: results.append(agent.call(
            "edit", {"input": f"@@ rtc.ipynb#{second}\n= 1:{line_hash('q = 2')}\n~q = 20\n"})))
        agent_edit.start()
        lab.page.keyboard.type(" + 10", delay=40)  # the person types while the agent edits
        agent_edit.join(30)
        assert results and results[0].ok, results and results[0].text
        _wait(lambda: _cell_text(lab, 1) == "q = 20", "the agent's edit in the page")
        _wait(lambda: _cell_text(lab, 0) == "p = 1 + 10", "the person's typing kept")
        assert lab.page.locator(".jp-Dialog").count() == 0  # no "file changed on disk"
        route = agent.call("eval", {"code": "[r.path for r in get_ipython().kernel.workspace"
                                            ".notebooks.routes.values()]"})
        assert "'ydoc'" in route.text, route.text

        # The person changes the cell the agent read: the agent's edit is refused.
        assert agent.call("read", {"path": f"rtc.ipynb#{first}"}).ok
        lab.page.keyboard.type(" + 100", delay=20)
        _wait(lambda: "+ 100" in agent.call("read", {"path": f"rtc.ipynb#{first}"}).text,
              "the person's change reaching the kernel")
        stale = agent.call("edit", {"input": f"@@ rtc.ipynb#{first}\n"
                                             f"= 1:{line_hash('p = 1 + 10')}\n~p = 0\n"})
        assert not stale.ok and stale.details["error"] == "stale", stale.text
        time.sleep(0.5)
        assert _cell_text(lab, 0) == "p = 1 + 10 + 100"
    finally:
        agent.close()
    assert lab.console_errors() == []
