"""Undo in a real kernel a Jupyter server (with jupyter-collaboration) started: an agent's
``undo`` under approval mode ``review`` waits for a person's Accept."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kli import client
from tests.notebook_live.conftest import CollabServer, Person

pytestmark = [pytest.mark.kernel, pytest.mark.notebook_live]

WS = "get_ipython().kernel.workspace"


@pytest.fixture(scope="module")
def live(collab: CollabServer) -> Iterator[tuple[str, Any, Person]]:
    name = collab.new_notebook("undo.ipynb", [("one", "a = 1"), ("two", "b = 2")])
    kernel_id = collab.start_session(name)
    agent = client.connect_server(collab.url, kernel_id=kernel_id, timeout=120)
    person = Person(collab, name)
    try:
        yield name, agent, person
    finally:
        person.close()
        agent.close()


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
        out = _in_kernel(agent, f"r = approval.accept_any({WS}, {pid!r}, 'ui')\n(r.ok, r.text)")
        assert "(True, \"Accepted proposal" in out, out
        assert not (collab.root / "held.txt").exists()
    finally:
        _in_kernel(agent, f"approval.set_mode({WS}, 'auto')")
