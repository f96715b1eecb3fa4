"""The kli persona in Jupyter AI's chat, in a real JupyterLab driven by real Chromium (issue 24):
a person opens a notebook and a chat beside it, types a task in the chat's input (the input's
persona picker names kli: Jupyter AI 3.2 routes the message by it, ``metadata["to_persona"]``),
sees the steps arrive in the chat, sees the held cell edit's diff on the cell and in the kli
panel, Accepts it in the kli panel and the run goes on; and the chat's Stop during a 60 s
``bash`` ends the run in the kernel (the command's process gone) within two seconds.

Real: the Jupyter server with Jupyter AI 3.2 and kli's persona, the kli kernel JupyterLab starts
for the notebook, litellm, the kli extension, Chromium. The model is SCRIPTED (tests/endpoint.py,
an OpenAI-compatible server answering with the tool calls the test sets): a model cannot exist
here. Screenshots go to tests/artifacts/chat-*.png (docs/img)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kli.tools.file.anchors import line_hash
from tests.ai.harness import AiServer, answer, calls
from tests.browser.conftest import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, _unavailable

pytestmark = [pytest.mark.browser, pytest.mark.timeout(400)]

BUGGY = "def add(a, b):\n    return a - b"
FIX = f"@@ calc.ipynb#c2\n= 2:{line_hash('    return a - b')}\n~    return a + b\n"
WAIT_MS = 90_000  # the machine may be loaded: a kernel start and a first render take a while


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright Python package is not installed")
    if not os.path.isfile(CHROMIUM):
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser: Any, server: AiServer, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1500, "height": 950})
    context.set_default_timeout(WAIT_MS)
    pg = context.new_page()
    try:
        yield pg
    finally:
        if getattr(request.node, "rep_call", None) is None or request.node.rep_call.failed:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            pg.screenshot(path=str(ARTIFACTS / f"{request.node.name}-failed.png"))
        context.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    rep = yield
    if rep.when == "call":
        item.rep_call = rep  # type: ignore[attr-defined]
    return rep


def wait_until(check: Callable[[], Any], what: str, timeout: float = 90.0,
               step: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(step)


def _cells(path: Any) -> dict[str, str]:
    return {c["id"]: "".join(c["source"]) for c in json.loads(path.read_text())["cells"]}


def _command(page: Any, command: str, args: dict[str, Any] | None = None) -> Any:
    return page.evaluate("([c, a]) => window.jupyterapp.commands.execute(c, a)",
                         [command, args or {}])


def _open_notebook_and_chat(page: Any, server: AiServer, notebook: str, chat: str) -> Any:
    """The person's JupyterLab: ``notebook`` open (its kli kernel started by JupyterLab) and the
    chat ``chat`` beside it; the chat's panel."""
    (server.root / chat).write_text("")
    page.goto(f"{server.url}/lab/tree/{notebook}?reset")
    page.wait_for_selector(".jp-Notebook .jp-Cell", state="visible")
    wait_until(lambda: page.evaluate(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " const k = w && w.sessionContext && w.sessionContext.session"
        " && w.sessionContext.session.kernel;"
        " return !!k && k.status === 'idle' && k.connectionStatus === 'connected'; }"),
        "the notebook's kli kernel to be idle")
    _command(page, "docmanager:open", {"path": chat, "options": {"mode": "split-right"}})
    panel = page.locator(".jp-lab-chat-main-panel")
    panel.locator("textarea[placeholder]").wait_for()
    # The input's persona picker names kli (the only persona): the message goes to kli.
    picker = panel.locator("button.jp-jai-personaControls-persona-btn")
    wait_until(lambda: "kli" in picker.inner_text(), "the persona picker to name kli")
    return panel


def _type_task(panel: Any, text: str) -> None:
    box = panel.locator("textarea[placeholder]")
    box.click()
    box.press_sequentially(text, delay=10)
    box.press("Enter")


def _chat_text(panel: Any) -> str:
    return str(panel.locator(".jp-chat-messages-container").inner_text())


