"""``kli mcp --transport http``: streamable HTTP on 127.0.0.1 behind a bearer token, driven by
the MCP SDK's client against the server's own real kernel — tools, anchors, refusals without
the token, a bad body, the kernel dying, and a clean stop."""

from __future__ import annotations

import json
import os
import signal
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kli.tools.file.anchors import line_hash

from .helpers import CLIENT_NAME, HttpServer, Notebook, kernel_pid, pid_gone, run, text_of

pytestmark = [pytest.mark.kernel, pytest.mark.mcp]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("mcp-http") / "root"
    r.mkdir()
    return r


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[HttpServer]:
    """No --token: the server generates one and prints it."""
    s = HttpServer(root.parent, "--start", "--root", str(root))
    yield s
    s.stop()


def post(server: HttpServer, body: bytes, token: str | None) -> tuple[int, str]:
    req = urllib.request.Request(server.url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_start_prints_a_loopback_url_and_a_generated_token(server: HttpServer) -> None:
    assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/mcp")
    assert len(server.token) >= 24
    assert any(f"Authorization: Bearer {server.token}" in line for line in server.printed)


def test_http_lists_tools_then_read_edit_with_anchors_and_a_stale_anchor_is_refused(
        server: HttpServer, root: Path) -> None:
    from kli.tools.registry import REGISTRY

    (root / "h.py").write_text("h = 1\n")
    h1 = line_hash("h = 1")

    async def body() -> None:
        async with server.client() as c:
            tools = (await c.list_tools()).tools
            assert [t.name for t in tools] == REGISTRY.names("kli")
            read = await c.call_tool("read", {"path": "h.py"})
            assert text_of(read) == f"1:{h1}|h = 1"
            edit = await c.call_tool("edit", {"input": f"@@ h.py\n= 1:{h1}..1:{h1}\n~h = 2\n"})
            assert not edit.is_error and "Edited h.py (+1 -1)" in text_of(edit)
            stale = await c.call_tool("edit", {"input": f"@@ h.py\n= 1:{h1}..1:{h1}\n~h = 3\n"})
            assert stale.is_error and f"stale anchor 1:{h1} in h.py" in text_of(stale)

    run(body)
    assert (root / "h.py").read_text() == "h = 2\n"


@pytest.mark.parametrize("token", [None, "", "wrong-token"], ids=["missing", "empty", "wrong"])
def test_requests_without_the_right_token_are_refused(server: HttpServer, token: str | None) -> None:
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "intruder", "version": "0"}}}).encode()
    status, text = post(server, init, token)
    assert status == 401
    assert "bearer token" in json.loads(text)["message"]


def test_the_sdk_client_with_a_wrong_token_cannot_connect(server: HttpServer) -> None:
    async def body() -> None:
        async with server.client(token="not-it") as c:
            await c.list_tools()

    from mcp.shared.exceptions import MCPError

    with pytest.raises(BaseException) as info:
        run(body, timeout=30)
    # The SDK wraps the 401 in task-group exceptions; an MCPError is at the bottom.
    errors: list[BaseException] = [info.value]
    while errors and not isinstance(errors[-1], MCPError):
        errors.extend(getattr(errors.pop(), "exceptions", []))
    assert errors, f"not refused with an MCPError: {info.value!r}"


def test_a_bad_http_body_gets_a_json_rpc_error_and_the_server_goes_on(server: HttpServer) -> None:
    status, text = post(server, b"{not json", server.token)
    assert status == 400
    assert json.loads(text)["error"]["code"] == -32700
    status, text = post(server, b'{"jsonrpc": "2.0", "id": 5, "method": 7}', server.token)
    assert status == 400

    async def body() -> str:
        async with server.client() as c:
            return text_of(await c.call_tool("eval", {"code": "'after the bad body'"}))

    assert "after the bad body" in run(body)


def test_kernel_killed_under_http_gives_a_clear_error_then_a_fresh_kernel(
        server: HttpServer) -> None:
    async def body() -> None:
        async with server.client() as c:
            pid = kernel_pid(text_of(await c.call_tool("eval", {"code": "import os\nos.getpid()"})))
            os.kill(pid, signal.SIGKILL)
            died = await c.call_tool("eval", {"code": "1"})
            assert died.is_error and "the kernel died while running eval" in text_of(died)
            assert "started a fresh kernel" in text_of(died)
            again = await c.call_tool("eval", {"code": "import os\nos.getpid()"})
            assert not again.is_error and kernel_pid(text_of(again)) != pid

    run(body, timeout=90)


