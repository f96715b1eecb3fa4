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
