"""The open model's messages on ``kli.ui``, without a browser: a real Jupyter server without
jupyter-collaboration starts the kli kernel for a notebook; a scripted ``kli.ui`` client stands
for the extension's tab (it reports the notebook open and answers ``model_read`` /
``model_apply`` by hand), an agent comm on the same kernel calls the tools. The browser path
itself is tests/notebook_live/test_open_model.py."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kli.tools.file.anchors import line_hash
from tests.kernel.conftest import Harness
from tests.notebook_live.conftest import CollabServer

pytestmark = [pytest.mark.kernel, pytest.mark.notebook_live]


@pytest.fixture
def tab(plain_server: CollabServer) -> Iterator[tuple[Harness, str, str, str]]:
    """A harness on the server's kernel for ``t.ipynb``: (harness, kli.ui comm, agent comm,
    cell id)."""
    from jupyter_client import BlockingKernelClient

    name = plain_server.new_notebook("t.ipynb", [("c1", "t = 1"), ("c2", "u = 2")])
    kernel_id = plain_server.start_session(name)
    kc = BlockingKernelClient(connection_file=str(plain_server.connection_file(kernel_id)))
    kc.load_connection_file()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    h = Harness(None, kc, plain_server.root)
    h.execute("pass")
    try:
        ui, hello = h.open_comm("kli.ui", {"replay": 0})
        assert hello["op"] == "hello"
        agent, _ = h.open_comm("kli.agent", {"label": "protocol agent"})
        yield h, ui, agent, "c1"
    finally:
        kc.stop_channels()
        plain_server.close_sessions()


def _next_on(h: Harness, comm: str, op: str, since: int) -> dict[str, Any]:
    msg = h.wait_for(lambda m: m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == comm
                     and m["content"]["data"].get("op") == op, since=since)
    data: dict[str, Any] = msg["content"]["data"]
    return data


def _result(h: Harness, agent: str, rid: str, since: int) -> dict[str, Any]:
    msg = h.wait_for(lambda m: m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == agent
                     and m["content"]["data"].get("id") == rid, since=since)
    data: dict[str, Any] = msg["content"]["data"]
    return data


def _until_reported(h: Harness, agent: str, want: bool) -> None:
    code = ("import os\nprint(get_ipython().kernel.workspace.notebooks.models.has("
            "os.path.realpath('t.ipynb')))")
    deadline = time.monotonic() + 20
    while h.call(agent, "eval", {"code": code})["text"].strip().splitlines()[-1] != str(want):
        assert time.monotonic() < deadline, f"the report never became {want}"
        time.sleep(0.1)


def _model(server: CollabServer, first: str) -> dict[str, Any]:
    """The notebook as the 'tab' has it: the file with the person's unsaved first cell."""
    nb = server.saved("t.ipynb")
    nb = copy.deepcopy(nb)
    nb["cells"][0]["source"] = first
    return dict(nb)


