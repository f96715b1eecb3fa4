"""Undo in a real kernel a Jupyter server (with jupyter-collaboration) started: a notebook
changed in the live Y document is recorded per session like a file, and undo / redo go back
through the live document (the person, a second Y client, sees each in place), refused naming
the notebook and cell when that cell changed since; an agent's ``undo`` under approval mode
``review`` waits for a person's Accept. Without jupyter-collaboration, a notebook open in a
JupyterLab tab (the open model, in Chromium) is recorded and undone through the tab alike."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kli import client
from kli.tools.file.anchors import line_hash
from tests.notebook_live.conftest import CollabServer, Person, live_notebook
from tests.notebook_live.test_open_model import (  # noqa: F401 (fixtures: a lab without collaboration)
    browser,
    lab,
    lab_server,
    page,
)

pytestmark = [pytest.mark.kernel, pytest.mark.notebook_live]

WS = "get_ipython().kernel.workspace"


@pytest.fixture
def live(collab: CollabServer, request: pytest.FixtureRequest
         ) -> Iterator[tuple[str, Any, Person]]:
    """A live notebook (cells ``one``, ``two``) of the test's own, on a kernel of its own: the
    tests read its cells as made, whichever ran before (or on another xdist worker)."""
    name = f"undo-{request.node.name[5:45]}.ipynb"
    with live_notebook(collab, name, [("one", "a = 1"), ("two", "b = 2")]) as live:
        yield live


def _persons_accept(pid: str) -> str:
    """Code that Accepts ``pid`` as the panel does: from a thread of its own, outside the
    agent's call (an Accept asked from inside an agent's call is refused as the agent's)."""
    return ("import threading\n_box = []\n"
            f"_t = threading.Thread(target=lambda: _box.append(approval.accept_any({WS}, {pid!r}, 'ui')))\n"
            "_t.start()\n_t.join()\n(_box[0].ok, _box[0].text)")


def _in_kernel(agent: Any, code: str) -> str:
    r = agent.call("eval", {"code": code})
    assert r.ok, r.text
    return str(r.text)


def test_an_agents_undo_under_review_waits_and_accept_takes_the_change_back(
    collab: CollabServer, live: tuple[str, Any, Person]
) -> None:
    _name, agent, _person = live
    w = agent.call("write", {"path": "held.txt", "content": "agent's\n"})
    assert w.ok and w.details.get("change"), w.text
    _in_kernel(agent, f"from kli.tools.core import approval\napproval.set_mode({WS}, 'review', 'file')")
    try:
        u = agent.call("undo", {"change": w.details["change"]})
        assert u.ok and u.details.get("status") == "pending", u.text
        assert (collab.root / "held.txt").read_text() == "agent's\n"  # nothing changed yet
        pid = u.details["proposal"]
        out = _in_kernel(agent, _persons_accept(pid))
        assert "(True, \"Accepted proposal" in out, out
        assert not (collab.root / "held.txt").exists()
    finally:
        _in_kernel(agent, f"approval.set_mode({WS}, 'auto')")


def _edit(agent: Any, name: str, cell: str, old: str, new: str) -> Any:
    assert agent.call("read", {"path": f"{name}#{cell}"}).ok
    r = agent.call("edit", {"input": f"@@ {name}#{cell}\n= 1:{line_hash(old)}\n~{new}\n"})
    assert r.ok, r.text
    return r


def test_a_live_cell_edit_is_recorded_and_undo_and_redo_go_through_the_live_document(
    live: tuple[str, Any, Person]
) -> None:
    name, agent, person = live
    r = _edit(agent, name, "one", "a = 1", "a = 10")
    person.wait_for(lambda: person.sources()[0] == "a = 10")
    change = r.details.get("change")
    assert change, r.details  # the live change is in the undo timeline
    listed = agent.call("changes", {})
    assert f"{name}#one (live)" in listed.text, listed.text
    u = agent.call("undo", {"change": change})
    assert u.ok, u.text
    person.wait_for(lambda: person.sources()[0] == "a = 1")
    assert person.sources()[1] == "b = 2"
    assert [(f["path"], f["before"], f["after"]) for f in u.details["files"]] == [
        (f"{name}#one", "a = 10", "a = 1")]
    assert u.details.get("change")  # the undo is itself a recorded live change
    d = agent.call("redo", {"change": change})
    assert d.ok, d.text
    person.wait_for(lambda: person.sources()[0] == "a = 10")
    again = agent.call("undo", {"change": change})  # its redo left it as it was: no force
    assert again.ok, again.text
    person.wait_for(lambda: person.sources()[0] == "a = 1")


def test_undo_is_refused_naming_the_notebook_and_cell_when_the_person_changed_it(
    live: tuple[str, Any, Person]
) -> None:
    name, agent, person = live
    r = _edit(agent, name, "two", "b = 2", "b = 20")
    person.wait_for(lambda: person.sources()[1] == "b = 20")
    person.type_into(1, 0, "# mine\n")
    wait_kernel_sees(agent, f"{name}#two", "# mine")
    u = agent.call("undo", {"change": r.details["change"]})
    assert not u.ok and u.details["error"] == "changed", u.text
    assert f"{name}#two" in u.text and u.details["paths"] == [f"{name}#two"]
    assert person.sources()[1] == "# mine\nb = 20"  # nothing changed
    forced = agent.call("undo", {"change": r.details["change"], "force": True})
    assert forced.ok, forced.text
    person.wait_for(lambda: person.sources()[1] == "b = 2")
    # what the person had is recorded too: undoing the forced undo brings it back
    assert agent.call("undo", {"change": forced.details["change"]}).ok
    person.wait_for(lambda: person.sources()[1] == "# mine\nb = 20")


