"""kli's tools on Jupyter AI's MCP route, locked (issue 34), and each finding of the adversarial
pass through that route, through the real route: a Jupyter server with Jupyter AI 3.2 and
jupyter-server-mcp, ``kli ai enable`` run as a person runs it, kli kernels the server starts
for notebooks, MCP clients on the real endpoint (the fastmcp client, or raw JSON-RPC over
streamable HTTP where a lenient JSON body is the probe: a lone surrogate, NaN, Infinity), the
person's panel on a real ``kli.ui`` comm, and chats opened over jupyterlab-chat's websocket.
No model and no agent CLI take part, except in the last test, where Jupyter AI's own ACP client
starts the scripted agent (tests/ai/acp/scripted) from a live chat."""

from __future__ import annotations

import json
import re
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kli.kernel.ai.mcp_route import REFUSED
from kli.kernel.mcp.bridge import MAX_SESSIONS
from tests.ai.acp.conftest import AiServer, start_ai_server
from tests.ai.acp.test_jupyter_ai_mcp import panel
from tests.ai.harness import Agent, Chat

pytestmark = pytest.mark.timeout(600)

CELLS = [("c1", "x = 1"), ("c2", "y = 2"), ("c3", "open('ran.txt', 'a').write('ran\\n')")]
SCRIPTED = Path(__file__).resolve().parent / "scripted"


@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AiServer, str]]:
    """The server (wanting a token, as a person's ``jupyter lab`` does), a kli notebook
    ``r.ipynb`` (its kernel id) and a notebook ``p.ipynb`` on a plain python3 kernel."""
    with start_ai_server(tmp_path_factory.mktemp("locked"), enable=True, token=True,
                         args=("--YDocExtension.disable_rtc=True",)) as server:
        server.notebook("r.ipynb", CELLS)
        kernel_id = server.open("r.ipynb")
        server.notebook("p.ipynb", [("p1", "open('py3.txt', 'w').write('ran')")], "python3")
        server.open("p.ipynb", "python3")
        yield server, kernel_id


def chat_file(server: AiServer, path: str) -> Chat:
    server.api("PUT", f"/api/contents/{path}", {"type": "file", "format": "text", "content": ""})
    return Chat(server, path, persona=False)


def raw_call(server: AiServer, tool: str, arguments: str, headers: dict[str, str]) -> dict[str, Any]:
    """``tools/call`` of ``tool`` with ``arguments`` written as JSON text verbatim (so a lone
    ``\\ud800`` escape or a bare ``NaN`` reaches the server as a lenient client sends it), over
    streamable HTTP as an MCP client speaks it; the JSON-RPC result."""
    def post(body: str, session: str | None) -> tuple[str, str]:
        req = urllib.request.Request(server.mcp_url, data=body.encode(), method="POST")
        req.add_header("Content-Type", "application/json")
        req.add_header("Accept", "application/json, text/event-stream")
        for name, value in {**headers, **({"mcp-session-id": session} if session else {})}.items():
            req.add_header(name, value)
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.headers.get("mcp-session-id") or "", resp.read().decode()

    def message(text: str, rid: int) -> dict[str, Any]:
        for line in text.splitlines():
            data = line[len("data:"):].strip() if line.startswith("data:") else line.strip()
            if data.startswith("{"):
                found = json.loads(data)
                if found.get("id") == rid:
                    return dict(found)
        raise AssertionError(f"no answer to request {rid} in {text!r}")

    session, text = post(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}), None)
    message(text, 1)
    post(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), session)
    _, text = post('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": '
                   f'{json.dumps(tool)}, "arguments": {arguments}}}}}', session)
    return dict(message(text, 2)["result"])


def result_text(result: dict[str, Any]) -> str:
    return "".join(str(b.get("text", "")) for b in result.get("content") or [])


def proposal(text: str) -> str:
    """The id of the proposal a held call's result names."""
    found = re.search(r"Proposal (p\d+)", text)
    assert found, text
    return found.group(1)


def ran(server: AiServer) -> int:
    """How often cell c3 ran (each run appends a line to ran.txt)."""
    path = server.root / "ran.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


# -- the lock ----------------------------------------------------------------------------------
def test_a_caller_without_this_servers_key_is_refused_and_nothing_runs(
        locked: tuple[AiServer, str]) -> None:
    server, _ = locked
    marker = server.root / "stranger.txt"
    command = {"command": f"touch {marker}"}
    strangers = [server.agent(uuid.uuid4().hex, key=""),       # claims a chat, no key
                 server.agent(uuid.uuid4().hex, key="guess"),  # a wrong key
                 server.agent(None, key="")]                   # a bare local process
    for stranger in strangers:
        text, is_error = stranger.call("bash", command)
        assert is_error and text == REFUSED, text
    assert not marker.exists()
    text, is_error = server.agent(uuid.uuid4().hex).call("bash", command)  # the key
    assert not is_error, text
    assert marker.exists()


