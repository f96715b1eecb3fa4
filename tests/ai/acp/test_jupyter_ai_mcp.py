"""kli's tools on Jupyter AI's own MCP endpoint (issue 25), through real components: a Jupyter
server with Jupyter AI 3.2 and jupyter-server-mcp 0.3 (its tokenless FastMCP server on its own
port), a kli kernel the server starts for a notebook, ``kli ai enable`` run as a person runs it,
and MCP clients speaking streamable HTTP to that endpoint with the identity headers Jupyter AI's
persona manager gives a chat's agent (``X-Jupyter-Chat-Id``, ``X-JupyterAI-Persona-Id``). The
activity panel is a real ``kli.ui`` comm on the kernel. No agent and no model take part here
(tests/ai/acp/test_acp_agent.py has an agent)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.ai.acp.conftest import AiServer, kli_ai
from tests.jupyter_server import ready_client
from tests.kernel.conftest import Harness

pytestmark = pytest.mark.timeout(600)

CELLS = [("c1", "x = 1\nprint(x)"), ("c2", "y = 2")]


def panel(server: AiServer, kernel_id: str) -> Harness:
    """The activity panel's view of the kernel: a ``kli.ui`` comm, as the labextension opens."""
    kc = ready_client(server.connection_file(kernel_id))
    h = Harness(None, kc, server.root)
    h.execute("pass")
    h.settle(0.1)
    return h


@pytest.fixture(scope="module")
def notebook(ai_server: AiServer) -> tuple[str, str]:
    name = "chat_nb.ipynb"
    ai_server.notebook(name, CELLS)
    return name, ai_server.open(name)


def test_before_kli_ai_enable_the_endpoint_offers_no_kli_tool_and_refuses_a_call(
        off_server: AiServer) -> None:
    chat = off_server.agent(uuid.uuid4().hex)
    names = {t.name for t in chat.tools()}
    assert "read_notebook" in names  # Jupyter AI's own tools are there: the endpoint answers
    assert not names & {"read", "edit", "cells", "run_cells", "bash", "eval"}
    text, is_error = chat.call("read", {"path": "x.ipynb"})
    assert is_error and "Unknown tool" in text, text
    status = kli_ai(off_server.env, "status")
    assert status.returncode == 0 and status.stdout.startswith("Off"), status.stdout


def test_kli_ai_enable_writes_one_file_and_disable_removes_it(tmp_path: Path) -> None:
    import os

    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "cfg"), JUPYTER_PLATFORM_DIRS="1",
               JUPYTER_DATA_DIR=str(tmp_path / "data"))
    on = kli_ai(env, "enable")
    path = tmp_path / "cfg" / "jupyter_server_config.d" / "kli-jupyter-ai.json"
    key = tmp_path / "data" / "kli" / "jupyter-ai.key"
    assert on.returncode == 0 and str(path) in on.stdout, on.stdout + on.stderr
    assert json.loads(path.read_text()) == {"KliJupyterAI": {"mcp_tools": True}}
    assert sorted(p.name for p in (tmp_path / "cfg").rglob("*")) == [
        "jupyter_server_config.d", "kli-jupyter-ai.json"]  # nothing else, no temporary left
    assert sorted(p.name for p in (tmp_path / "data").rglob("*")) == ["jupyter-ai.key", "kli"]
    assert key.stat().st_mode & 0o777 == 0o600  # the key: this user's alone
    header = json.loads(kli_ai(env, "key").stdout)
    assert header == {"name": "X-Kli-Key", "value": key.read_text().strip()}
    assert kli_ai(env, "status").stdout.startswith("On")
    assert kli_ai(env, "enable").returncode == 0 and json.loads(kli_ai(env, "key").stdout) == header
    off = kli_ai(env, "disable")
    assert off.returncode == 0 and f"Removed {path}" in off.stdout, off.stdout
    assert not path.exists() and not key.exists()
    assert kli_ai(env, "status").stdout.startswith("Off")
    assert kli_ai(env, "key").returncode == 1


def test_after_enable_the_tools_are_the_registrys_with_kli_notebook_rules(
        ai_server: AiServer) -> None:
    from kli.kernel.ai.mcp_route import SESSION_NAME
    from kli.kernel.mcp.instructions import describe, instructions
    from kli.tools.registry import REGISTRY

    chat = ai_server.agent(uuid.uuid4().hex)
    tools = {t.name: t for t in chat.tools()}
    kli_specs = [t.spec() for t in REGISTRY.tools.values() if t.profile == "kli"]
    for spec in kli_specs:
        tool = tools[spec["name"]]
        assert tool.description == describe(spec)
        schema = tool.inputSchema
        assert sorted(schema["properties"]) == sorted(spec["parameters"]["properties"])
        assert sorted(schema.get("required", [])) == sorted(spec["parameters"].get("required", []))
    assert "read_notebook" in tools  # beside Jupyter AI's own
    assert "Not for notebooks (.ipynb)" in tools["write"].description
    given = chat.instructions()
    assert instructions("kli", session=SESSION_NAME) in given
    assert "Never rewrite a .ipynb file whole" in given and "edit_cell" in given


