"""The open model, in real JupyterLab WITHOUT jupyter-collaboration (its server extension and its
lab plugins turned off, though installed), in Chromium: an agent's edit of a notebook open in a
tab lands in the tab's model without reload or "file changed on disk" dialog, keeps the person's
unsaved typing in another cell, is refused when the person changed the very cell, and leaves an
nbformat-valid file; a closed tab sends edits to the file; a tab that stops answering gives an
error result, not a hang. (tests/browser's JupyterLab, extension build and Chromium.)"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from kli import client
from kli.tools.file.anchors import line_hash
from tests.browser.conftest import (  # noqa: F401 (fixtures)
    Lab,
    LabFailed,
    LabServer,
    LabUnavailable,
    _unavailable,
    browser,
    page,
    start_lab_server,
)

pytestmark = [pytest.mark.browser, pytest.mark.notebook_live]

COLLAB_LAB_PLUGINS = ("@jupyter/collaboration-extension", "@jupyter/docprovider-extension")
MODELS = "get_ipython().kernel.workspace.notebooks"
INPUT = ".jp-Cell-inputArea .cm-content"  # a cell's editor, not a diff view shown on the cell


def _without_collaboration(config: Path) -> None:
    """Config that turns jupyter-collaboration off in a server that has it installed: its
    server extension (jupyter_server_ydoc) and its lab plugins (page_config's
    disabledExtensions). The user config dir is read last, so it wins."""
    (config / "labconfig").mkdir(parents=True)
    (config / "labconfig" / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {name: True for name in COLLAB_LAB_PLUGINS}}))
    (config / "jupyter_server_config.json").write_text(json.dumps(
        {"ServerApp": {"jpserver_extensions": {"jupyter_server_ydoc": False,
                                                "jupyter_collaboration": False}}}))


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """tests/browser's JupyterLab, with jupyter-collaboration off (overrides its fixture)."""
    base = tmp_path_factory.mktemp("plainlab")
    _without_collaboration(base / "config")
    try:
        with start_lab_server(base) as server:
            yield server
    except LabUnavailable as why:
        _unavailable(str(why))
    except LabFailed as why:
        pytest.fail(str(why))


@pytest.fixture
def lab(page: Any, lab_server: LabServer) -> Lab:  # noqa: F811
    return Lab(page, lab_server)


def _cell_text(lab: Lab, index: int) -> str:
    return str(lab.page.evaluate(
        "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i]"
        ".model.sharedModel.getSource()", index))