def test_a_tab_that_reports_the_notebook_is_read_and_edited_through_its_messages(
    plain_server: CollabServer, tab: tuple[Harness, str, str, str],
) -> None:
    h, ui, agent, cell = tab
    h.send(ui, {"v": 1, "op": "notebooks", "paths": ["t.ipynb"]})
    _until_reported(h, agent, True)
    start = len(h.seen)
    h.send(agent, {"v": 1, "op": "call", "id": "r1", "tool": "read", "args": {"path": "t.ipynb"}})
    ask = _next_on(h, ui, "model_read", start)
    assert ask["path"] == "t.ipynb" and isinstance(ask["id"], str)
    h.send(ui, {"v": 1, "op": "model_reply", "id": ask["id"], "ok": True, "text": "read",
                "notebook": _model(plain_server, "typed = 1")})
    read = _result(h, agent, "r1", start)
    assert read["ok"] and "typed = 1" in read["text"], read["text"]  # the tab's text, unsaved

    start = len(h.seen)
    patch = f"@@ t.ipynb#{cell}\n= 1:{line_hash('typed = 1')}\n~typed = 2\n"
    h.send(agent, {"v": 1, "op": "call", "id": "e1", "tool": "edit", "args": {"input": patch}})
    ask = _next_on(h, ui, "model_read", start)
    h.send(ui, {"v": 1, "op": "model_reply", "id": ask["id"], "ok": True, "text": "read",
                "notebook": _model(plain_server, "typed = 1")})
    apply = _next_on(h, ui, "model_apply", start)
    (plan,) = apply["notebooks"]
    assert plan["path"] == "t.ipynb"
    assert plan["expect"] == {cell: {"cell_type": "code", "source": "typed = 1"}}
    assert [(u["id"], u["keys"], u["cell"]["source"]) for u in plan["update"]] == [
        (cell, ["source"], "typed = 2")]  # only the edited cell; c2 is not in the plan
    assert plan["remove"] == [] and plan["place"] == [] and plan["order"] == ["c1", "c2"]
    h.send(ui, {"v": 1, "op": "model_reply", "id": apply["id"], "ok": True, "saved": True,
                "text": "applied"})
    edit = _result(h, agent, "e1", start)
    assert edit["ok"], edit["text"]
    assert "".join(plain_server.saved("t.ipynb")["cells"][0]["source"]) == "t = 1"  # not on disk

    # The tab refuses: the person changed the cell in between. The edit is refused as stale.
    start = len(h.seen)
    patch = f"@@ t.ipynb#{cell}\n= 1:{line_hash('typed = 2')}\n~typed = 3\n"
    h.send(agent, {"v": 1, "op": "call", "id": "e2", "tool": "edit", "args": {"input": patch}})
    ask = _next_on(h, ui, "model_read", start)
    h.send(ui, {"v": 1, "op": "model_reply", "id": ask["id"], "ok": True, "text": "read",
                "notebook": _model(plain_server, "typed = 2")})
    apply = _next_on(h, ui, "model_apply", start)
    h.send(ui, {"v": 1, "op": "model_reply", "id": apply["id"], "ok": False, "error": "stale",
                "path": "t.ipynb", "cell": cell,
                "text": f"cell {cell} was changed in the open tab since it was read"})
    stale = _result(h, agent, "e2", start)
    assert not stale["ok"] and stale["details"]["error"] == "stale", stale["text"]
    assert "changed in the open tab" in stale["text"], stale["text"]

    # The tab answers that it has closed it (its report not sent yet): the read is the file's.
    start = len(h.seen)
    h.send(agent, {"v": 1, "op": "call", "id": "r2", "tool": "read", "args": {"path": "t.ipynb"}})
    ask = _next_on(h, ui, "model_read", start)
    h.send(ui, {"v": 1, "op": "model_reply", "id": ask["id"], "ok": False, "error": "not_open",
                "path": "t.ipynb", "text": "t.ipynb is not open in this browser"})
    read = _result(h, agent, "r2", start)
    assert read["ok"] and "t = 1" in read["text"] and "typed" not in read["text"], read["text"]
    h.send(ui, {"v": 1, "op": "notebooks", "paths": ["t.ipynb"]})  # open again, for below
    _until_reported(h, agent, True)

    # The tab closes it: the next read is the file's. (The report and the agent's call travel
    # on different threads of the kernel: wait until the report is in.)
    h.send(ui, {"v": 1, "op": "notebooks", "paths": []})
    _until_reported(h, agent, False)
    start = len(h.seen)
    read = h.call(agent, "read", {"path": "t.ipynb"})
    assert read["ok"] and "t = 1" in read["text"] and "typed" not in read["text"]
    assert not [d for d in h.comm_data(ui, start) if d.get("op") == "model_read"]


def test_malformed_open_model_messages_are_ignored_and_the_kernel_keeps_answering(
    tab: tuple[Harness, str, str, str],
) -> None:
    h, ui, agent, _ = tab
    for bad in ({"op": "notebooks"}, {"op": "notebooks", "paths": "t.ipynb"},
                {"op": "notebooks", "paths": [1, None, {"x": 1}, "../outside.ipynb"]},
                {"op": "model_reply"}, {"op": "model_reply", "id": "m999", "ok": True},
                {"op": "model_reply", "id": ["x"]}, {"op": "notebooks", "paths": ["a.txt"]}):
        h.send(ui, {"v": 1, **bad})
    h.settle(0.3)
    h.alive_check()
    outside = h.call(agent, "eval", {"code": "import os\nm = get_ipython().kernel.workspace"
                                             ".notebooks.models\nprint(m.has(os.path.realpath("
                                             "'../outside.ipynb')))"})
    assert outside["text"].strip().splitlines()[-1] == "False", outside["text"]
    read = h.call(agent, "read", {"path": "t.ipynb"})  # still the file: nothing was reported
    assert read["ok"], read["text"]
    routes = h.call(agent, "eval", {"code": "import os\nprint(get_ipython().kernel.workspace"
                                            ".notebooks.routes[os.path.realpath('t.ipynb')]"
                                            ".path)"})
    assert routes["text"].strip().splitlines()[-1] == "disk", json.dumps(routes)