def test_sigterm_stops_the_server_and_its_kernel(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    s = HttpServer(tmp_path, "--start", "--root", str(root), "--token", "fixed-token-123")
    try:
        assert s.token == "fixed-token-123"

        async def body() -> Any:
            async with s.client() as c:
                return kernel_pid(text_of(await c.call_tool("eval", {"code": "import os\nos.getpid()"})))

        pid = run(body)
    finally:
        code = s.stop()
    assert code == 0
    assert pid_gone(pid), "the server's own kernel outlived the server"


def test_http_calls_share_one_kernel_session_shown_in_the_activity_panel(
        tmp_path: Path, notebook: Notebook) -> None:
    root = tmp_path / "root"
    (root / "s.py").write_text("s = 1\n")
    h = line_hash("s = 1")
    s = HttpServer(tmp_path, "--connection-file", notebook.connection_file)
    try:
        async def body() -> None:
            async with s.client() as c:
                assert not (await c.call_tool("read", {"path": "s.py"})).is_error
                edit = await c.call_tool("edit", {"input": f"@@ s.py\n= 1:{h}..1:{h}\n~s = 2\n"})
                assert not edit.is_error, text_of(edit)  # the read's anchors were this session's

        run(body)
    finally:
        s.stop()
    edit = notebook.wait(lambda d: d.get("op") == "event" and d["event"]["tool"] == "edit")
    events = [d["event"] for d in notebook.seen if d.get("op") == "event"]
    assert {e["session"] for e in events} == {edit["event"]["session"]}
    assert {e["session_label"] for e in events} == {f"mcp: {CLIENT_NAME}"}
    assert [e["tool"] for e in events] == ["read", "edit"]
    assert (root / "s.py").read_text() == "s = 2\n"


def test_a_busy_port_is_refused_before_any_kernel_starts(tmp_path: Path) -> None:
    import socket
    import subprocess

    from .helpers import mcp_command, server_env

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        out = subprocess.run(mcp_command("--transport", "http", "--port", str(port),
                                         "--root", str(tmp_path)),
                             capture_output=True, text=True, timeout=30, env=server_env(tmp_path))
    assert out.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in out.stderr and "--port" in out.stderr
    assert "Kernel is running" not in out.stderr  # no kernel was started


def test_two_http_clients_with_the_same_name_get_their_own_sessions(
        tmp_path: Path, notebook: Notebook) -> None:
    """Without an Mcp-Session-Id, a client is its connection: another client of the same name
    cannot use the first one's read anchors."""
    root = tmp_path / "root"
    (root / "t.py").write_text("t = 1\n")
    h = line_hash("t = 1")
    patch = f"@@ t.py\n= 1:{h}..1:{h}\n~t = 2\n"
    s = HttpServer(tmp_path, "--connection-file", notebook.connection_file)
    try:
        async def body() -> tuple[str, str]:
            async with s.client() as a, s.client() as b:  # the same client name
                assert not (await a.call_tool("read", {"path": "t.py"})).is_error
                other = await b.call_tool("edit", {"input": patch})
                own = await a.call_tool("edit", {"input": patch})
                assert not own.is_error, text_of(own)
                return text_of(other), text_of(own)

        other, _ = run(body)
    finally:
        s.stop()
    assert "read" in other.lower()  # refused: b never read t.py in its session
    notebook.wait(lambda d: d.get("op") == "event" and d["event"]["tool"] == "edit"
                  and d["event"]["ok"])
    edits = [d["event"] for d in notebook.seen
             if d.get("op") == "event" and d["event"]["tool"] == "edit"]
    assert len({e["session"] for e in edits}) == 2  # one session per client
    assert (root / "t.py").read_text() == "t = 2\n"


def test_an_http_client_that_gives_up_on_a_call_stops_its_eval_in_the_kernel(
        root: Path, tmp_path: Path) -> None:
    import time

    import anyio

    # A kernel of its own: an eval is interrupted only when it is all the kernel runs, and the
    # module's shared kernel may still be busy with an earlier test's work (seen in a full run).
    server = HttpServer(tmp_path, "--start", "--root", str(root))

    async def body() -> float:
        async with server.client() as c:
            await c.call_tool("eval", {"code": "1"})
            with anyio.move_on_after(3):  # the client abandons the request
                await c.call_tool("eval", {"code": "import time\ntime.sleep(100)",
                                           "timeout": 200})
                raise AssertionError("a 100 s sleep returned")
            began = time.monotonic()
            after = await c.call_tool("eval", {"code": "'idle again'"})
            assert not after.is_error and "idle again" in text_of(after), text_of(after)
            return time.monotonic() - began

    try:
        assert run(body) < 8
    finally:
        server.stop()