def _wait(check: Any, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def _eval(agent: Any, code: str) -> str:
    r = agent.call("eval", {"code": code})
    assert r.ok, r.text
    return str(r.text)


def _has_tab(agent: Any, real: Path) -> bool:
    return "True" in _eval(agent, f"{MODELS}.models.has({str(real.resolve())!r})")


def _route(agent: Any, real: Path) -> str:
    text = _eval(agent, f"print({MODELS}.routes[{str(real.resolve())!r}].path)")
    return text.strip().splitlines()[-1].strip()


def _saved(lab: Lab, name: str) -> Any:
    nb = nbformat.read(lab.server.root / name, as_version=4)
    nbformat.validate(nb)
    return nb


def _saved_source(lab: Lab, name: str, index: int) -> str | None:
    """Cell ``index``'s source on disk, None while the server is writing the file (its save
    writes in place after a backup copy, so a reader can meet it empty or cut)."""
    try:
        return str(_saved(lab, name).cells[index].source)
    except (ValueError, OSError):  # nbformat's NotJSONError is a ValueError
        return None


def _edit(agent: Any, name: str, cell: str, old: str, new: str) -> Any:
    return agent.call("edit", {"input": f"@@ {name}#{cell}\n= 1:{line_hash(old)}\n~{new}\n"})


def test_collaboration_is_off_in_this_lab(lab_server: LabServer) -> None:
    import urllib.error

    with pytest.raises(urllib.error.HTTPError):
        lab_server.api("PUT", "/api/collaboration/session/x.ipynb",
                       {"format": "json", "type": "notebook"})


def test_an_agents_edit_lands_in_the_open_tab_keeping_unsaved_typing_and_refusing_stale(
    lab: Lab,
) -> None:
    lab.open("om.ipynb", ["p = 1", "q = 2"])
    real = lab.server.root / "om.ipynb"
    config = json.loads(lab.page.evaluate(
        "() => document.getElementById('jupyter-config-data').textContent"))
    assert set(COLLAB_LAB_PLUGINS) <= set(config.get("disabledExtensions") or ()), config
    agent = client.connect(str(lab.connection_file()), label="tab agent",
                           timeout=30)
    try:
        _wait(lambda: _has_tab(agent, real), "the tab's notebooks report reaching the kernel")
        # The person types into the first cell and does not save.
        editor = lab.page.locator(".jp-Notebook .jp-Cell").nth(0).locator(INPUT)
        editor.click()
        lab.page.keyboard.press("End")
        lab.page.keyboard.type(" + 10", delay=30)
        _wait(lambda: _cell_text(lab, 0) == "p = 1 + 10", "the person's typing in the model")
        assert "".join(json.loads(real.read_text())["cells"][0]["source"]) == "p = 1"  # unsaved

        read = agent.call("read", {"path": "om.ipynb"})
        assert read.ok, read.text
        assert "p = 1 + 10" in read.text  # the read comes from the model, unsaved typing too
        assert _route(agent, real) == "model"
        first, second = read.details["cell_ids"][:2]
        r = _edit(agent, "om.ipynb", second, "q = 2", "q = 20")
        assert r.ok, r.text
        _wait(lambda: _cell_text(lab, 1) == "q = 20", "the agent's edit in the tab")
        assert _cell_text(lab, 0) == "p = 1 + 10"  # the person's typing kept
        assert lab.page.locator(".jp-Dialog").count() == 0  # no "file changed on disk"
        saved = _saved(lab, "om.ipynb")  # saved through the document context, nbformat-valid
        assert [c.source for c in saved.cells] == ["p = 1 + 10", "q = 20"]
        assert [c.id for c in saved.cells] == [first, second]

        # The person changes the very cell the agent read: the edit is refused, their text stays.
        assert agent.call("read", {"path": f"om.ipynb#{first}"}).ok
        lab.page.keyboard.type(" + 100", delay=20)
        _wait(lambda: _cell_text(lab, 0) == "p = 1 + 10 + 100", "the person's second typing")
        stale = _edit(agent, "om.ipynb", first, "p = 1 + 10", "p = 0")
        assert not stale.ok and stale.details["error"] == "stale", stale.text
        time.sleep(0.3)
        assert _cell_text(lab, 0) == "p = 1 + 10 + 100"
        assert [c.source for c in _saved(lab, "om.ipynb").cells] == ["p = 1 + 10", "q = 20"]

        # The tab's own check: a plan built on text the model no longer holds (the person typed
        # between the kernel's read and the apply) is refused in the tab, nothing changed.
        race = _eval(agent, "\n".join([
            "from kli.tools.core.atomic import Stale",
            f"s = {MODELS}",
            f"real = {str(real.resolve())!r}",
            "nb = s.load(real)",
            "old = s.load(real)",
            "old.data['cells'][0]['source'] = 'p = 1 + 10'",
            "from kli.tools.notebook.model import NBFORMAT_LAYOUT",
            "nb.raw = NBFORMAT_LAYOUT.dumps(old.data)",
            "nb.cells[0]['source'] = 'p = 0'",
            "nb.cells[1]['source'] = 'q = 0'",
            "try:",
            "    s.commit([(real, nb)])",
            "    print('applied')",
            "except Stale as exc:",
            "    print('stale:', exc.why)",
        ]))
        assert "stale:" in race and "changed in the open tab" in race, race
        assert [_cell_text(lab, 0), _cell_text(lab, 1)] == ["p = 1 + 10 + 100", "q = 20"]
        assert lab.page.locator(".jp-Dialog").count() == 0

        # run_cells writes a cell's outputs into the tab's model too (when the cell ends).
        run = agent.call("run_cells", {"path": "om.ipynb", "cell": second, "timeout": 30})
        assert run.ok, run.text
        _wait(lambda: lab.page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.content.widgets[1].model"
            ".sharedModel.execution_count") is not None, "the run's count in the tab")
        assert _cell_text(lab, 0) == "p = 1 + 10 + 100"  # still the person's
        assert lab.page.locator(".jp-Dialog").count() == 0
        assert _saved(lab, "om.ipynb").cells[1].execution_count is not None

        # One change of the tab's notebook and a file: the file's write fails (it changed since
        # it was checked) after the tab applied, and the tab's change is taken back.
        side = lab.server.root / "side.txt"
        side.write_text("a")
        mixed = _eval(agent, "\n".join([
            "from kli.tools.core.atomic import Stale",
            f"s = {MODELS}",
            f"real = {str(real.resolve())!r}",
            "nb = s.load(real)",
            "nb.cells[1]['source'] = 'q = 99'",
            f"side = {str(side.resolve())!r}",
            "try:",
            "    s.commit([(real, nb)], [(side, b'b')], {side: b'not what is there'})",
            "    print('written')",
            "except Stale:",
            "    print('refused')",
        ]))
        assert "refused" in mixed, mixed
        _wait(lambda: _cell_text(lab, 1) == "q = 20", "the tab's change taken back")
        assert side.read_text() == "a"
        assert [c.source for c in _saved(lab, "om.ipynb").cells][1] == "q = 20"

        # The agent's edit is recorded for undo; undo goes through the tab, cell by cell.
        assert r.details.get("change"), r.details
        back = agent.call("undo", {"change": r.details["change"]})
        assert back.ok, back.text
        _wait(lambda: _cell_text(lab, 1) == "q = 2", "the undo in the tab")
        assert _cell_text(lab, 0) == "p = 1 + 10 + 100"
        assert [c.source for c in _saved(lab, "om.ipynb").cells] == ["p = 1 + 10 + 100", "q = 2"]
        assert lab.page.locator(".jp-Dialog").count() == 0

        # A structural change (the cells tool) lands in the tab too: a new cell after the first.
        assert agent.call("read", {"path": "om.ipynb"}).ok
        ins = agent.call("cells", {"op": "insert", "path": "om.ipynb", "anchor": first,
                                   "where": "after", "source": "mid = 5"})
        assert ins.ok, ins.text
        _wait(lambda: lab.page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.content.widgets.length") == 3,
            "the inserted cell in the tab")
        assert [_cell_text(lab, i) for i in range(3)] == ["p = 1 + 10 + 100", "mid = 5", "q = 2"]
        assert [c.source for c in _saved(lab, "om.ipynb").cells] == [
            "p = 1 + 10 + 100", "mid = 5", "q = 2"]
    finally:
        agent.close()
    assert lab.console_errors() == []


