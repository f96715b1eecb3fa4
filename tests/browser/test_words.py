"""Words the person reads in the panel (issue 26): an agent's call held for review says it is
held for the person, and what Accept does — not a repair preview's "Not applied automatically";
the Reject note's placeholder is read whole at the panel's default width."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.waiting import wait_until

pytestmark = pytest.mark.browser

# The placeholder's text width against the room the field gives it (its padding excluded).
PLACEHOLDER_FIT = """el => {
  const style = getComputedStyle(el);
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = style.font;
  const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return [ctx.measureText(el.placeholder).width, room];
}"""


def test_a_held_call_reads_as_held_for_the_person_and_the_note_field_fits(lab: Any) -> None:
    from kli import client

    root: Path = lab.server.root
    lab.open("words.ipynb")
    lab.run("%kli approval review").locator(".jp-OutputArea-output").wait_for()
    panel = lab.activity_panel()  # the panel's default width
    agent = client.connect(str(lab.connection_file()), label="words agent",
                           timeout=30)
    try:
        w = agent.call("write", {"path": "words-held.txt", "content": "held\n"})
        item = panel.locator(f".kli-Pending-item[data-candidate='{w.details['proposal']}']")
        item.wait_for()
        lead = item.locator(".kli-Repair-reason").inner_text()
        assert lead == "Held for your review: Accept writes exactly this, Reject writes nothing."
        note = item.locator("input.kli-Repair-note")
        text_width, room = note.evaluate(PLACEHOLDER_FIT)
        assert note.get_attribute("placeholder") == "Note for the agent"
        assert text_width <= room, (text_width, room)
        assert "Reject" in (note.get_attribute("title") or "")
        lab.screenshot("words-held-write", panel)

        b = agent.call("bash", {"command": "echo ran > words-ran.txt"})
        item = panel.locator(f".kli-Pending-item[data-candidate='{b.details['proposal']}']")
        item.locator(".kli-Pending-command").wait_for()
        lead = item.locator(".kli-Repair-reason").inner_text()
        assert lead == "Held for your review: Accept runs it, Reject does not."
        lab.screenshot("words-held-command", panel)
        panel.get_by_role("button", name="Reject all").click()
        tab = lab.page.locator(".lm-TabBar-tab.kli-ActivityTab")
        wait_until(lambda: tab.get_attribute("data-kli-pending") is None, "nothing pending")
        # names of its own: other modules share the server's root (test_rows writes ran.txt)
        assert not (root / "words-held.txt").exists() and not (root / "words-ran.txt").exists()
    finally:
        agent.close()
        lab.run("%kli approval auto").locator(".jp-OutputArea-output").wait_for()
    assert lab.console_errors() == []
