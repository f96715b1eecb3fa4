"""The command palette lists "Show kli activity" once, in JupyterLab and in Notebook 7 (whose
own side-panel palette lists every side-panel widget by its caption)."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

pytestmark = pytest.mark.browser


def palette_labels(lab: Any, query: str) -> list[str]:
    lab.command("apputils:activate-command-palette")
    search = lab.page.locator(".lm-CommandPalette-input:visible").first
    search.wait_for()
    search.fill(query)
    lab.page.wait_for_timeout(300)
    labels = lab.page.locator(".lm-CommandPalette-item:visible .lm-CommandPalette-itemLabel")
    return [text.strip() for text in labels.all_inner_texts()]


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_show_kli_activity_is_in_the_palette_once(lab: Any, ui: str) -> None:
    if ui == "notebook" and importlib.util.find_spec("notebook") is None:
        pytest.skip("Notebook 7 (the notebook package) is not installed")
    lab.open(f"palette-{ui}.ipynb", ui=ui)
    labels = palette_labels(lab, "kli activity")
    assert labels.count("Show kli activity") == 1, labels
    lab.page.keyboard.press("Enter")  # the entry works: the panel shows
    lab.page.locator("#kli-activity").wait_for(state="visible")


def run_from_palette(lab: Any, label: str) -> None:
    """Find ``label`` in the command palette and run it (a click on its item)."""
    assert label in palette_labels(lab, label), label
    item = lab.page.locator(".lm-CommandPalette-item:visible", has=lab.page.locator(
        ".lm-CommandPalette-itemLabel", has_text=label)).first
    item.click()


def test_review_its_keeping_and_the_timeline_are_palette_commands(lab: Any) -> None:
    """Issue 26: the approval switch, keeping it, and the Timeline are commands; a kept choice
    is written to the project's settings file and the panel says where the modes come from."""
    import json
    import time

    settings = lab.server.root / ".kli" / "settings.json"
    lab.open("palette-review.ipynb")
    panel = lab.activity_panel()
    files_box = panel.locator("input.kli-Approval-file")
    origin = panel.locator(".kli-Approval-origin")
    deadline = time.monotonic() + 15
    while not files_box.is_enabled():
        assert time.monotonic() < deadline, "the approval switch to be live"
        time.sleep(0.05)
    origin.filter(has_text="the default (no 'approval' setting)").wait_for()
    try:
        run_from_palette(lab, "Review an agent's calls before they run")
        panel.locator("input.kli-Approval-eval:checked").wait_for()
        assert files_box.is_checked() and panel.locator("input.kli-Approval-shell").is_checked()
        origin.filter(has_text="this kernel only: a restart forgets it").wait_for()
        assert not settings.exists()

        run_from_palette(lab, "Keep the review choice for this project")
        origin.filter(has_text="kept in .kli/settings.json").wait_for()
        assert panel.locator("input.kli-Approval-keep").is_checked()
        assert json.loads(settings.read_text()) == {
            "approval": {"file": "review", "shell": "review", "eval": "review"}}
        # The palette shows the toggles' state.
        lab.command("apputils:activate-command-palette")
        lab.page.locator(".lm-CommandPalette-input:visible").first.fill("review")
        toggled = lab.page.locator(".lm-CommandPalette-item.lm-mod-toggled:visible "
                                   ".lm-CommandPalette-itemLabel")
        want = {"Review an agent's shell commands before they run",
                "Keep the review choice for this project"}
        deadline = time.monotonic() + 15  # the palette redraws its items after the input
        while not want <= set(checked := toggled.all_inner_texts()):
            assert time.monotonic() < deadline, checked
            time.sleep(0.1)
        lab.screenshot("palette-review-toggled")
        lab.page.keyboard.press("Escape")
        lab.screenshot("palette-review-kept", panel)

        run_from_palette(lab, "Review an agent's shell commands before they run")  # off
        panel.locator("input.kli-Approval-shell:not(:checked)").wait_for()
        assert json.loads(settings.read_text())["approval"]["shell"] == "auto"  # where kept

        run_from_palette(lab, "Show the kli Timeline")
        panel.locator(".kli-Timeline").wait_for(state="visible")
        assert panel.locator(".kli-Activity-tab-timeline").get_attribute("aria-selected") == "true"
    finally:
        lab.run("%kli approval auto --no-keep").locator(".jp-OutputArea-output").wait_for()
        settings.unlink(missing_ok=True)  # .kli/ holds the root's change records too: it stays
    assert lab.console_errors() == []
