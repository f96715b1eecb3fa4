"""A call is charged only with what it did, in a real kernel a real Jupyter server (with
jupyter-collaboration) started: while an agent's ``bash`` runs, the server saves the notebook's
live document (a person types in it) and writes its own files — the collaboration store, a
notebook checkpoint (the chat file: tests/ai/acp/test_chat_notebook.py) — and the call records
only the file it wrote; an
undo of a change that holds a file the running server owns leaves that file alone and says
which program owns it (docs/review.md, "Files the server writes")."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.notebook_live.conftest import SAVE_DELAY, CollabServer, Person, live_notebook

pytestmark = [pytest.mark.kernel, pytest.mark.notebook_live]


@pytest.fixture(scope="module")
def served(collab: CollabServer) -> Iterator[tuple[str, Any, Person]]:
    with live_notebook(collab, "charged.ipynb", [("one", "a = 1")]) as live:
        yield live


def test_a_bash_call_is_not_charged_with_what_the_server_saves_while_it_runs(
    collab: CollabServer, served: tuple[str, Any, Person]
) -> None:
    name, agent, person = served
    nb_file = collab.root / name
    saved_before = nb_file.read_bytes()
    # The server's own files, each written by the server while the call runs: the notebook (the
    # live document's autosave of what the person types), jupyter-collaboration's store (the
    # typing's updates), a checkpoint (the contents API). The chat file: tests/ai/acp/
    # test_chat_notebook.py (jupyterlab-chat runs in Jupyter AI's environment).
    store = collab.root / ".jupyter_ystore.db"
    checkpoint = collab.root / ".ipynb_checkpoints" / "charged-checkpoint.ipynb"
    before = {p: p.stat().st_ctime_ns if p.exists() else 0 for p in (nb_file, store, checkpoint)}

    made: list[Any] = []

    def server_side() -> None:
        time.sleep(0.3)
        person.type_into(0, 0, "# typed while the agent ran\n")  # the server saves and stores it
        made.append(collab.api("POST", f"/api/contents/{name}/checkpoints"))

    writer = threading.Thread(target=server_side)
    writer.start()
    r = agent.call("bash", {"command": f"sleep {SAVE_DELAY * 4 + 1} && echo mine > agent.txt"})
    writer.join()
    assert r.ok, r.text
    after = {p: p.stat().st_ctime_ns if p.exists() else 0 for p in before}
    assert made and [p.name for p in before if after[p] == before[p]] == [], made
    assert nb_file.read_bytes() != saved_before  # the server did save the notebook meanwhile
    assert [f["path"] for f in r.details["files"]] == ["agent.txt"], r.details["files"]
    assert ".jupyter_ystore.db" not in r.text and name not in r.text and "checkpoint" not in r.text
    changes = agent.call("changes", {})
    recorded = next(c for c in changes.details["changes"] if c["id"] == r.details["change"])
    assert [f["path"] for f in recorded["files"]] == ["agent.txt"]


def test_undo_never_writes_a_file_the_running_server_owns_and_names_the_owner(
    collab: CollabServer, served: tuple[str, Any, Person]
) -> None:
    _name, agent, _person = served
    # A change that holds the chat file (a tool's own write of it is recorded, as a bash
    # of an earlier version charged the chat's save) and a file of its own.
    w = agent.call("write", {"path": "talk.chat", "content": '{"messages": [1]}'})
    assert w.ok, w.text
    u = agent.call("undo", {"change": w.details["change"]})
    assert not u.ok and u.details["error"] == "server_owned", u.text
    assert "talk.chat is written by the chat (jupyterlab-chat, Jupyter AI) of the running " \
           "Jupyter server" in u.text
    assert (collab.root / "talk.chat").read_text() == '{"messages": [1]}'
