"""A real agent CLI in a Jupyter AI chat — Claude Code, through Zed's ``claude-agent-acp`` —
edits a notebook cell through kli's anchored edit, held for review until the person accepts it
(issue 25).

What is real: the Jupyter server with Jupyter AI 3.2; Jupyter AI's own Claude persona
(``jupyter_ai_acp_client``'s ``ClaudeAcpPersona``, unchanged) starting ``claude-agent-acp``
(npm ``@zed-industries/claude-agent-acp``, pinned in scripts/test), which runs Claude Code
itself (the ``cli.js`` of ``@anthropic-ai/claude-agent-sdk``) and speaks ACP; the MCP server
Jupyter AI hands it, with the chat's identity headers; Claude Code's own MCP client calling kli's
tools on jupyter-server-mcp's endpoint after ``kli ai enable``; the kli kernel of the notebook;
review mode and the person's Accept on the activity panel's ``kli.ui`` comm.

What is scripted: the MODEL. Claude Code's ``ANTHROPIC_BASE_URL`` is tests/endpoint.py on
loopback, which answers in Anthropic's Messages API: the requests that offer kli's tools get
this test's tool calls (read the cell, edit the anchored line, wait for the decision, answer);
Claude Code's side requests (those without them) get a short text.

Set up as a person would: the kli tools allowed in Claude Code's user settings
(``permissions.allow: ["mcp__kli-test"]`` in ``$CLAUDE_CONFIG_DIR/settings.json``), or each call
would wait for an Allow click in the chat that this headless route has nobody to give; kli's
review is what holds the edit. ``IS_SANDBOX=1``: Claude Code refuses to start as root otherwise
(the ACP adapter passes ``--allow-dangerously-skip-permissions``), and CI containers run as root.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ai.acp.conftest import AiServer, npm_agent, start_ai_server
from tests.ai.acp.test_codex_agent import held_then_accepted, sources, step
from tests.endpoint import ScriptedEndpoint, answer, calls, tool_outputs

pytestmark = pytest.mark.timeout(300)

AGENT = "claude-agent-acp"  # scripts/test: npm install --prefix "$AI_VENV/npm" ...
PREFIX = "mcp__kli-test__"  # how Claude Code names the tools of the MCP server kli-test
NOTEBOOK = "claude_nb.ipynb"


def call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    return calls((PREFIX + name, args), n=n)


def model(request: dict[str, Any]) -> dict[str, Any]:
    if not any(t.get("name") == PREFIX + "read" for t in request.get("tools") or []):
        return answer("Scripted reply.")  # Claude Code's side requests (titles, checks)
    return step(NOTEBOOK, tool_outputs(request), call)


@pytest.fixture(scope="module")
def claude_server(tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[tuple[AiServer, ScriptedEndpoint]]:
    agent = npm_agent(AGENT)
    base = tmp_path_factory.mktemp("claude")
    endpoint = ScriptedEndpoint(model)
    with endpoint as url:
        config = base / "claude-config"
        config.mkdir()
        (config / "settings.json").write_text(json.dumps(
            {"permissions": {"allow": ["mcp__kli-test"]}}))
        env = {"CLAUDE_CONFIG_DIR": str(config), "IS_SANDBOX": "1",
               "ANTHROPIC_BASE_URL": url.removesuffix("/v1"),
               "ANTHROPIC_API_KEY": "not-a-secret", "ENABLE_TOOL_SEARCH": "false",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               "PATH": os.pathsep.join([str(Path(agent).parent), os.environ.get("PATH", "")])}
        with start_ai_server(base, enable=True, mcp_settings=True, env=env) as server:
            yield server, endpoint


def test_claude_code_in_a_jupyter_ai_chat_edits_a_cell_through_kli_held_until_accepted(
        claude_server: tuple[AiServer, ScriptedEndpoint]) -> None:
    server, endpoint = claude_server
    reply = held_then_accepted(server, "Claude", NOTEBOOK)
    turn = [r for r in endpoint.requests
            if any(t.get("name") == PREFIX + "read" for t in r.get("tools") or [])]
    assert len(turn) == 4, (len(endpoint.requests), reply)
    assert set(endpoint.paths) == {"/v1/messages"}, endpoint.paths
    decided = tool_outputs(turn[3])[2]
    assert "accepted" in decided.lower(), decided
    read = tool_outputs(turn[1])[0]
    assert re.search(r"^1:[0-9a-f]{2}\|b = 2$", read, re.M), read  # kli's anchored rows
    deadline = time.monotonic() + 30  # the live document reaches the file on its next save
    while sources(server, NOTEBOOK) != ["a = 1", "b = 3"] and time.monotonic() < deadline:
        time.sleep(0.5)
    assert sources(server, NOTEBOOK) == ["a = 1", "b = 3"]
