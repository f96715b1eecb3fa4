"""The box in the activity panel (docs/sandbox.md), in real JupyterLab and Chromium: the Box
switch sits beside the review switch, says what the box is in the kernel's words, shows what it
stops and what it does not, and keeps the choice in the project's settings."""

from __future__ import annotations

import json
import shutil
import time
from typing import Any


def test_the_box_is_switched_and_explained_in_the_activity_panel(lab: Any) -> None:
    settings = lab.server.root / ".kli" / "settings.json"
    lab.open("box-panel.ipynb")
    panel = lab.activity_panel(width=300)
    switch = panel.locator("input.kli-Box-on")
    said = panel.locator(".kli-Box-said")
    deadline = time.monotonic() + 15
    while not switch.is_enabled():
        assert time.monotonic() < deadline, "the Box switch to be live"
        time.sleep(0.05)
    said.filter(has_text="off: an agent's shell and eval run with your full powers").wait_for()
    try:
        switch.check()
        if shutil.which("bwrap"):
            said.filter(has_text="on for shell commands").wait_for()
            assert said.get_attribute("data-state") == "commands"
        else:
            said.filter(has_text="on, but NOT made").wait_for()
            assert said.get_attribute("data-state") == "unavailable"
        assert json.loads(settings.read_text())["sandbox"] == {"mode": "on", "network": "off"}
        panel.locator(".kli-Box-limits summary").click()
        panel.locator(".kli-Box-doesNotStop li", has_text="kernel exploit").wait_for()
        panel.locator(".kli-Box-stops li", has_text="the network").wait_for()
        lab.screenshot("box-panel-on", panel)
        status = lab.run("%kli status").locator(".jp-OutputArea-output")
        status.filter(has_text="box: ").wait_for()
        panel.locator("input.kli-Box-network").check()
        if shutil.which("bwrap"):
            said.filter(has_text="network all").wait_for()
        assert json.loads(settings.read_text())["sandbox"]["network"] == "all"
        lab.command("kli-kernel:box")  # the palette's toggle, as the switch
        panel.locator("input.kli-Box-on:not(:checked)").wait_for()
        assert json.loads(settings.read_text())["sandbox"]["mode"] == "off"
    finally:
        lab.run("%kli sandbox off --network off").locator(".jp-OutputArea-output").wait_for()
        settings.unlink(missing_ok=True)
    assert lab.console_errors() == []
