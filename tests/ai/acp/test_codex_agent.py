"""A real agent CLI in a Jupyter AI chat — OpenAI Codex, through Zed's ``codex-acp`` — edits a
notebook cell through kli's anchored edit, held for review until the person accepts it
(issue 25).

What is real: the Jupyter server with Jupyter AI 3.2; Jupyter AI's own Codex persona
(``jupyter_ai_acp_client``'s ``CodexAcpPersona``, unchanged) starting the agent CLI
``codex-acp`` (npm ``@zed-industries/codex-acp``, pinned in scripts/test: the Codex agent, its
ACP adapter and Codex's own MCP client in one binary) and speaking ACP to it over stdio; the MCP
server Jupyter AI hands it (``.jupyter/mcp_settings.json``), with the chat's identity headers;
Codex's own MCP client connecting to jupyter-server-mcp's endpoint and calling kli's tools there
after ``kli ai enable``; the kli kernel of the notebook; review mode and the person's Accept on
the activity panel's ``kli.ui`` comm; the message sent through Jupyter AI's headless chat route.

What is scripted: the MODEL. Codex asks a model provider it is configured with
(``$CODEX_HOME/config.toml``: ``base_url`` on loopback, ``wire_api = "responses"``), and
tests/endpoint.py answers there in OpenAI's Responses API with the tool calls this test sets:
read the cell, edit the anchored line, wait for the person's decision, then say what happened.
Everything Codex does between those requests — building the request from its tools and the
MCP server's tools, calling the MCP tool, carrying its result back — is Codex's own code.

Codex's own approvals are off (``approval_policy = "never"`` with ``sandbox_mode =
"danger-full-access"``, the one pair under which Codex 0.137 calls an MCP tool without first
asking the chat's person through an ACP permission request, an Allow button this headless route
has nobody to click); what holds the edit is kli's review. The person is this test: it turns
review on and accepts on the panel comm, as the labextension's buttons do; no browser runs.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ai.acp.conftest import AiServer, npm_agent, start_ai_server
from tests.ai.acp.test_jupyter_ai_mcp import panel
from tests.endpoint import ScriptedEndpoint, answer, calls, tool_outputs

pytestmark = pytest.mark.timeout(300)

AGENT = "codex-acp"  # scripts/test: npm install --prefix "$AI_VENV/npm" @zed-industries/codex-acp
NAMESPACE = "mcp__kli_test"  # how Codex presents the MCP server named kli-test to its model
NOTEBOOK = "codex_nb.ipynb"


def call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    """The model's call of kli tool ``name`` in Codex's namespace for the kli-test server."""
    message = calls((name, args), n=n)
    message["tool_calls"][0]["namespace"] = NAMESPACE
    return message


def mcp_text(output: str) -> str:
    """The text of an MCP tool's result as Codex hands it to its model: ``Wall time: …``,
    ``Output:``, then the MCP content blocks as JSON."""
    _, sep, blocks = output.partition("Output:\n")
    if not sep:
        return output
    try:
        return "".join(str(b.get("text", "")) for b in json.loads(blocks))
    except (ValueError, AttributeError):
        return blocks


Call = Callable[[str, dict[str, Any], int], dict[str, Any]]


def step(notebook: str, done: list[str], call: Call) -> dict[str, Any]:
    """The scripted model's next message, given the tool results so far (``call`` makes an
    agent's call of a kli tool): read cell c2, edit its anchored line ``b = 2`` to ``b = 3``,
    wait for the person's decision, then answer with it."""
    if not done:
        return call("read", {"path": f"{notebook}#c2"}, 0)
    if len(done) == 1:
        row = next((line for line in done[0].splitlines() if line.endswith("|b = 2")), None)
        if row is None:
            return answer(f"the read showed no line b = 2: {done[0]}")
        patch = f"@@ {notebook}#c2\n= {row.split('|')[0]}\n~b = 3\n"
        return call("edit", {"input": patch}, 1)
    if len(done) == 2:
        proposal = re.search(r"Proposal (\w+)", done[1])
        if proposal is None:
            return answer(f"the edit was not held: {done[1]}")
        return call("await_decision", {"id": proposal.group(1), "timeout": 45}, 2)
    return answer(f"decision: {done[2]}")


def model(request: dict[str, Any]) -> dict[str, Any]:
    return step(NOTEBOOK, [mcp_text(o) for o in tool_outputs(request)], call)


def sources(server: AiServer, notebook: str = NOTEBOOK) -> list[str]:
    cells = json.loads((server.root / notebook).read_text())["cells"]
    return ["".join(c["source"]) for c in cells]