def test_a_caller_with_the_servers_own_token_is_admitted_and_a_wrong_token_is_not(
        locked: tuple[AiServer, str]) -> None:
    server, _ = locked
    assert server.token, "the module's server must want a token for this test to test"
    marker = server.root / "token-caller.txt"
    command = {"command": f"touch {marker}"}
    for wrong in (f"token {server.token[:-1]}x", f"Bearer {server.token}x", server.token):
        stranger = Agent(server.mcp_url, uuid.uuid4().hex, key="",
                         headers={"Authorization": wrong})
        text, is_error = stranger.call("bash", command)
        assert is_error and text == REFUSED, (wrong, text)
    assert not marker.exists()
    for scheme in ("token", "Bearer"):
        caller = Agent(server.mcp_url, uuid.uuid4().hex, key="",
                       headers={"Authorization": f"{scheme} {server.token}"})
        text, is_error = caller.call("bash", command)
        assert not is_error, text
        assert marker.exists()
        marker.unlink()


def test_the_key_is_the_users_alone_and_jupyter_ai_is_told_it(locked: tuple[AiServer, str]
                                                                ) -> None:
    server, _ = locked
    key_file = Path(server.env["JUPYTER_DATA_DIR"]) / "kli" / "jupyter-ai.key"
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert key_file.read_text().strip() == server.key and len(server.key) >= 40
    switch = Path(server.env["JUPYTER_CONFIG_DIR"]) / "jupyter_server_config.d" / "kli-jupyter-ai.json"
    assert server.key not in switch.read_text()  # a config file others may read holds no key


# -- the findings ------------------------------------------------------------------------------
def test_await_decision_does_not_answer_a_chat_about_another_chats_proposal(
        locked: tuple[AiServer, str]) -> None:
    server, kernel_id = locked
    a, b = server.agent(uuid.uuid4().hex), server.agent(uuid.uuid4().hex)
    ui = panel(server, kernel_id)
    comm, _ = ui.open_comm("kli.ui", {"replay": 0})
    try:
        ui.request(comm, {"op": "approval", "mode": "review", "kind": "file"})
        text, _ = a.call("read", {"path": "r.ipynb#c2"})
        anchor = next(line for line in text.splitlines() if line.endswith("|y = 2")).split("|")[0]
        held, _ = a.call("edit", {"input": f"@@ r.ipynb#c2\n= {anchor}\n~y = 20\n"})
        pid = proposal(held)
        other, is_error = b.call("await_decision", {"id": pid, "timeout": 0})
        assert is_error and "another session's" in other and "status" not in other, other
        ui.request(comm, {"op": "reject", "candidate": pid, "note": "for chat A only"})
        other, is_error = b.call("await_decision", {"id": pid, "timeout": 0})
        assert is_error and "for chat A only" not in other, other
        own, is_error = a.call("await_decision", {"id": pid, "timeout": 0})
        assert not is_error and "for chat A only" in own, own
    finally:
        ui.request(comm, {"op": "approval", "mode": "auto"})
        ui.close_comm(comm)
        ui.kc.stop_channels()


def test_a_live_chats_session_outlives_more_other_clients_than_the_bridge_keeps(
        locked: tuple[AiServer, str]) -> None:
    server, _ = locked
    with chat_file(server, f"live{uuid.uuid4().hex[:6]}.chat") as live:
        chat = server.agent(live.chat_id)
        text, _ = chat.call("read", {"path": "r.ipynb#c1"})
        anchor = next(line for line in text.splitlines() if "|x = " in line).split("|")[0]
        for _ in range(MAX_SESSIONS + 1):  # other clients, each an MCP session of its own
            text, is_error = server.agent(None).call("read", {"path": "r.ipynb#c1"})
            assert not is_error, text
        text, is_error = chat.call("edit", {"input": f"@@ r.ipynb#c1\n= {anchor}\n~x = 1\n"})
        assert not is_error, text  # its anchors are still there: its session was kept


def test_a_lone_surrogate_is_refused_as_never_sent_not_as_maybe_run(
        locked: tuple[AiServer, str]) -> None:
    server, _ = locked
    headers = {"X-Kli-Key": server.key, "X-Jupyter-Chat-Id": uuid.uuid4().hex}
    result = raw_call(server, "eval", '{"code": "s = \'\\ud800\'"}', headers)
    text = result_text(result)
    assert result.get("isError") and "lone surrogate" in text, result
    assert "not sent to the kernel, so nothing ran" in text and "may have run" not in text, text


