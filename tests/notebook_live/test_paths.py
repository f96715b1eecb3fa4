"""Which document an edit goes to (``LiveNotebooks.route``), through real servers: another
notebook open on the collaboration server goes live too; a notebook nobody has open, and any
notebook of a server without jupyter-collaboration, is written on disk at once."""

from __future__ import annotations

import urllib.error
from typing import Any

import pytest

from kli import client
from kli.tools.file.anchors import line_hash
from tests.notebook_live.conftest import CollabServer, Person

pytestmark = [pytest.mark.kernel, pytest.mark.notebook_live]

ROUTES = ("import os\n{os.path.basename(k): (r.path, r.reason) for k, r in "
          "get_ipython().kernel.workspace.notebooks.routes.items()}")


def _edit(agent: Any, name: str, cell: str, old: str, new: str) -> Any:
    assert agent.call("read", {"path": name}).ok
    return agent.call("edit", {"input": f"@@ {name}#{cell}\n= 1:{line_hash(old)}\n~{new}\n"})


def test_an_open_notebook_goes_live_and_a_closed_one_to_its_file(collab: CollabServer) -> None:
    own = collab.new_notebook("own.ipynb", [("a", "own = 1")])
    other = collab.new_notebook("other.ipynb", [("b", "other = 1")])
    closed = collab.new_notebook("closed.ipynb", [("c", "closed = 1")])
    agent = client.connect_server(collab.url, kernel_id=collab.start_session(own), timeout=60)
    collab.start_session(other)  # open elsewhere: it has a session (its own kernel)
    person = Person(collab, other)
    try:
        assert _edit(agent, other, "b", "other = 1", "other = 2").ok
        person.wait_for(lambda: person.sources() == ["other = 2"])
        r = _edit(agent, closed, "c", "closed = 1", "closed = 2")
        assert r.ok, r.text
        assert "".join(collab.saved(closed)["cells"][0]["source"]) == "closed = 2"  # at once
        routes = agent.call("eval", {"code": ROUTES}).text
        assert "'other.ipynb': ('ydoc'" in routes and "'closed.ipynb': ('disk'" in routes, routes
    finally:
        person.close()
        agent.close()


def test_without_jupyter_collaboration_the_kernels_own_notebook_is_edited_on_disk(
    plain_server: CollabServer,
) -> None:
    with pytest.raises(urllib.error.HTTPError):
        plain_server.api("PUT", "/api/collaboration/session/x.ipynb",
                         {"format": "json", "type": "notebook"})
    name = plain_server.new_notebook("plain.ipynb", [("p", "p = 1")])
    agent = client.connect_server(plain_server.url, kernel_id=plain_server.start_session(name),
                                  timeout=60)
    try:
        r = _edit(agent, name, "p", "p = 1", "p = 2")
        assert r.ok, r.text
        assert "".join(plain_server.saved(name)["cells"][0]["source"]) == "p = 2"
        routes = agent.call("eval", {"code": ROUTES}).text
        assert "'plain.ipynb': ('disk'" in routes and "collaboration" in routes, routes
    finally:
        agent.close()