@pytest.fixture(scope="module")
def codex_server(tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[tuple[AiServer, ScriptedEndpoint]]:
    agent = npm_agent(AGENT)
    base = tmp_path_factory.mktemp("codex")
    endpoint = ScriptedEndpoint(model)
    with endpoint as url:
        home = base / "codex-home"
        home.mkdir()
        # What a person writes to point Codex at their own OpenAI-compatible provider.
        (home / "config.toml").write_text(
            'model = "scripted-model"\nmodel_provider = "scripted"\n'
            'approval_policy = "never"\nsandbox_mode = "danger-full-access"\n\n'
            '[model_providers.scripted]\nname = "scripted model (tests/endpoint.py)"\n'
            f'base_url = "{url}"\nwire_api = "responses"\n'
            'env_key = "KLI_SCRIPTED_MODEL_KEY"\n')
        env = {"CODEX_HOME": str(home), "KLI_SCRIPTED_MODEL_KEY": "not-a-secret",
               "PATH": os.pathsep.join([str(Path(agent).parent), os.environ.get("PATH", "")])}
        with start_ai_server(base, enable=True, mcp_settings=True, env=env) as server:
            yield server, endpoint


def held_then_accepted(server: AiServer, persona: str, notebook: str) -> dict[str, Any]:
    """Start a kli kernel for ``notebook`` (cells ``a = 1``, ``b = 2``), turn review on from the
    panel comm, send the chat message asking ``persona`` to set b to 3, and when the agent's
    edit is held, check nothing was written and accept it as the person does; the chat's reply
    (the turn has ended). Used by the test of each real agent."""
    server.notebook(notebook, [("c1", "a = 1"), ("c2", "b = 2")])
    kernel_id = server.open(notebook)
    ui = panel(server, kernel_id)
    comm, _ = ui.open_comm("kli.ui", {"replay": 0})
    reply: dict[str, Any] = {}

    def say() -> None:
        reply.update(server.api("POST", f"/api/ai/message/{persona}",
                                {"message": f"In {notebook}, set b to 3."}, timeout=240))

    chat = threading.Thread(target=say, daemon=True)
    try:
        ui.request(comm, {"op": "approval", "mode": "review", "kind": "file"})
        chat.start()
        deadline, pending = time.monotonic() + 180, []
        while not pending and chat.is_alive() and time.monotonic() < deadline:
            assert "request_permission: CALLED" not in server.log_text(), \
                f"{persona} asked the chat for permission to call a tool"
            time.sleep(0.5)
            pending = ui.request(comm, {"op": "replay", "limit": 0})["pending"]
        assert pending, f"no edit was held for review; the chat answered {reply}; " \
                        f"server log:\n{server.log_text()[-4000:]}"
        (held,) = pending
        assert held["session_label"].startswith("Jupyter AI chat "), held
        assert sources(server, notebook) == ["a = 1", "b = 2"]  # held: nothing written yet
        done = ui.request(comm, {"op": "accept", "candidate": held["candidate"]})
        assert done.get("ok"), done
        chat.join(200)
        assert not chat.is_alive(), "the chat turn did not end"
    finally:
        ui.request(comm, {"op": "approval", "mode": "auto"})
        ui.close_comm(comm)
        ui.kc.stop_channels()
    return reply


def test_codex_in_a_jupyter_ai_chat_edits_a_cell_through_kli_held_until_the_person_accepts(
        codex_server: tuple[AiServer, ScriptedEndpoint]) -> None:
    server, endpoint = codex_server
    reply = held_then_accepted(server, "Codex", NOTEBOOK)
    # Codex carried the person's decision back to its model; the turn ended on the model's answer
    assert endpoint.paths == ["/v1/responses"] * 4, (endpoint.paths, reply)
    decided = mcp_text(tool_outputs(endpoint.requests[3])[2])
    assert "accepted" in decided.lower(), decided
    deadline = time.monotonic() + 30  # the live document reaches the file on its next save
    while sources(server) != ["a = 1", "b = 3"] and time.monotonic() < deadline:
        time.sleep(0.5)
    assert sources(server) == ["a = 1", "b = 3"]
    first = endpoint.requests[0]
    kli = next(t for t in first["tools"] if t.get("name") == NAMESPACE)
    assert {"read", "edit", "await_decision"} <= {t["name"] for t in kli["tools"]}
    read = mcp_text(tool_outputs(endpoint.requests[1])[0])
    assert re.search(r"^1:[0-9a-f]{2}\|b = 2$", read, re.M), read  # kli's anchored rows