@pytest.mark.parametrize("timeout", ["NaN", "Infinity", "-Infinity"])
def test_a_raw_nan_or_infinite_timeout_is_refused_not_taken_as_no_timeout(
        locked: tuple[AiServer, str], timeout: str) -> None:
    server, _ = locked
    headers = {"X-Kli-Key": server.key, "X-Jupyter-Chat-Id": uuid.uuid4().hex}
    before = ran(server)
    result = raw_call(server, "run_cells",
                      f'{{"path": "r.ipynb", "cell": "c3", "timeout": {timeout}}}', headers)
    text = result_text(result)
    assert result.get("isError") and "finite number" in text, result  # refused, not run
    assert ran(server) == before


def test_run_cells_with_a_negative_timeout_is_refused_at_once_under_review(
        locked: tuple[AiServer, str]) -> None:
    server, kernel_id = locked
    ui = panel(server, kernel_id)
    comm, _ = ui.open_comm("kli.ui", {"replay": 0})
    try:
        ui.request(comm, {"op": "approval", "mode": "review"})
        before = ran(server)
        text, is_error = server.agent(uuid.uuid4().hex).call(
            "run_cells", {"path": "r.ipynb", "cell": "c3", "timeout": -1})
        assert is_error and "must be > 0" in text and "waits for" not in text, text
        assert ui.request(comm, {"op": "replay", "limit": 0})["pending"] == []
        assert ran(server) == before
    finally:
        ui.request(comm, {"op": "approval", "mode": "auto"})
        ui.close_comm(comm)
        ui.kc.stop_channels()


def test_a_notebook_under_review_holds_a_call_from_another_kernel_that_can_change_it(
        locked: tuple[AiServer, str]) -> None:
    """The finding: a chat on sub/b.ipynb's kernel (auto) ran ``sed`` on ../r.ipynb, whose
    kernel is under review. Now the call is held in b's kernel, naming r.ipynb, and r.ipynb is
    unchanged; with r's review off the same kind of call runs."""
    server, r_kernel = locked
    server.api("PUT", "/api/contents/sub", {"type": "directory"})
    server.notebook("sub/b.ipynb", [("b1", "z = 1")])
    b_kernel = server.open("sub/b.ipynb")
    r_panel, b_panel = panel(server, r_kernel), panel(server, b_kernel)
    r_comm, _ = r_panel.open_comm("kli.ui", {"replay": 0})
    b_comm, _ = b_panel.open_comm("kli.ui", {"replay": 0})
    before = (server.root / "r.ipynb").read_bytes()
    chat = server.agent(uuid.uuid4().hex)
    try:
        r_panel.request(r_comm, {"op": "approval", "mode": "review"})
        text, is_error = chat.call("read", {"path": "sub/b.ipynb#b1"})  # the chat is on b's kernel
        assert not is_error and "z = 1" in text, text
        held, is_error = chat.call("bash", {"command": "sed -i 's/y = 2/y = 666/' ../r.ipynb"})
        assert not is_error and "waits for a person's review" in held, held
        assert "r.ipynb is under review for shell commands, and this bash can change it" in held
        assert (server.root / "r.ipynb").read_bytes() == before
        pending = b_panel.request(b_comm, {"op": "replay", "limit": 0})["pending"]
        assert [c["candidate"] for c in pending] == [proposal(held)]  # in b's queue
        code, _ = chat.call("eval", {"code": "open('../r.ipynb', 'a').close()"})
        assert "r.ipynb is under review for eval, and this eval can change it" in code, code
        for text in (held, code):
            b_panel.request(b_comm, {"op": "reject", "candidate": proposal(text)})
        # b's file tools cannot reach ../r.ipynb (outside b's folder): a write is not held
        wrote, is_error = chat.call("write", {"path": "b-notes.txt", "content": "x\n"})
        assert not is_error and "waits for" not in wrote, wrote
        r_panel.request(r_comm, {"op": "approval", "mode": "auto"})
        marker = server.root / "reach-ran.txt"
        ran, is_error = chat.call("bash", {"command": f"touch {marker}"})
        assert not is_error and "waits for" not in ran and marker.exists(), ran
    finally:
        r_panel.request(r_comm, {"op": "approval", "mode": "auto"})
        for ui, comm in ((r_panel, r_comm), (b_panel, b_comm)):
            ui.close_comm(comm)
            ui.kc.stop_channels()
        for s in server.api("GET", "/api/sessions"):  # the module's other tests see one kli notebook
            if s["path"] == "sub/b.ipynb":
                server.api("DELETE", f"/api/sessions/{s['id']}")