@pytest.mark.serial  # asserts a wall-clock time
def test_a_person_types_a_task_sees_the_steps_and_accepts_the_held_cell_edit(
        server: AiServer, page: Any) -> None:
    nb = server.notebook("calc.ipynb", [("c1", "x = 41"), ("c2", BUGGY)])
    server.script.set([calls(("read", {"path": "calc.ipynb"})),
                       calls(("edit", {"input": FIX})),
                       answer("add adds now, after your review.")])
    chat = _open_notebook_and_chat(page, server, "calc.ipynb", "fix.chat")

    # Review on, as a person does it: the kli panel's switch for files.
    _command(page, "kli-kernel:show-activity")
    activity = page.locator("#kli-activity")
    files_box = activity.locator("input.kli-Approval-file")
    wait_until(files_box.is_enabled, "the kli panel's review switch to be live")
    files_box.check()

    page.evaluate(_SEEN_JS)  # when each step line first shows in the chat (the page's clock)
    # The notebook as the turn finds it, saved by JupyterLab as a person's notebook is (the
    # turn's edit and its undo go through the open notebook, and JupyterLab saves them).
    written = nb.stat().st_mtime_ns
    page.locator(".lm-TabBar-tab", has_text="calc.ipynb").first.click()
    _command(page, "docmanager:save")
    wait_until(lambda: nb.stat().st_mtime_ns != written, "JupyterLab to save the notebook")
    before = nb.read_bytes()
    chat.locator("textarea[placeholder]").click()
    _type_task(chat, "add subtracts; fix it")
    # The steps arrive in the chat as they happen: the read, then the edit held for review.
    wait_until(lambda: "read calc.ipynb" in _chat_text(chat), "the read step in the chat")
    held = wait_until(lambda: "held for review as" in _chat_text(chat), "the held edit")
    assert held
    text = _chat_text(chat)
    proposal = text.split("held for review as ", 1)[1].split()[0].strip(".,;:()`")
    assert _cells(nb)["c2"] == BUGGY  # nothing written before the person decides

    # The cell's diff, on the cell, and the proposal in the kli panel.
    item = activity.locator(f".kli-Pending-item[data-candidate='{proposal}']")
    item.wait_for()
    assert "a + b" in item.locator(".kli-DiffView").inner_text()
    cell_item = page.locator(f".jp-Notebook .jp-Cell .kli-CellDiff-item"
                             f"[data-candidate='{proposal}']")
    cell_item.wait_for()
    assert "a + b" in cell_item.inner_text()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "chat-held-edit.png"))

    item.get_by_role("button", name="Accept").click()
    # The run goes on: the chat shows the accepted edit and the final answer.
    wait_until(lambda: "add adds now, after your review." in _chat_text(chat),
               "the run to go on after Accept")
    assert f"{proposal}: accepted" in _chat_text(chat), _chat_text(chat)
    assert _cells(nb)["c2"] == "def add(a, b):\n    return a + b"
    assert "accepted" in server.script.tool_results()[1]
    page.screenshot(path=str(ARTIFACTS / "chat-accepted.png"))
    # From a step's tool result (the persona's log line for it, written as the result arrives)
    # to the step's line in the chat's DOM: both on this machine's clock.
    latency = _step_latency(server, page.evaluate("() => window.kliSeen"), "chat fix.chat turn")
    assert any(k.startswith("[1] read calc.ipynb") for k in latency), latency
    assert any(k.startswith("[2] edit calc.ipynb#c2") for k in latency), latency
    (ARTIFACTS / "chat-step-latency.json").write_text(json.dumps(latency, indent=1))
    print("tool result -> step visible in the chat (ms):", latency)

    # Undo this turn, from the notebook's Timeline: one press, the notebook's bytes are back.
    activity.get_by_role("tab", name="Timeline").click()
    turn = activity.locator(".kli-Timeline-session[data-label='chat fix.chat turn 1']")
    turn.get_by_role("button", name="Undo this turn").click()
    wait_until(lambda: nb.read_bytes() == before, "the notebook's bytes as before the turn")
    page.locator(".jp-Notebook .jp-Cell", has_text="return a - b").first.wait_for()
    page.screenshot(path=str(ARTIFACTS / "chat-turn-undone.png"))
    assert all(v < 5000 for v in latency.values()), latency
    files_box.uncheck()


_SEEN_JS = """
() => {
  window.kliSeen = {};
  const root = document.querySelector('.jp-lab-chat-main-panel .jp-chat-messages-container');
  const note = () => {
    for (const li of root.querySelectorAll('li')) {
      const t = li.innerText.trim();
      if (!(t in window.kliSeen)) window.kliSeen[t] = Date.now();
    }
  };
  new MutationObserver(note).observe(root, {childList: true, subtree: true, characterData: true});
}
"""


def _step_latency(server: AiServer, seen: dict[str, float], label: str) -> dict[str, float]:
    """Milliseconds from each step's tool result (its ``kli: LABEL …: [N] tool …`` line in the
    server's log, timestamped there) to its line first showing in the chat."""
    import datetime

    results: dict[str, float] = {}
    for row in server.log.read_text().splitlines():
        if f"kli: {label}" not in row or " s: [" not in row or "model (" in row:
            continue
        stamp = row[3:26]  # [I 2026-12-02 02:04:31.344 …
        when = datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S.%f").timestamp()
        results.setdefault(row.split(" s: ", 1)[1].strip(), when)
    out: dict[str, float] = {}
    for text, shown in seen.items():
        step = text[text.find("["):] if "[" in text else text
        for line, when in results.items():
            if step == line or (len(step) > 20 and line.startswith(step[:40])):
                out[step] = round(shown - when * 1000, 1)
    return out


