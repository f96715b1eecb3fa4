"""watch_agent.ipynb in a real JupyterLab: the replay shows live in the activity panel, and its
repair preview is accepted there.

Runs the notebook's set-up and launch cells in Chromium, waits (between cells, as a reader does)
for the replay agent to finish, then checks the activity panel lists the agent's calls under
its REPLAY label with one pending preview, clicks the panel's Accept, and checks the file on
disk. Uses the browser test harness of tests/browser (server, Chromium, page helpers).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
ARTIFACTS = ROOT / "tests" / "artifacts" / "binder"
# Cells of watch_agent.ipynb: the set-up, then the launch of the agent in the background.
SETUP_CELL, LAUNCH_CELL = 1, 3

pytestmark = [pytest.mark.browser, pytest.mark.kernel]


def _harness() -> Any:
    path = ROOT / "tests" / "browser" / "conftest.py"
    spec = importlib.util.spec_from_file_location("kli_browser_harness", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _unavailable(reason: str) -> None:
    if os.environ.get("KLI_REQUIRE_BROWSER"):
        pytest.fail(reason)
    pytest.skip(reason)


def test_replay_shows_live_in_the_activity_panel_and_its_preview_is_accepted_there(
    tmp_path: Path,
) -> None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright Python package is not installed")
    harness = _harness()
    if not os.path.isfile(harness.CHROMIUM):
        _unavailable(f"{harness.CHROMIUM} is missing (apt-get install chromium)")
    try:
        server_cm = harness.start_lab_server(tmp_path)
        server = server_cm.__enter__()
    except harness.LabUnavailable as why:
        _unavailable(str(why))
    try:
        for name in ("watch_agent.ipynb", "replay_agent.py", "agent_transcript.json"):
            shutil.copy(BINDER / name, server.root / name)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=harness.CHROMIUM, headless=True,
                                         args=harness.CHROMIUM_ARGS)
            try:
                page = browser.new_context(viewport={"width": 1500, "height": 950}).new_page()
                page.set_default_timeout(30_000)
                page.goto(server.url + "/lab/tree/watch_agent.ipynb?reset")
                page.wait_for_selector(".jp-Notebook .jp-Cell", state="visible")
                lab = harness.Lab(page, server)
                lab.notebook = "watch_agent.ipynb"
                lab.wait_idle()
                lab.command("kli-kernel:show-activity")
                for index in (SETUP_CELL, LAUNCH_CELL):
                    page.evaluate(
                        "async (i) => { const app = window.jupyterapp;"
                        " const nb = app.shell.currentWidget.content; nb.activeCellIndex = i;"
                        " await app.commands.execute('notebook:run-cell'); }", index)
                    lab.wait_idle()
                ready = server.root / "demo" / "agent" / "ready"
                deadline = time.monotonic() + 60
                while not ready.exists() and time.monotonic() < deadline:
                    page.wait_for_timeout(250)
                assert ready.exists(), "the replay agent did not finish"
                page.wait_for_function(
                    "() => document.body.innerText.toUpperCase()"
                    ".includes('PENDING (1)')")  # the panel's one queue of proposals
                text = page.inner_text("body")
                assert "REPLAY agent (recorded transcript)" in text
                ARTIFACTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / "watch_agent_live.png"))
                greet = server.root / "demo" / "agent" / "greet.py"
                assert "def shout" not in greet.read_text()  # a preview writes nothing
                page.get_by_role("button", name="Accept", exact=True).first.click()
                deadline = time.monotonic() + 20
                while "def shout" not in greet.read_text() and time.monotonic() < deadline:
                    page.wait_for_timeout(250)
                assert greet.read_text().endswith("    return greet(name.upper())\n")
            finally:
                browser.close()
    finally:
        server_cm.__exit__(None, None, None)
