"""An agent's edits land in the server's shared Y document (jupyter-collaboration) of the
notebook the kernel was started for: seen by another client of the room at once, saved by the
server, with no browser open; stale is judged against that live document."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from kli.tools.file.anchors import line_hash
from tests.notebook_live.conftest import CollabServer, Person, live_notebook

pytestmark = [pytest.mark.kernel, pytest.mark.notebook_live]


CELLS = [("first", "x = 1\nprint(x)"), ("second", "y = 2")]


@pytest.fixture(scope="module")
def session(collab: CollabServer) -> Iterator[tuple[str, Any, Person]]:
    """One live notebook the tests below share: each reads the cells as it finds them, so none
    depends on which of the others ran before it (or on another xdist worker)."""
    with live_notebook(collab, "live.ipynb", CELLS, timeout=60) as live:
        yield live


@pytest.fixture
def own_session(collab: CollabServer, request: pytest.FixtureRequest
                ) -> Iterator[tuple[str, Any, Person]]:
    """A live notebook of the test's own, as ``CELLS`` made it (a test that needs the cells as
    made, or that adds one)."""
    with live_notebook(collab, f"{request.node.name[:40]}.ipynb", CELLS, timeout=60) as live:
        yield live


def test_an_agent_edit_lands_in_the_live_document_and_the_server_saves_it(
    collab: CollabServer, own_session: tuple[str, Any, Person]
) -> None:
    name, agent, person = own_session
    read = agent.call("read", {"path": name})
    assert read.ok, read.text
    patch = f"@@ {name}#first\n= 1:{line_hash('x = 1')}\n~x = 10\n"
    edited = agent.call("edit", {"input": patch})
    assert edited.ok, edited.text
    person.wait_for(lambda: person.sources()[0] == "x = 10\nprint(x)")
    assert person.sources()[1] == "y = 2"
    # the kernel's store took the live path for its own notebook (not the file)
    route = agent.call("eval", {"code": "import os\n[(os.path.basename(k), r.path) for k, r in "
                                        "get_ipython().kernel.workspace.notebooks.routes.items()]"})
    assert f"('{name}', 'ydoc')" in route.text, route.text
    deadline = time.monotonic() + 15
    while "".join(collab.saved(name)["cells"][0]["source"]) != "x = 10\nprint(x)":
        assert time.monotonic() < deadline, collab.saved(name)["cells"][0]
        time.sleep(0.2)
    import nbformat

    nbformat.validate(nbformat.reads((collab.root / name).read_text(), 4))


def test_a_cell_the_person_changed_in_the_live_document_is_refused_and_kept(
    session: tuple[str, Any, Person]
) -> None:
    name, agent, person = session
    assert agent.call("read", {"path": name}).ok
    first, second = person.sources()
    person.type_into(0, 0, "# mine\n")  # the person types into the cell the agent read
    # the kernel sees the person's change through the room (the server relays it)
    deadline = time.monotonic() + 10
    while not agent.call("read", {"path": f"{name}#first"}).text.count("# mine"):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    line = first.split("\n")[0]
    stale = agent.call("edit", {"input": f"@@ {name}#first\n= 1:{line_hash(line)}\n~z = 0\n"})
    assert not stale.ok and stale.details["error"] == "stale", stale.text
    assert person.sources()[0] == "# mine\n" + first
    # the other cell, untouched by the person, still takes the agent's edit
    fresh = agent.call("edit", {"input": f"@@ {name}#second\n= 1:{line_hash(second)}\n~y = 3\n"})
    assert fresh.ok, fresh.text
    person.wait_for(lambda: person.sources()[1] == "y = 3")
    assert person.sources()[0] == "# mine\n" + first


def test_the_persons_typing_in_another_cell_between_read_and_edit_is_kept(
    session: tuple[str, Any, Person]
) -> None:
    name, agent, person = session
    read = agent.call("read", {"path": name})
    assert read.ok
    first, second = person.sources()
    person.type_into(1, len(second), "  # typed")
    person.wait_for(lambda: "# typed" in person.sources()[1])
    line = first.split("\n")[-1]
    n = len(first.split("\n"))
    edited = agent.call("edit", {"input": f"@@ {name}#first\n= {n}:{line_hash(line)}\n~print(x, 1)\n"})
    assert edited.ok, edited.text
    person.wait_for(lambda: person.sources()[0].endswith("print(x, 1)"))
    assert person.sources()[1] == second + "  # typed"


def test_cells_inserted_by_the_agent_appear_in_the_live_document(
    own_session: tuple[str, Any, Person]
) -> None:
    name, agent, person = own_session
    assert agent.call("read", {"path": name}).ok
    r = agent.call("cells", {"path": name, "op": "insert", "where": "after", "anchor": "first",
                             "source": "inserted = True"})
    assert r.ok, r.text
    person.wait_for(lambda: "inserted = True" in person.sources())
    assert person.sources().index("inserted = True") == 1


def test_under_review_an_accepted_edit_of_the_live_document_is_applied_not_refused(
    session: tuple[str, Any, Person]
) -> None:
    """A held cell edit of an open notebook is judged on Accept against the live document (by
    the store's commit), not against the .ipynb file's bytes, which never equal the room's."""
    name, agent, person = session
    # switched in the kernel by the test: the review magics refuse inside an agent's call
    switch = agent.call("eval", {"code": "from kli.tools.core import approval\n"
                                  "approval.set_mode(get_ipython().kernel.workspace, "
                                  "'review', 'file')"})
    assert switch.ok, switch.text
    try:
        read = agent.call("read", {"path": f"{name}#second"})
        assert read.ok, read.text
        row = next(r for r in read.text.splitlines() if r.startswith("1:"))
        current = row.split("|", 1)[1]  # what the agent saw (the person's copy may lag)
        person.wait_for(lambda: current in person.sources())
        held = agent.call("edit", {"input": f"@@ {name}#second\n= 1:{line_hash(current)}\n"
                                            "~y = 'accepted'\n"})
        pid = held.details.get("proposal") or held.details.get("candidate")
        assert pid, held.text
        assert current in person.sources()  # nothing landed while it waits
        accepted = agent.call("eval", {"code": (
            "from kli.tools.core import approval\n"
            "ws = get_ipython().kernel.workspace\n"
            f"r = approval.accept(ws, ws.find_candidate({pid!r}), 'person')\n"
            "print(r.ok, r.details.get('error'))")})
        assert accepted.ok and "True None" in accepted.text, accepted.text
        person.wait_for(lambda: "y = 'accepted'" in person.sources())
    finally:
        agent.call("eval", {"code": "from kli.tools.core import approval\napproval.set_mode("
                                    "get_ipython().kernel.workspace, 'auto')"})
