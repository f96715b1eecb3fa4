"""The review surface in a real JupyterLab, in Chromium (docs/review.md): an agent attached
with kli.client under approval mode has its edit held — the panel shows the diff, the file on
disk is unchanged until Accept, which writes exactly the shown text; a Reject's note reaches
the agent; a held command shows and runs on Accept; Accept all of three; the proposals of an
agent that disconnected stay, marked expired, and one can still be applied."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kli.tools.file.anchors import line_hash
from tests.waiting import wait_until

pytestmark = pytest.mark.browser

ORIGINAL = "a = 1\nb = 2\nc = 3\n"


def test_review_holds_an_agents_changes_until_a_person_decides(lab: Any) -> None:
    from kli import client

    root: Path = lab.server.root
    (root / "calc.py").write_text(ORIGINAL)
    lab.open("review.ipynb")
    lab.run("%kli approval").locator(".jp-OutputArea-output").wait_for()
    panel = lab.activity_panel(320)
    files_box = panel.locator("input.kli-Approval-file")
    shell_box = panel.locator("input.kli-Approval-shell")
    wait_until(lambda: files_box.is_enabled(), "the approval switch to be live")
    assert not files_box.is_checked()
    # The switches say what they hold, in words (not "an agent's files calls").
    assert files_box.get_attribute("title") == (
        "Hold each of an agent's changes to files until you accept or reject it")
    assert shell_box.get_attribute("title") == (
        "Hold each of an agent's shell commands until you accept or reject it")
    files_box.check()
    shell_box.check()
    conn = lab.connection_file()
    agent = client.connect(str(conn), label="review agent", timeout=30)
    leaver = None
    try:
        # The switch reached the kernel: an agent's edit is held, nothing written.
        assert agent.call("read", {"path": "calc.py"}).ok
        h = line_hash("b = 2")
        r = agent.call("edit", {"input": f"@@ calc.py\n= 2:{h}..2:{h}\n~b = 20\n"})
        assert r.details.get("status") == "pending", r.text
        pid = r.details["proposal"]
        item = panel.locator(f".kli-Pending-item[data-candidate='{pid}']")
        item.wait_for()
        assert "from review agent" in item.inner_text()
        assert "b = 20" in item.locator(".kli-DiffView").inner_text()
        assert (root / "calc.py").read_text() == ORIGINAL
        lab.screenshot("review-pending", panel)
        item.get_by_role("button", name="Accept").click()
        item.locator(".kli-Repair[data-state='written']").wait_for()
        assert (root / "calc.py").read_text() == r.details["files"][0]["after"] == \
            "a = 1\nb = 20\nc = 3\n"

        # Reject with a note: the agent's await_decision gets it; nothing written.
        w = agent.call("write", {"path": "notes.md", "content": "# notes\n"})
        pid = w.details["proposal"]
        item = panel.locator(f".kli-Pending-item[data-candidate='{pid}']")
        item.wait_for()
        item.locator("input.kli-Repair-note").fill("call it README.md")
        item.get_by_role("button", name="Reject").click()
        item.locator(".kli-Repair[data-state='rejected']").wait_for()
        assert "Note for the agent: call it README.md" in item.locator(
            ".kli-Repair-outcome").inner_text()
        out = agent.call("await_decision", {"id": pid, "timeout": 10})
        assert out.details["status"] == "rejected" and out.details["note"] == "call it README.md"
        assert not (root / "notes.md").exists()

        # A held command: shown, run only on Accept.
        b = agent.call("bash", {"command": "echo built > built.txt"})
        pid = b.details["proposal"]
        item = panel.locator(f".kli-Pending-item[data-candidate='{pid}']")
        item.locator(".kli-Pending-command").wait_for()
        assert item.locator(".kli-Pending-command").inner_text() == "echo built > built.txt"
        lab.screenshot("review-command", panel)
        assert not (root / "built.txt").exists()
        item.get_by_role("button", name="Accept").click()
        wait_until(lambda: (root / "built.txt").exists(), "the accepted command to run")
        assert (root / "built.txt").read_text() == "built\n"

        # Accept all of three.
        for n in range(3):
            assert agent.call("write", {"path": f"f{n}.txt", "content": f"{n}\n"}).ok
        tab = lab.page.locator(".lm-TabBar-tab.kli-ActivityTab")
        wait_until(lambda: tab.get_attribute("data-kli-pending") == "3", "three pending")
        assert not any((root / f"f{n}.txt").exists() for n in range(3))
        lab.screenshot("review-bulk", panel)
        panel.get_by_role("button", name="Accept all").click()
        wait_until(lambda: all((root / f"f{n}.txt").exists() for n in range(3)),
                   "the three files to be written")
        assert [(root / f"f{n}.txt").read_text() for n in range(3)] == ["0\n", "1\n", "2\n"]
        wait_until(lambda: tab.get_attribute("data-kli-pending") is None, "the badge to clear")

        # An agent that disconnects: its proposal stays, expired, and can still be applied.
        leaver = client.connect(str(conn), label="leaver", timeout=30)
        lw = leaver.call("write", {"path": "left.txt", "content": "kept\n"})
        pid = lw.details["proposal"]
        item = panel.locator(f".kli-Pending-item[data-candidate='{pid}']")
        item.wait_for()
        leaver.close()
        leaver = None
        item.locator(".kli-Pending-expired", has_text="expired — leaver disconnected").wait_for()
        lab.screenshot("review-expired", panel)
        item.get_by_role("button", name="Accept").click()
        wait_until(lambda: (root / "left.txt").exists(), "the expired proposal to be applied")
        assert (root / "left.txt").read_text() == "kept\n"
    finally:
        if leaver is not None:
            leaver.close()
        agent.close()
        files_box.uncheck()
        shell_box.uncheck()
    assert lab.console_errors() == []