def _sleepers() -> list[Any]:
    import psutil

    kernels = [p for p in psutil.process_iter(["cmdline"])
               if "kli.kernel" in " ".join(p.info["cmdline"] or [])]
    out = []
    for k in kernels:
        try:
            out += [c for c in k.children(recursive=True)
                    if "sleep 60" in " ".join(c.cmdline() or [])
                    or c.cmdline()[:2] == ["sleep", "60"]]
        except psutil.Error:
            continue
    return out


@pytest.mark.serial  # asserts a wall-clock time
def test_the_chats_stop_during_a_60_s_bash_ends_it_in_the_kernel_within_two_seconds(
        server: AiServer, page: Any) -> None:
    server.notebook("long.ipynb", [("l1", "pass")])
    marker = server.root / "finished.txt"
    server.script.set([calls(("bash", {"command": f"sleep 60; touch {marker}",
                                        "timeout": 120}))])
    chat = _open_notebook_and_chat(page, server, "long.ipynb", "long.chat")
    _type_task(chat, "run the long job")
    wait_until(_sleepers, "the 60 s bash to run in the kernel", step=0.2)
    stop = chat.get_by_role("button", name="Stop generating")  # jupyterlab-chat's Stop
    stop.wait_for()
    page.screenshot(path=str(ARTIFACTS / "chat-running-bash.png"))
    started = time.monotonic()
    stop.click()
    wait_until(lambda: not _sleepers(), "the bash command to end", timeout=10, step=0.02)
    took = time.monotonic() - started
    print(f"Stop: the bash gone from the kernel {took:.2f} s after the click")
    assert took <= 2.0, f"Stop took {took:.2f} s to end the bash in the kernel"
    wait_until(lambda: "Stopped" in _chat_text(chat), "the chat to say the run stopped", 30)
    assert not marker.exists()
    assert len(server.script.requests) == 1  # the model was not asked again
    page.screenshot(path=str(ARTIFACTS / "chat-stopped.png"))


_OVERLAPS_JS = """
(more) => {
  const r = more.getBoundingClientRect();
  const top = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
  const toolbar = more.closest('.jp-chat-input-container') || document.body;
  const hits = [...toolbar.querySelectorAll('button')].filter(b => b !== more
      && !more.contains(b) && !b.contains(more) && b.offsetParent !== null
      && getComputedStyle(b).visibility !== 'hidden').filter(b => {
    const o = b.getBoundingClientRect();
    return o.width > 0 && o.x < r.right - 1 && r.x < o.right - 1
        && o.y < r.bottom - 1 && r.y < o.bottom - 1;
  }).map(b => b.getAttribute('title') || b.getAttribute('aria-label') || b.className);
  return {onTop: !!top && more.contains(top), overlaps: hits, width: r.width};
}
"""


def test_after_a_reply_with_token_usage_the_chats_settings_stay_reachable_in_the_sidebar(
        server: AiServer, page: Any) -> None:
    """Issue 36: a real model reports token usage, and Jupyter AI then shows its usage chip in
    the chat's input toolbar. In a chat in the left sidebar at its default width, the '…'
    settings button stays in view, on top, clear of the Stop and Send buttons, and opens."""
    server.notebook("w.ipynb", [("c1", "x = 1")])
    server.script.set([answer("Nothing to change here.")])
    page.goto(f"{server.url}/lab/tree/w.ipynb?reset")
    page.wait_for_selector(".jp-Notebook .jp-Cell", state="visible")
    page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab[title='Jupyter Chat']").click()
    page.locator(".jp-chat-add").first.click()
    box = page.get_by_placeholder("Type a chat message")
    box.wait_for()
    picker = page.locator("button.jp-jai-personaControls-persona-btn").first
    wait_until(lambda: "kli" in picker.inner_text(), "the persona picker to name kli")
    box.click()
    box.press_sequentially("in w.ipynb is anything wrong?", delay=10)
    box.press("Enter")
    messages = page.locator(".jp-chat-messages-container").first
    wait_until(lambda: "Nothing to change here." in messages.inner_text(), "the answer")
    page.locator(".jp-jai-usage-chip").first.wait_for()  # the model's tokens, reported
    more = page.locator("button.jp-jai-personaControls-overflow-btn").first
    more.wait_for()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "chat-usage-toolbar.png"))
    seen = more.evaluate(_OVERLAPS_JS)
    assert seen["onTop"] and seen["overlaps"] == [] and seen["width"] > 0, seen
    more.click()
    page.locator(".jp-jai-controlMenu-paper").first.wait_for()
