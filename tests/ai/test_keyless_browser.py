"""The keyless chat in real Chromium (issue 36), as the tour's chat notebook has a new user do
it: JupyterLab on a server with no model set up (tests/ai/keyless.py: as scripts/run starts it,
kli the default persona), the tour's binder/chat_agent.ipynb open on its kli kernel. The person
runs the notebook's review cell, opens a chat from the left sidebar at its default width, picks
nothing, types the task, sees the steps arrive and the held edit's diff on the cell and in the
kli panel, clicks Accept, and sees the answer; the cell is fixed.

Real: the server, Jupyter AI 3.2, kli's persona, the kli kernel JupyterLab starts, the kli
extension, Chromium — and the model: the keyless demo model IS what a new user gets here.
Screenshots: tests/artifacts/chat-keyless-*.png.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.ai.harness import AiServer
from tests.ai.keyless import TASK, TOUR, start_keyless_server
from tests.browser.conftest import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, _unavailable

pytestmark = [pytest.mark.browser, pytest.mark.timeout(400)]

WAIT_MS = 90_000  # a loaded machine: a kernel start and a first render take a while


@pytest.fixture(scope="module")
def keyless(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AiServer]:
    with start_keyless_server(tmp_path_factory.mktemp("keyless-browser")) as server:
        yield server


@pytest.fixture
def page(keyless: AiServer) -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright Python package is not installed")
    if not os.path.isfile(CHROMIUM):
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1500, "height": 950})
        context.set_default_timeout(WAIT_MS)
        pg = context.new_page()
        try:
            yield pg
        except BaseException:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            pg.screenshot(path=str(ARTIFACTS / "chat-keyless-failed.png"))
            raise
        finally:
            context.close()
            browser.close()


def wait_until(check: Callable[[], Any], what: str, timeout: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def _command(page: Any, command: str, args: dict[str, Any] | None = None) -> Any:
    return page.evaluate("([c, a]) => window.jupyterapp.commands.execute(c, a)",
                         [command, args or {}])


def test_a_new_user_types_the_tours_task_in_a_new_chat_accepts_the_edit_and_sees_the_answer(
        keyless: AiServer, page: Any) -> None:
    keyless.close_sessions()
    shutil.copy(TOUR, keyless.root / "chat_agent.ipynb")
    page.goto(f"{keyless.url}/lab/tree/chat_agent.ipynb?reset")
    page.wait_for_selector(".jp-Notebook .jp-Cell", state="visible")
    wait_until(lambda: page.evaluate(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " const k = w && w.sessionContext && w.sessionContext.session"
        " && w.sessionContext.session.kernel;"
        " return !!k && k.status === 'idle' && k.connectionStatus === 'connected'; }"),
        "the notebook's kli kernel to be idle")

    # The notebook's review cell, run as a person runs it; then the kli panel.
    review = page.locator(".jp-Notebook .jp-Cell", has_text="%kli approval review file").first
    review.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    review.locator(".jp-OutputArea-output").first.wait_for()
    assert "review" in review.locator(".jp-OutputArea-output").first.inner_text()
    _command(page, "kli-kernel:show-activity")
    activity = page.locator("#kli-activity")

    # A new chat from the left sidebar, at its default width: kli is picked, nothing to choose.
    page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab[title='Jupyter Chat']").click()
    page.locator(".jp-chat-add").first.click()
    box = page.get_by_placeholder("Type a chat message")
    box.wait_for()
    picker = page.locator("button.jp-jai-personaControls-persona-btn").first
    wait_until(lambda: "kli" in picker.inner_text(), "the persona picker to name kli")
    more = page.locator("button.jp-jai-personaControls-overflow-btn").first
    more.click()
    menu = page.locator(".jp-jai-controlMenu-paper").first
    menu.wait_for()
    assert "Default (kli demo (keyless))" in menu.inner_text(), menu.inner_text()
    # The model and every setting in view at once: nothing scrolled out of the menu (Jupyter
    # AI caps it at 60vh and opens it scrolled to its last control)
    content, shown = menu.evaluate("e => [e.scrollHeight, e.clientHeight]")
    assert content <= shown + 1, f"the '…' menu needs {content} px and shows {shown}"
    assert [h.upper() for h in menu.locator(".jp-jai-controlMenu-subheader").all_inner_texts()
            ] == ["MODEL", "TOOLS", "STEPS", "REVIEW WAIT (S)"]
    page.wait_for_function("() => getComputedStyle(document.querySelector("
                           "'.jp-jai-controlMenu-paper')).opacity === '1'")  # faded in
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "chat-keyless-menu.png"))
    page.keyboard.press("Escape")
    menu.wait_for(state="hidden")

    box.click()
    box.press_sequentially(TASK, delay=10)
    box.press("Enter")
    chat = page.locator(".jp-chat-messages-container").first

    def said() -> str:
        return str(chat.inner_text())

    wait_until(lambda: "kli/demo — the keyless demo model" in said(), "the reply's header")
    wait_until(lambda: "read chat_agent.ipynb" in said(), "the read step")
    wait_until(lambda: "held for review as" in said(), "the held edit")
    proposal = said().split("held for review as ", 1)[1].split()[0].strip(".,;:()`")

    # The cell's diff on the cell, and the proposal in the kli panel.
    cell_diff = page.locator(f".jp-Notebook .jp-Cell .kli-CellDiff-item"
                             f"[data-candidate='{proposal}']")
    cell_diff.wait_for()
    assert "len(xs)" in cell_diff.inner_text()
    item = activity.locator(f".kli-Pending-item[data-candidate='{proposal}']")
    item.wait_for()
    page.screenshot(path=str(ARTIFACTS / "chat-keyless-held.png"))

    item.get_by_role("button", name="Accept").click()
    wait_until(lambda: "gives 4.0" in said(), "the answer after Accept")
    text = said()
    assert f"{proposal}: accepted" in text, text
    assert text.count("Fixed mean in") == 1, text
    assert "keyless demo model" in text.rsplit("Fixed mean in", 1)[1]
    page.locator(".jp-Notebook .jp-Cell", has_text="return sum(xs) / len(xs)").first.wait_for()
    page.screenshot(path=str(ARTIFACTS / "chat-keyless-answer.png"))
    review_off = page.locator(".jp-Notebook .jp-Cell", has_text="%kli approval auto file").first
    review_off.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    review_off.locator(".jp-OutputArea-output").first.wait_for()


def test_with_a_providers_key_set_the_chats_model_menu_picks_its_model_and_keeps_the_demo(
        tmp_path: Any) -> None:
    """One variable in the server's environment (as ``OPENAI_API_KEY=… bash scripts/run``): a
    new chat's model menu has that provider's model as its Default, saying what set it up, and
    the keyless demo after it. No model is called."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright Python package is not installed")
    if not os.path.isfile(CHROMIUM):
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    with start_keyless_server(tmp_path / "keyed", {"OPENAI_API_KEY": "sk-not-a-key"}) as server, \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1500, "height": 950})
            context.set_default_timeout(WAIT_MS)
            page = context.new_page()
            page.goto(f"{server.url}/lab?reset")
            page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab[title='Jupyter Chat']").click()
            page.locator(".jp-chat-add").first.click()
            picker = page.locator("button.jp-jai-personaControls-persona-btn").first
            wait_until(lambda: "kli" in picker.inner_text(), "the persona picker to name kli")
            page.locator("button.jp-jai-personaControls-overflow-btn").first.click()
            menu = page.locator(".jp-jai-controlMenu-paper").first
            menu.wait_for()
            text = menu.inner_text()
            assert "Default (openai/gpt-4.1-mini · OPENAI_API_KEY)" in text, text
            assert "kli demo (keyless)" in text, text
            content, shown = menu.evaluate("e => [e.scrollHeight, e.clientHeight]")
            assert content <= shown + 1, f"the '…' menu needs {content} px and shows {shown}"
            page.wait_for_function("() => getComputedStyle(document.querySelector("
                                   "'.jp-jai-controlMenu-paper')).opacity === '1'")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "chat-keyed-menu.png"))
        finally:
            browser.close()