def test_a_closed_tab_sends_edits_to_the_file_and_a_silent_one_gives_an_error(lab: Lab) -> None:
    lab.open("gone.ipynb", ["g = 1"])
    lab.server.new_notebook("other.ipynb", ["o = 1"])
    real, other = lab.server.root / "gone.ipynb", lab.server.root / "other.ipynb"
    agent = client.connect(str(lab.connection_file()), label="gone agent",
                           timeout=30)
    try:
        # A second tab (with its own kernel) opens, is reported to this kernel too, and closes.
        lab.command("docmanager:open", {"path": "other.ipynb", "kernel": {"name": "kli"}})
        _wait(lambda: _has_tab(agent, other), "the second tab reported")
        lab.page.evaluate(
            "() => { const t = window.jupyterapp.shell.widgets('main');"
            " for (const w of t) { if (w.context && w.context.path === 'other.ipynb')"
            " w.dispose(); } }")
        _wait(lambda: not _has_tab(agent, other), "the closed tab reported")
        assert agent.call("read", {"path": "other.ipynb"}).ok
        assert _route(agent, other) == "disk"
        cid = str(_saved(lab, "other.ipynb").cells[0].id)
        r = _edit(agent, "other.ipynb", cid, "o = 1", "o = 2")
        assert r.ok, r.text
        assert _saved(lab, "other.ipynb").cells[0].source == "o = 2"

        # A busy page answers after the kernel gave up: the change it applied late is taken
        # back, so what the error said (nothing was changed) holds in the end.
        _eval(agent, "\n".join([
            f"s = {MODELS}",
            f"real = {str(real.resolve())!r}",
            "_om_nb = s.load(real)",
            "_om_nb.cells[0]['source'] = 'g = 5'",
            "s.models.timeout = 1.0",
        ]))
        lab.page.evaluate("""() => {
          const m = window.jupyterapp.shell.currentWidget.content.widgets[0].model.sharedModel;
          window.kliSeen = [];
          m.changed.connect(() => window.kliSeen.push(m.getSource()));
          setTimeout(() => { const t = Date.now(); while (Date.now() - t < 3000) {} }, 0);
        }""")
        late = _eval(agent, "\n".join([
            "try:",
            "    s.commit([(real, _om_nb)])",
            "    print('applied')",
            "except OSError as exc:",
            "    print('error:', exc.strerror)",
        ]))
        assert "error:" in late and "did not answer in 1 s" in late and "taken back" in late, late
        _wait(lambda: "g = 5" in lab.page.evaluate("() => window.kliSeen"), "the late apply")
        _wait(lambda: _cell_text(lab, 0) == "g = 1", "the late change taken back")
        _wait(lambda: _saved_source(lab, "gone.ipynb", 0) == "g = 1", "the file back")
        assert _has_tab(agent, real)  # it answered: its notebooks count again
        assert lab.page.locator(".jp-Dialog").count() == 0

        # The browser goes away without closing anything: the kernel still lists the tab, waits
        # for it a bounded time, gives an error result saying how to retry, then uses the file.
        assert agent.call("read", {"path": "gone.ipynb"}).ok
        assert _route(agent, real) == "model"
        _eval(agent, f"{MODELS}.models.timeout = 2.0")
        cid = str(_saved(lab, "gone.ipynb").cells[0].id)
        lab.page.close()
        started = time.monotonic()
        r = _edit(agent, "gone.ipynb", cid, "g = 1", "g = 2")
        assert time.monotonic() - started < 15
        assert not r.ok and "did not answer in 2 s" in r.text and "send the change again" \
            in r.text, r.text
        assert _saved(lab, "gone.ipynb").cells[0].source == "g = 1"
        assert agent.call("read", {"path": "gone.ipynb"}).ok
        assert _route(agent, real) == "disk"
        r = _edit(agent, "gone.ipynb", cid, "g = 1", "g = 2")
        assert r.ok, r.text
        assert _saved(lab, "gone.ipynb").cells[0].source == "g = 2"
    finally:
        agent.close()