def test_two_chats_get_their_own_kli_sessions_named_for_the_chat(
        ai_server: AiServer, notebook: tuple[str, str]) -> None:
    name, kernel_id = notebook
    a, b = uuid.uuid4().hex, uuid.uuid4().hex
    chat_a, chat_b = ai_server.agent(a), ai_server.agent(b)
    text, is_error = chat_a.call("read", {"path": f"{name}#c2"})
    assert not is_error, text
    row = next(line for line in text.splitlines() if line.endswith("|y = 2"))
    anchor = row.split("|")[0]
    patch = f"@@ {name}#c2\n= {anchor}\n~y = 3\n"
    # chat B never read the cell: A's anchors are not B's
    text_b, err_b = chat_b.call("edit", {"input": patch})
    assert err_b and "read" in text_b.lower(), text_b
    assert "y = 2" in json.dumps(json.loads((ai_server.root / name).read_text())["cells"][1])
    text_a, err_a = chat_a.call("edit", {"input": patch})
    assert not err_a, text_a
    ui = panel(ai_server, kernel_id)
    try:
        _, hello = ui.open_comm("kli.ui", {"replay": 50})
        labels = {s["label"] for s in hello["sessions"]}
        assert f"Jupyter AI chat {a}" in labels and f"Jupyter AI chat {b}" in labels, labels
        sessions = {s["label"]: s["id"] for s in hello["sessions"]}
        edits = [e for e in hello["events"] if e.get("tool") == "edit"]
        assert {e["session_label"] for e in edits} == {f"Jupyter AI chat {a}",
                                                       f"Jupyter AI chat {b}"}
        assert sessions[f"Jupyter AI chat {a}"] != sessions[f"Jupyter AI chat {b}"]
        assert all(e["source"] == "agent" for e in edits)
    finally:
        ui.kc.stop_channels()


def _cell_on_disk(path: Path, index: int) -> str:
    """The source of cell ``index`` of the notebook file at ``path``."""
    source = json.loads(path.read_text())["cells"][index]["source"]
    return "".join(source) if isinstance(source, list) else str(source)


def test_under_review_a_chats_edit_is_held_and_only_its_own_chat_sees_the_proposal(
        ai_server: AiServer, notebook: tuple[str, str]) -> None:
    name, kernel_id = notebook
    a, b = uuid.uuid4().hex, uuid.uuid4().hex
    chat_a, chat_b = ai_server.agent(a), ai_server.agent(b)
    ui = panel(ai_server, kernel_id)
    comm, _ = ui.open_comm("kli.ui", {"replay": 0})
    try:
        ui.request(comm, {"op": "approval", "mode": "review", "kind": "file"})
        text, is_error = chat_a.call("read", {"path": f"{name}#c1"})
        assert not is_error, text
        row = next(line for line in text.splitlines() if line.endswith("|x = 1"))
        before = _cell_on_disk(ai_server.root / name, 0)
        held, _ = chat_a.call("edit", {"input": f"@@ {name}#c1\n= {row.split('|')[0]}\n~x = 10\n"})
        assert "waits for a person's review" in held, held
        pid = held.split("Proposal ", 1)[1].split()[0]
        # nothing written to the held cell (the file itself may still change: an earlier
        # test's edit of another cell is saved by the live document when it saves)
        assert _cell_on_disk(ai_server.root / name, 0) == before == CELLS[0][1]
        pending = ui.request(comm, {"op": "replay", "limit": 0})["pending"]
        mine = [c for c in pending if c["candidate"] == pid]
        assert mine and mine[0]["session_label"] == f"Jupyter AI chat {a}", pending
        # another chat cannot discard (or otherwise decide) chat A's proposal
        other, err = chat_b.call("edit", {"reject_repair": pid})
        assert err, other
        assert pid in {c["candidate"] for c in ui.request(comm, {"op": "replay", "limit": 0})["pending"]}
        done = ui.request(comm, {"op": "accept", "candidate": pid})  # the person's Accept
        assert done.get("ok"), done
        after, _ = chat_a.call("read", {"path": f"{name}#c1"})  # the live document's cell
        assert "|x = 10" in after and "|x = 1\n" not in after, after
    finally:
        ui.request(comm, {"op": "approval", "mode": "auto"})
        ui.close_comm(comm)
        ui.kc.stop_channels()


def test_a_call_without_a_chat_header_gets_a_session_of_its_own(
        ai_server: AiServer, notebook: tuple[str, str]) -> None:
    name, _ = notebook
    chat_a, anon = ai_server.agent(uuid.uuid4().hex), ai_server.agent(None)
    text, is_error = chat_a.call("read", {"path": f"{name}#c2"})
    assert not is_error, text
    row = next(line for line in text.splitlines() if "|y = " in line)
    edit, err = anon.call("edit", {"input": f"@@ {name}#c2\n= {row.split('|')[0]}\n~y = 4\n"})
    assert err, edit  # the chat's anchors are not a local stranger's




def test_the_nearest_switch_on_the_jupyter_config_path_wins(tmp_path: Path) -> None:
    """jupyter_core's order: $JUPYTER_CONFIG_PATH, the user's dir, the environment's, the
    system's."""
    import os

    user, extra = tmp_path / "user", tmp_path / "extra"
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(user), JUPYTER_CONFIG_PATH=str(extra),
               JUPYTER_PLATFORM_DIRS="1")
    for folder, value in ((extra, False), (user, True)):
        (folder / "jupyter_server_config.d").mkdir(parents=True)
        (folder / "jupyter_server_config.d" / "kli-jupyter-ai.json").write_text(
            json.dumps({"KliJupyterAI": {"mcp_tools": value}}))
    status = kli_ai(env, "status").stdout
    assert status.startswith("Off") and "extra" in status, status
    turned = kli_ai(env, "enable")  # writes the user's file, which the nearer one overrides
    assert turned.returncode == 1 and "nearer" in turned.stdout, turned.stdout
    (extra / "jupyter_server_config.d" / "kli-jupyter-ai.json").unlink()
    assert kli_ai(env, "status").stdout.startswith("On")
    off = kli_ai(env, "disable")
    assert off.returncode == 0 and kli_ai(env, "status").stdout.startswith("Off"), off.stdout
