"""An agent of a Jupyter AI chat edits a notebook through kli's tools (issue 25).

What is real: the Jupyter server with Jupyter AI 3.2; its persona manager and its ACP client
(``jupyter_ai_acp_client.BaseAcpPersona``, the class of the Claude Code, Codex and Gemini CLI
personas) starting the agent as a subprocess and speaking ACP to it over stdio; the MCP server
list the persona hands the agent at ``session/new``, with the ``X-Jupyter-Chat-Id`` and
``X-JupyterAI-Persona-Id`` headers Jupyter AI stamps on it; jupyter-server-mcp's tokenless HTTP
endpoint; kli's tools on it after ``kli ai enable``; the kli kernel of the notebook; the
message sent through Jupyter AI's headless chat route (``POST /api/ai/message/<persona>``),
which makes a throwaway chat per message.

What is not real: the agent. In its place tests/ai/acp/scripted/scripted_acp_agent.py, a real
ACP agent over the same ``agent-client-protocol`` package, follows a fixed script instead of
asking a model; it checks what the ACP client hands an agent (the headers, the tool list). Real
agent CLIs — Codex and Claude Code, their models scripted — run in test_codex_agent.py and
test_claude_agent.py. The persona is registered
through a ``jupyter_ai.personas`` entry point written by this test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ai.acp.conftest import AiServer, start_ai_server
from tests.ai.acp.test_jupyter_ai_mcp import panel

pytestmark = pytest.mark.timeout(600)

SCRIPTED = Path(__file__).resolve().parent / "scripted"


@pytest.fixture(scope="module")
def agent_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AiServer]:
    base = tmp_path_factory.mktemp("acp")
    site = base / "site"
    info = site / "kli_scripted_persona-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: kli-scripted-persona\n"
                                   "Version: 0\n")
    (info / "entry_points.txt").write_text(
        "[jupyter_ai.personas]\nscripted = kli_scripted_persona:ScriptedAcpPersona\n")
    with start_ai_server(base, enable=True, pythonpath=[site, SCRIPTED],
                         mcp_settings=True) as server:
        yield server


def say(server: AiServer, text: str) -> str:
    return str(server.api("POST", "/api/ai/message/ScriptedAgent", {"message": text},
                              timeout=300)["response"])


def test_a_chats_acp_agent_edits_a_notebook_cell_through_kli_in_a_session_of_that_chat(
        agent_server: AiServer) -> None:
    name = "agent_nb.ipynb"
    agent_server.notebook(name, [("c1", "a = 1"), ("c2", "b = 2")])
    kernel_id = agent_server.open(name)
    first = say(agent_server, f"edit {name} c2 b = 2 => b = 3")
    assert "headers: X-Jupyter-Chat-Id, X-JupyterAI-Persona-Id, X-Kli-Key" in first, first
    assert f"edit result: Edited {name}#c2" in first, first
    second = say(agent_server, f"edit {name} c1 a = 1 => a = 5")  # another (throwaway) chat
    assert f"edit result: Edited {name}#c1" in second, second
    ui = panel(agent_server, kernel_id)
    try:
        _, hello = ui.open_comm("kli.ui", {"replay": 50})
        edits = [e for e in hello["events"] if e.get("tool") == "edit"]
        labels = [e["session_label"] for e in edits]
        assert len(edits) == 2 and len(set(labels)) == 2, labels  # two chats, two sessions
        assert all(label.startswith("Jupyter AI chat ") for label in labels), labels
        assert all(e["source"] == "agent" for e in edits)
        assert "b = 3" in json.dumps(edits[0]) and "a = 5" in json.dumps(edits[1])
    finally:
        ui.kc.stop_channels()


def test_the_agent_is_given_kli_tools_only_from_the_endpoint_it_was_handed(
        agent_server: AiServer) -> None:
    tools = say(agent_server, "tools")
    names = tools.split("tools: ", 1)[1].split()
    assert {"read", "edit", "cells", "run_cells"} <= set(names), tools
