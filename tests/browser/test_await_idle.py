"""What the person sees while an attached agent only waits for their decision, in a real
JupyterLab in Chromium (issue 26): the notebook's kernel reads Idle (not Busy) for as long as
the agent waits in ``await_decision``, a cell runs meanwhile, and the person's Accept in the
panel reaches the waiting agent."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.waiting import wait_until

pytestmark = pytest.mark.browser

_KERNEL_STATUS_JS = """
() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return k ? k.status : null;
}
"""


def test_the_kernel_reads_idle_while_an_agent_waits_for_the_persons_decision(lab: Any) -> None:
    from kli import client

    root: Path = lab.server.root
    lab.open("await-idle.ipynb")
    lab.run("%kli approval review file").locator(".jp-OutputArea-output").wait_for()
    agent = client.connect(str(lab.connection_file()), label="waiting agent",
                           timeout=60)
    try:
        held = agent.call("write", {"path": "waited.txt", "content": "yes\n"})
        pid = held.details["proposal"]
        got: dict[str, Any] = {}
        waiting = threading.Thread(target=lambda: got.update(r=agent.call(
            "await_decision", {"id": pid, "timeout": 60})), daemon=True)
        waiting.start()
        time.sleep(2.0)  # the agent is waiting now
        seen = set()
        for _ in range(20):  # for a second, what the person's notebook says of its kernel
            seen.add(lab.page.evaluate(_KERNEL_STATUS_JS))
            lab.page.wait_for_timeout(50)
        assert seen == {"idle"}, seen
        assert waiting.is_alive() and "r" not in got
        out = lab.run("print(6 * 7)").locator(".jp-OutputArea-output")
        out.wait_for()
        assert out.inner_text().strip() == "42"
        panel = lab.activity_panel(200)
        item = panel.locator(f".kli-Pending-item[data-candidate='{pid}']")
        item.wait_for()
        lab.screenshot("await-idle", lab.page)
        item.get_by_role("button", name="Accept").click()
        waiting.join(30)
        assert got["r"].ok and got["r"].details["status"] == "written", got["r"].text
        assert (root / "waited.txt").read_text() == "yes\n"
        wait_until(lambda: lab.page.evaluate(_KERNEL_STATUS_JS) == "idle", "idle after the wait")
        assert lab.console_errors() == []
    finally:
        agent.close()
