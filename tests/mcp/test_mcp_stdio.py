"""``kli mcp`` over stdio, driven by the MCP SDK's own client, against real kli kernels: the tool
list is the kernel's registry, calls are kernel tool calls (anchors, stale anchors, the activity
panel's session, repair previews accepted by a person), malformed input, and a kernel that dies
while the server runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kli.tools.file.anchors import line_hash

from .helpers import (
    CLIENT_NAME,
    Notebook,
    client_info,
    kernel_pid,
    mcp_command,
    pid_gone,
    run,
    server_env,
    stdio_params,
    text_of,
)

pytestmark = [pytest.mark.kernel, pytest.mark.mcp]


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    return root


@pytest.mark.parametrize("profile", ["kli", "slmcode", "all"])
def test_tools_list_is_the_kernels_registry_for_the_profile_with_its_instructions(
        tmp_path: Path, profile: str) -> None:
    from mcp import Client

    from kli.kernel.mcp.instructions import describe, instructions
    from kli.tools.core.formats import mcp_tool
    from kli.tools.registry import REGISTRY

    expected = [t.spec() for t in REGISTRY.tools.values()
                if profile == "all" or t.profile == profile]

    async def body() -> Any:
        params = stdio_params(tmp_path, "--start", "--root", str(_root(tmp_path)),
                              "--profile", profile)
        async with Client(params, client_info=client_info()) as c:
            return (await c.list_tools()).tools, c.instructions

    tools, given = run(body)
    assert given == instructions(profile)
    assert ("Worked repair" in given) == (profile != "kli")
    assert ("LINE:HH" in given) == (profile != "slmcode")
    assert [t.name for t in tools] == [s["name"] for s in expected]
    for tool, spec in zip(tools, expected, strict=True):
        assert tool.description == describe(spec)  # the registry's, with the MCP face's note
        assert tool.description.startswith(spec["description"])
        assert tool.input_schema == spec["parameters"]
        assert tool.input_schema["type"] == "object"
        facts = REGISTRY.tools[spec["name"]].annotations()  # the one MCP shape: formats.mcp_tool
        assert tool.model_dump(by_alias=True, exclude_none=True) == mcp_tool(
            {**spec, "description": describe(spec), "title": facts["title"],
             "annotations": facts})


def test_read_edit_with_anchors_then_a_stale_anchor_is_refused(tmp_path: Path) -> None:
    from mcp import Client

    root = _root(tmp_path)
    (root / "a.py").write_text("x = 1\ny = 2\n")

    async def body() -> None:
        params = stdio_params(tmp_path, "--root", str(root))  # --start is the default
        async with Client(params, client_info=client_info()) as c:
            read = await c.call_tool("read", {"path": "a.py"})
            assert not read.is_error
            assert text_of(read) == f"1:{line_hash('x = 1')}|x = 1\n2:{line_hash('y = 2')}|y = 2"
            h = line_hash("y = 2")
            edit = await c.call_tool("edit", {"input": f"@@ a.py\n= 2:{h}..2:{h}\n~y = 3\n"})
            assert not edit.is_error, text_of(edit)
            assert "Edited a.py (+1 -1)" in text_of(edit)
            assert (root / "a.py").read_text() == "x = 1\ny = 3\n"
            # The line changes behind the session's back: its anchor is stale now.
            (root / "a.py").write_text("x = 1\ny = 4\n")
            h3 = line_hash("y = 3")
            stale = await c.call_tool("edit", {"input": f"@@ a.py\n= 2:{h3}..2:{h3}\n~y = 5\n"})
            assert stale.is_error
            assert f"stale anchor 2:{h3} in a.py" in text_of(stale)
            assert "Re-read line 2 of a.py" in text_of(stale)
            assert "Nothing was written." in text_of(stale)
            assert (root / "a.py").read_text() == "x = 1\ny = 4\n"

    run(body)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_calls_show_in_the_activity_panel_under_the_mcp_session(tmp_path: Path, notebook: Notebook,
                                                                mode: str) -> None:
    from mcp import Client

    root = tmp_path / "root"
    (root / "n.py").write_text("n = 1\n")

    async def body() -> str:
        params = stdio_params(tmp_path, "--connection-file", notebook.connection_file)
        async with Client(params, client_info=client_info(), mode=mode) as c:
            assert not (await c.call_tool("read", {"path": "n.py"})).is_error
            pid = await c.call_tool("eval", {"code": "import os\nos.getpid()"})
            return text_of(pid)

    assert kernel_pid(run(body)) == notebook.pid  # the tools ran in the notebook's kernel
    event = notebook.wait(lambda d: d.get("op") == "event" and d["event"]["tool"] == "read")["event"]
    assert event["session_label"] == f"mcp: {CLIENT_NAME}"
    assert event["source"] == "agent" and event["ok"] and event["args"] == {"path": "n.py"}


def test_a_repair_preview_waits_for_a_persons_accept_in_the_notebook(tmp_path: Path,
                                                                     notebook: Notebook) -> None:
    from mcp import Client

    root = tmp_path / "root"
    (root / "p.py").write_text("a = 1\nb = 2\nc = 3\n")
    h = line_hash("b = 2")

    async def preview() -> str:
        params = stdio_params(tmp_path, "--connection-file", notebook.connection_file)
        async with Client(params, client_info=client_info()) as c:
            await c.call_tool("read", {"path": "p.py"})
            r = await c.call_tool("edit", {"input": f"@@ p.py\n= 2:{h}..2:{h}\n~b = max(2, 3\n",
                                           "repair": "preview"})
            text = text_of(r)
            # A person accepts in the panel while the MCP client is still attached.
            cid = text.split("Repair preview ")[-1].split()[0]
            assert (root / "p.py").read_text() == "a = 1\nb = 2\nc = 3\n"
            pending = notebook.wait(lambda d: d.get("op") == "event" and d["event"]["tool"] == "edit")
            assert pending["event"]["details"]["files"][0]["candidate"] == cid
            reply = notebook.accept(cid)
            assert reply["ok"], reply
            again = await c.call_tool("edit", {"accept_repair": cid, "path": "p.py"})
            assert again.is_error  # already written by the person: nothing pending any more
            return text

    text = run(preview)
    assert "is pending in the notebook" in text and "kli activity panel" in text
    cid = text.split("Repair preview ")[-1].split()[0]
    assert json.dumps({"accept_repair": cid, "path": "p.py"}) in text
    assert (root / "p.py").read_text() == "a = 1\nb = max(2, 3)\nc = 3\n"
    resolved = notebook.wait(lambda d: d.get("op") == "resolved" and d["candidate"] == cid)
    assert resolved["status"] == "written" and resolved["by"] == "ui"


def test_unknown_tool_is_a_protocol_error_and_bad_arguments_a_tool_error(tmp_path: Path) -> None:
    from mcp import Client
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS

    async def body() -> None:
        params = stdio_params(tmp_path, "--root", str(_root(tmp_path)))
        async with Client(params, client_info=client_info()) as c:
            with pytest.raises(MCPError) as info:
                await c.call_tool("ws_read", {"path": "a.py"})  # slmcode tool, kli profile
            assert info.value.code == INVALID_PARAMS
            assert "Unknown tool: 'ws_read'" in info.value.message
            assert "read" in info.value.message and "edit" in info.value.message
            bad = await c.call_tool("read", {"path": 3, "color": "red"})
            assert bad.is_error and "read" in text_of(bad)
            missing = await c.call_tool("read", {})
            assert missing.is_error and "missing required argument 'path'" in text_of(missing)
            ok = await c.call_tool("eval", {"code": "'still serving'"})
            assert not ok.is_error and "still serving" in text_of(ok)

    run(body)


def test_a_malformed_line_gets_a_parse_error_and_the_server_goes_on(tmp_path: Path) -> None:
    proc = subprocess.Popen(mcp_command("--root", str(_root(tmp_path))), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=server_env(tmp_path))
    assert proc.stdin is not None and proc.stdout is not None

    def send(line: str) -> None:
        proc.stdin.write(line + "\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    def reply() -> dict[str, Any]:
        data: dict[str, Any] = json.loads(proc.stdout.readline())  # type: ignore[union-attr]
        return data

    try:
        send("{this is not json")
        parse = reply()
        assert parse["id"] is None and parse["error"]["code"] == -32700
        assert "one JSON-RPC 2.0 message" in parse["error"]["message"]
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}))
        init = reply()
        assert init["id"] == 1 and init["result"]["serverInfo"]["name"] == "kli"
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": "eval", "arguments": "not an object"}}))
        assert reply()["error"]["code"] == -32602
        send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "no/such/method"}))
        assert reply()["error"]["code"] == -32601
        # Valid JSON with a readable id but not a valid message: the error names that id, so a
        # client waiting on it is answered rather than left to its own timeout.
        send(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": []}))
        invalid = reply()
        assert invalid["id"] == 5 and invalid["error"]["code"] == -32600
        send(json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                         "params": {"name": "eval", "arguments": {"code": "20 + 22"}}}))
        answer = reply()
        assert answer["id"] == 4 and not answer["result"]["isError"]
        assert "42" in answer["result"]["content"][0]["text"]
    finally:
        proc.stdin.close()
        assert proc.wait(20) == 0


def test_closing_the_client_stops_the_server_and_its_kernel(tmp_path: Path) -> None:
    from mcp import Client

    async def body() -> int:
        params = stdio_params(tmp_path, "--start", "--root", str(_root(tmp_path)))
        async with Client(params, client_info=client_info()) as c:
            return kernel_pid(text_of(await c.call_tool("eval", {"code": "import os\nos.getpid()"})))

    pid = run(body)
    assert pid_gone(pid), "the server's own kernel outlived the server"


def test_own_kernel_killed_gives_a_clear_error_then_a_fresh_kernel(tmp_path: Path) -> None:
    from mcp import Client

    root = _root(tmp_path)
    (root / "k.py").write_text("k = 1\n")
    pids: list[int] = []

    async def body() -> None:
        params = stdio_params(tmp_path, "--start", "--root", str(root))
        async with Client(params, client_info=client_info()) as c:
            first = kernel_pid(text_of(await c.call_tool("eval", {"code": "import os\nos.getpid()"})))
            await c.call_tool("eval", {"code": "kept = 'state'"})
            os.kill(first, signal.SIGKILL)
            began = time.monotonic()
            died = await c.call_tool("read", {"path": "k.py"})
            assert time.monotonic() - began < 30  # far below the 330 s call timeout a missed death would cost
            assert died.is_error
            text = text_of(died)
            assert "the kernel died while running read" in text
            assert "started a fresh kernel" in text and "read files again" in text
            second = kernel_pid(text_of(await c.call_tool("eval", {"code": "import os\nos.getpid()"})))
            assert second != first
            lost = await c.call_tool("eval", {"code": "kept"})
            assert lost.is_error and "NameError" in text_of(lost)  # the image was not kept
            read = await c.call_tool("read", {"path": "k.py"})
            h = line_hash("k = 1")
            edit = await c.call_tool("edit", {"input": f"@@ k.py\n= 1:{h}..1:{h}\n~k = 2\n"})
            assert not read.is_error and not edit.is_error, text_of(edit)
            pids.extend([first, second])

    run(body, timeout=90)
    assert (root / "k.py").read_text() == "k = 2\n"
    assert pid_gone(pids[1])


def test_a_notebook_kernel_restarted_is_reported_then_reattached(tmp_path: Path,
                                                                 notebook: Notebook) -> None:
    """JupyterLab's Kernel > Restart keeps the connection file: the call that meets the new
    kernel says so (at once, not after the call timeout), the next call attaches to it."""
    from mcp import Client

    async def body() -> None:
        params = stdio_params(tmp_path, "--connection-file", notebook.connection_file)
        async with Client(params, client_info=client_info()) as c:
            await c.call_tool("eval", {"code": "kept = 1"})
            old = notebook.pid
            notebook.km.restart_kernel(now=True)
            began = time.monotonic()
            died = await c.call_tool("eval", {"code": "kept"})
            assert time.monotonic() - began < 30  # far below the 330 s call timeout a missed restart would cost
            assert died.is_error
            text = text_of(died)
            assert "the kernel died while running eval" in text and "restarted" in text
            assert "the next call reconnects to it" in text
            back = await c.call_tool("eval", {"code": "import os\nos.getpid()"})
            assert not back.is_error and kernel_pid(text_of(back)) == notebook.pid != old

    run(body, timeout=90)


def test_newest_kernel_killed_gives_a_clear_error_then_the_new_newest_is_attached(
        tmp_path: Path) -> None:
    from mcp import Client

    root = _root(tmp_path)
    runtime = Path(server_env(tmp_path)["JUPYTER_RUNTIME_DIR"])
    first = Notebook(root, runtime, "kernel-first.json")
    second: Notebook | None = None
    try:
        async def body() -> None:
            nonlocal second
            params = stdio_params(tmp_path, "--newest")
            async with Client(params, client_info=client_info()) as c:
                pid = await c.call_tool("eval", {"code": "import os\nos.getpid()"})
                assert kernel_pid(text_of(pid)) == first.pid
                os.kill(first.pid, signal.SIGKILL)
                died = await c.call_tool("eval", {"code": "1"})
                assert died.is_error
                text = text_of(died)
                assert "the kernel died while running eval" in text
                assert "the newest running kernel" in text
                assert "the next call attaches to the newest running kernel" in text
                time.sleep(0.05)  # the new connection file is strictly newer
                second = Notebook(root, runtime, "kernel-second.json")
                back = await c.call_tool("eval", {"code": "import os\nos.getpid()"})
                assert not back.is_error and kernel_pid(text_of(back)) == second.pid

        run(body, timeout=90)
        assert second is not None and second.km.is_alive(), "attached kernels are left running"
    finally:
        first.close()
        if second is not None:
            second.close()


def test_kli_mcp_help_lists_the_kernel_options() -> None:
    out = subprocess.run(mcp_command("--help"), capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    for flag in ("--start", "--connection-file", "--newest", "--server-url", "--server-token",
                 "--kernel-id", "--profile", "--transport", "--port", "--token"):
        assert flag in out.stdout


def test_the_cli_core_imports_nothing_from_mcp_until_kli_mcp_runs() -> None:
    code = ("import json, sys\nimport kli.tools.cli\n"
            "print(json.dumps(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         timeout=60)
    loaded = json.loads(out.stdout)
    heavy = ("mcp", "mcp_types", "uvicorn", "starlette", "anyio", "jupyter_client")
    assert [m for m in loaded if m.split(".")[0] in heavy] == []
    assert [m for m in loaded if m.startswith("kli.kernel")] == []


def test_the_started_kernel_listens_on_ipc_and_logs_no_unencrypted_tcp_warning(
        tmp_path: Path) -> None:
    """kli mcp --start's kernel writes its log to kli mcp's stderr: ipykernel's "running over
    TCP without encryption" warning must not be there (IPC transport, see docs/mcp.md)."""
    proc = subprocess.Popen(mcp_command("--start", "--root", str(_root(tmp_path))),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=server_env(tmp_path))
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict[str, Any]) -> None:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    try:
        send({"id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})
        assert json.loads(proc.stdout.readline())["id"] == 1
        send({"method": "notifications/initialized"})
        send({"id": 2, "method": "tools/call", "params": {"name": "eval", "arguments": {
            "code": "import json, os\nfrom ipykernel.kernelapp import IPKernelApp\n"
                    "IPKernelApp.instance().transport"}}})
        answer = json.loads(proc.stdout.readline())
        assert "'ipc'" in answer["result"]["content"][0]["text"], answer
    finally:
        proc.stdin.close()
        assert proc.wait(20) == 0
    assert proc.stderr is not None
    log = proc.stderr.read()
    assert "without encryption" not in log, log


def test_every_tool_carries_annotations_derived_from_its_registry_entry(tmp_path: Path) -> None:
    from mcp import Client

    from kli.tools.registry import REGISTRY

    async def body() -> Any:
        params = stdio_params(tmp_path, "--start", "--root", str(_root(tmp_path)),
                              "--profile", "all")
        async with Client(params, client_info=client_info()) as c:
            return (await c.list_tools()).tools

    tools = run(body)
    assert len(tools) == len(REGISTRY.tools)
    for tool in tools:
        facts = REGISTRY.tools[tool.name].annotations()
        a = tool.annotations
        assert a is not None and tool.title == a.title == facts["title"] and a.title
        assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint) == (
            facts["readOnlyHint"], facts["destructiveHint"], facts["idempotentHint"],
            facts["openWorldHint"])
    by_name = {t.name: t.annotations for t in tools}
    assert by_name["read"].read_only_hint and not by_name["read"].open_world_hint
    assert not by_name["bash"].read_only_hint and by_name["bash"].open_world_hint
    assert by_name["ws_delete"].destructive_hint and not by_name["ws_delete"].read_only_hint
    assert by_name["write"].idempotent_hint and not by_name["edit"].idempotent_hint
    assert by_name["git_status"].read_only_hint and not by_name["git_status"].destructive_hint


def test_a_long_call_sends_progress_to_a_client_that_asked_for_it(tmp_path: Path) -> None:
    from mcp import Client

    seen: list[tuple[float, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, message))

    async def body() -> Any:
        params = stdio_params(tmp_path, "--start", "--root", str(_root(tmp_path)))
        async with Client(params, client_info=client_info()) as c:
            return await c.call_tool("eval", {"code": "import time\ntime.sleep(11)\n'done'"},
                                     progress_callback=progress)

    result = run(body)
    assert not result.is_error and "done" in text_of(result)
    assert len(seen) >= 2, seen
    assert all(m and "eval still running in the kernel" in m for _, m in seen)
    assert [v for v, _ in seen] == sorted(v for v, _ in seen)


@pytest.mark.serial  # asserts a wall-clock time
def test_a_cancelled_call_stops_its_eval_and_the_kernel_is_idle_again_within_seconds(
        tmp_path: Path) -> None:
    import anyio
    from mcp import Client

    async def body() -> float:
        params = stdio_params(tmp_path, "--start", "--root", str(_root(tmp_path)))
        async with Client(params, client_info=client_info()) as c:
            await c.call_tool("eval", {"code": "1"})  # the kernel is up
            with anyio.move_on_after(3):  # the client gives up: notifications/cancelled
                await c.call_tool("eval", {"code": "import time\ntime.sleep(100)",
                                           "timeout": 200})
                raise AssertionError("a 100 s sleep returned")
            began = time.monotonic()
            after = await c.call_tool("eval", {"code": "'idle again'"})
            assert not after.is_error and "idle again" in text_of(after), text_of(after)
            return time.monotonic() - began

    assert run(body) < 8


@pytest.mark.serial  # asserts a wall-clock time
def test_a_cancelled_bash_call_kills_its_command_and_the_kernel_answers_within_seconds(
        tmp_path: Path) -> None:
    """bash runs on a kernel subshell, which an interrupt does not reach: the server's cancel
    request kills the command's process tree."""
    import anyio
    import psutil
    from mcp import Client

    pid_file = tmp_path / "sleep.pid"

    async def body() -> float:
        params = stdio_params(tmp_path, "--start", "--root", str(_root(tmp_path)))
        async with Client(params, client_info=client_info()) as c:
            await c.call_tool("bash", {"command": "true"})  # the kernel is up
            with anyio.move_on_after(3):  # the client gives up: notifications/cancelled
                await c.call_tool("bash", {"command": f"sleep 100 & echo $! > {pid_file}; wait",
                                           "timeout": 200})
                raise AssertionError("a 100 s sleep returned")
            began = time.monotonic()
            after = await c.call_tool("bash", {"command": "echo answering"})
            assert not after.is_error and "answering" in text_of(after), text_of(after)
            return time.monotonic() - began

    assert run(body) < 8
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while psutil.pid_exists(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_attaching_while_a_persons_cell_runs_over_20_s_is_not_reported_as_dead(
        tmp_path: Path, notebook: Notebook) -> None:
    """The person's cell keeps the image for 30 s: kli mcp attaches at once, file and shell
    tools answer, and nothing says the kernel is dead or to restart it (that would throw the
    person's work away)."""
    from mcp import Client

    (tmp_path / "root" / "p.py").write_text("p = 1\n")
    notebook.kc.execute("import time\ntime.sleep(30)")
    time.sleep(0.5)

    async def body() -> list[str]:
        params = stdio_params(tmp_path, "--connection-file", notebook.connection_file)
        async with Client(params, client_info=client_info()) as c:
            read = await c.call_tool("read", {"path": "p.py"})
            shell = await c.call_tool("bash", {"command": "echo alive"})
            assert not read.is_error and not shell.is_error, (text_of(read), text_of(shell))
            return [text_of(read), text_of(shell)]

    began = time.monotonic()
    texts = run(body, timeout=25)
    assert time.monotonic() - began < 20  # the cell still runs: nothing waited for it
    assert texts[0].endswith("|p = 1") and "alive" in texts[1]
    assert not any("restart" in t or "died" in t for t in texts)
    notebook.km.interrupt_kernel()


def test_progress_of_a_call_waiting_for_a_persons_cell_says_what_holds_the_kernel(
        tmp_path: Path, notebook: Notebook) -> None:
    from mcp import Client

    messages: list[str] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    notebook.kc.execute("import time\ntime.sleep(12)\nheld = 'cell done'")
    time.sleep(0.5)

    async def body() -> Any:
        params = stdio_params(tmp_path, "--connection-file", notebook.connection_file)
        async with Client(params, client_info=client_info()) as c:
            return await c.call_tool("eval", {"code": "held"}, progress_callback=progress)

    result = run(body)
    assert not result.is_error and "cell done" in text_of(result)  # it waited for the cell
    assert any("Running: a notebook cell for" in m and m.endswith(": import time.")
               for m in messages), messages


def test_a_request_whose_params_no_reader_takes_is_answered_with_its_id(tmp_path: Path) -> None:
    """A lone surrogate, a list nested 1,000 deep, a 5,000-digit integer in params: each
    request is answered -32600 naming its id (a null id left the client waiting for its own
    timeout), and the server goes on answering."""
    proc = subprocess.Popen(mcp_command("--root", str(_root(tmp_path))), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=server_env(tmp_path))
    assert proc.stdin is not None and proc.stdout is not None

    def send(line: str) -> None:
        proc.stdin.write(line + "\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    def reply() -> dict[str, Any]:
        data: dict[str, Any] = json.loads(proc.stdout.readline())  # type: ignore[union-attr]
        return data

    def call(rid: Any, code: str) -> str:  # code: raw JSON text of the argument
        return ('{"jsonrpc": "2.0", "id": ' + json.dumps(rid) + ', "method": "tools/call", '
                '"params": {"name": "eval", "arguments": {"code": ' + code + '}}}')

    try:
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}))
        assert reply()["id"] == 1
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        bad = {
            11: '"\\ud800"',
            "twelve": "[" * 1000 + "]" * 1000,
            13: "9" * 5000,
        }
        for rid, code in bad.items():
            send(call(rid, code))
            answer = reply()
            assert answer["id"] == rid, answer
            assert answer["error"]["code"] == -32600
            assert "Invalid JSON" in answer["error"]["message"]
        # an id nested in params is not the request's: a line with no top-level id stays null
        send('{"jsonrpc": "2.0", "method": "tools/call", "params": {"id": 14, "x": '
             + "9" * 5000 + "}}")
        assert reply()["id"] is None
        send(json.dumps({"jsonrpc": "2.0", "id": 15, "method": "tools/list"}))
        assert reply()["id"] == 15
    finally:
        proc.stdin.close()
        assert proc.wait(20) == 0