def test_undo_of_inserted_and_deleted_cells_removes_them_and_puts_them_back_in_place(
    live: tuple[str, Any, Person]
) -> None:
    name, agent, person = live
    assert agent.call("read", {"path": name}).ok
    before = person.sources()
    ins = agent.call("cells", {"path": name, "op": "insert", "where": "after", "anchor": "one",
                               "source": "c = 3"})
    assert ins.ok, ins.text
    person.wait_for(lambda: "c = 3" in person.sources())
    assert agent.call("undo", {"change": ins.details["change"]}).ok
    person.wait_for(lambda: person.sources() == before)
    assert agent.call("read", {"path": name}).ok
    gone = agent.call("cells", {"path": name, "op": "delete", "cell": "one"})
    assert gone.ok, gone.text
    person.wait_for(lambda: len(person.sources()) == len(before) - 1)
    back = agent.call("undo", {"change": gone.details["change"]})
    assert back.ok, back.text
    person.wait_for(lambda: person.sources() == before)
    assert person.cell(0)["id"] == "one"


def test_a_held_undo_of_a_live_change_changes_the_document_only_on_accept(
    live: tuple[str, Any, Person]
) -> None:
    name, agent, person = live
    r = _edit(agent, name, "one", "a = 1", "a = 5")
    person.wait_for(lambda: person.sources()[0] == "a = 5")
    _in_kernel(agent, f"from kli.tools.core import approval\napproval.set_mode({WS}, 'review', 'file')")
    try:
        u = agent.call("undo", {"change": r.details["change"]})
        assert u.ok and u.details.get("status") == "pending", u.text
        assert person.sources()[0] == "a = 5"
        pid = u.details["proposal"]
        out = _in_kernel(agent, _persons_accept(pid))
        assert "(True, " in out, out
        person.wait_for(lambda: person.sources()[0] == "a = 1")
    finally:
        _in_kernel(agent, f"approval.set_mode({WS}, 'auto')")


def wait_kernel_sees(agent: Any, target: str, text: str) -> None:
    import time

    deadline = time.monotonic() + 10
    while text not in agent.call("read", {"path": target}).text:
        assert time.monotonic() < deadline, f"the kernel did not see {text!r} in {target}"
        time.sleep(0.1)


def test_the_servers_save_of_a_live_notebook_is_not_a_bash_calls_change(
    collab: CollabServer, live: tuple[str, Any, Person]
) -> None:
    name, agent, person = live
    _edit(agent, name, "two", person.sources()[1].split("\n")[0], "b = 7")
    person.wait_for(lambda: person.sources()[1].startswith("b = 7"))
    r = agent.call("bash", {"command": "sleep 2; echo x > by_bash.txt"})  # the save lands meanwhile
    assert r.ok, r.text
    import json
    import time

    deadline = time.monotonic() + 10
    while "b = 7" not in json.dumps(collab.saved(name)):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert [f["path"] for f in r.details["files"]] == ["by_bash.txt"], r.details["files"]


@pytest.mark.browser
def test_an_edit_in_an_open_tab_is_undone_in_the_tab(lab: Any) -> None:  # noqa: F811
    """The open model (no jupyter-collaboration): the undo goes back through the tab's model,
    and is refused naming the cell once the person changed it."""
    from tests.notebook_live.test_open_model import _cell_text, _has_tab, _wait

    lab.open("tab.ipynb", ["t = 1", "u = 2"])
    real = lab.server.root / "tab.ipynb"
    agent = client.connect(str(lab.connection_file()), label="tab agent",
                           timeout=30)
    try:
        _wait(lambda: _has_tab(agent, real), "the tab's notebooks report reaching the kernel")
        read = agent.call("read", {"path": "tab.ipynb"})
        assert read.ok, read.text
        first, second = read.details["cell_ids"][:2]
        r = _edit(agent, "tab.ipynb", second, "u = 2", "u = 20")
        _wait(lambda: _cell_text(lab, 1) == "u = 20", "the agent's edit in the tab")
        assert r.details.get("change"), r.details
        u = agent.call("undo", {"change": r.details["change"]})
        assert u.ok, u.text
        _wait(lambda: _cell_text(lab, 1) == "u = 2", "the undo in the tab")
        assert _cell_text(lab, 0) == "t = 1" and lab.page.locator(".jp-Dialog").count() == 0
        again = _edit(agent, "tab.ipynb", first, "t = 1", "t = 10")
        _wait(lambda: _cell_text(lab, 0) == "t = 10", "the second edit in the tab")
        editor = lab.page.locator(".jp-Notebook .jp-Cell").nth(0).locator(".jp-Cell-inputArea .cm-content")
        editor.click()
        lab.page.keyboard.press("End")
        lab.page.keyboard.type(" + 1", delay=30)
        _wait(lambda: _cell_text(lab, 0) == "t = 10 + 1", "the person's typing")
        refused = agent.call("undo", {"change": again.details["change"]})
        assert not refused.ok and f"tab.ipynb#{first}" in refused.text, refused.text
        assert _cell_text(lab, 0) == "t = 10 + 1"
    finally:
        agent.close()