def test_run_cells_naming_a_notebook_on_a_plain_python3_kernel_is_refused(
        locked: tuple[AiServer, str]) -> None:
    server, _ = locked
    chat = server.agent(uuid.uuid4().hex)
    text, is_error = chat.call("read", {"path": "r.ipynb#c1"})  # the chat is on r's kernel
    assert not is_error, text
    before = (server.root / "p.ipynb").read_text()
    text, is_error = chat.call("run_cells", {"path": "p.ipynb", "cell": "p1"})
    assert is_error and "p.ipynb runs the python3 kernel, not a kli kernel" in text, text
    assert not (server.root / "py3.txt").exists()
    assert (server.root / "p.ipynb").read_text() == before


def test_code_an_agent_wrote_stays_the_agents_after_the_persons_accept(
        locked: tuple[AiServer, str]) -> None:
    """An accepted eval whose code runs %kli accept (of another held proposal) and %kli
    approval auto is refused both: review stays on and the other proposal stays pending."""
    server, kernel_id = locked
    a, b = server.agent(uuid.uuid4().hex), server.agent(uuid.uuid4().hex)
    ui = panel(server, kernel_id)
    comm, _ = ui.open_comm("kli.ui", {"replay": 0})
    try:
        ui.request(comm, {"op": "approval", "mode": "review"})
        text, _ = b.call("read", {"path": "r.ipynb#c2"})
        anchor = next(line for line in text.splitlines() if "|y = " in line).split("|")[0]
        held_b, _ = b.call("edit", {"input": f"@@ r.ipynb#c2\n= {anchor}\n~y = 99\n"})
        other = proposal(held_b)
        code = (f"get_ipython().run_line_magic('kli', 'accept {other}')\n"
                "get_ipython().run_line_magic('kli', 'approval auto')")
        held_a, _ = a.call("eval", {"code": code})
        pid = proposal(held_a)
        done = ui.request(comm, {"op": "accept", "candidate": pid})  # the person's Accept
        said = str(done.get("text"))  # the code ran; both its magics were refused
        assert said.count("was run by an agent's call") == 2, said
        assert "Nothing was changed" in said, said
        pending = {c["candidate"] for c in ui.request(comm, {"op": "replay", "limit": 0})["pending"]}
        assert other in pending, pending  # not accepted by the agent's code
        still, _ = a.call("eval", {"code": "1 + 1"})
        assert "waits for a person's review" in still, still  # review is still on
        ui.request(comm, {"op": "reject", "candidate": proposal(still)})
        ui.request(comm, {"op": "reject", "candidate": other})
    finally:
        ui.request(comm, {"op": "approval", "mode": "auto"})
        ui.close_comm(comm)
        ui.kc.stop_channels()


# -- Jupyter AI hands the key to the agent it starts ----------------------------------------------
@pytest.fixture(scope="module")
def builtin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AiServer]:
    """A server whose scripted ACP agent gets only Jupyter AI's built-in MCP entry (named as
    the agent looks for it): no .jupyter/mcp_settings.json, no header written by anyone."""
    base = tmp_path_factory.mktemp("builtin")
    site = base / "site"
    info = site / "kli_scripted_persona-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: kli-scripted-persona\n"
                                   "Version: 0\n")
    (info / "entry_points.txt").write_text(
        "[jupyter_ai.personas]\nscripted = kli_scripted_persona:ScriptedAcpPersona\n")
    with start_ai_server(base, enable=True, pythonpath=[site, SCRIPTED],
                         args=("--YDocExtension.disable_rtc=True",
                               "--MCPExtensionApp.mcp_name=kli-test")) as server:
        yield server


def test_an_agent_jupyter_ai_starts_from_a_live_chat_gets_the_key_and_its_calls_run(
        builtin: AiServer) -> None:
    builtin.notebook("agent_nb.ipynb", [("c1", "a = 1"), ("c2", "b = 2")])
    builtin.open("agent_nb.ipynb")
    with chat_file(builtin, "agent.chat") as chat:
        scripted = chat.wait(lambda: next((u for u in chat.users if "Scripted" in u), None), 60,
                             "the scripted agent's persona joining the chat")
        chat.send("edit agent_nb.ipynb c2 b = 2 => b = 3", to=scripted)
        chat.wait(lambda: "edit result:" in chat.replies(scripted), 240, "the agent's edit")
        said = chat.replies(scripted)
    assert "headers: X-Jupyter-Chat-Id, X-JupyterAI-Persona-Id, X-Kli-Key" in said, said
    assert "edit result: Edited agent_nb.ipynb#c2" in said, said