def test_in_notebook_7_an_agents_edit_lands_in_the_open_page(lab: Lab) -> None:
    lab.open("nb7.ipynb", ["a = 1", "b = 2"], ui="notebook")
    real = lab.server.root / "nb7.ipynb"
    agent = client.connect(str(lab.connection_file()), label="nb7 agent",
                           timeout=30)
    try:
        _wait(lambda: _has_tab(agent, real), "Notebook 7's page reported")
        editor = lab.page.locator(".jp-Notebook .jp-Cell").nth(0).locator(INPUT)
        editor.click()
        lab.page.keyboard.press("End")
        lab.page.keyboard.type(" + 1", delay=30)
        _wait(lambda: _cell_text(lab, 0) == "a = 1 + 1", "the person's typing in the model")
        read = agent.call("read", {"path": "nb7.ipynb"})
        assert read.ok, read.text
        assert _route(agent, real) == "model"
        r = _edit(agent, "nb7.ipynb", read.details["cell_ids"][1], "b = 2", "b = 3")
        assert r.ok, r.text
        _wait(lambda: _cell_text(lab, 1) == "b = 3", "the agent's edit in the page")
        assert _cell_text(lab, 0) == "a = 1 + 1"
        assert lab.page.locator(".jp-Dialog").count() == 0
        assert [c.source for c in _saved(lab, "nb7.ipynb").cells] == ["a = 1 + 1", "b = 3"]
    finally:
        agent.close()
    # Notebook 7's own errors in this server, not the extension's: a settings error when the
    # collaboration plugins are disabled (its /tree page logs it too, with no notebook open),
    # and its file-browser command missing when it follows the JupyterLab tests' pages.
    nb7_own = ("Cannot read properties of undefined (reading 'schema')",
               "Command 'filebrowser:open-path' not registered")
    assert [e for e in lab.console_errors() if not any(n in e for n in nb7_own)] == []

