"""Remote kernels: the kli kernel behind a real Jupyter Kernel Gateway, reached through a real
Jupyter server configured with ``--gateway-url``. An agent (``kli.client.connect_server``) and
``kli mcp --server-url`` read, edit and eval in that kernel; the kernel really is a child of the
gateway; the comm traffic survives the two websocket relays; nothing is left running."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from kli import client
from kli.tools.file.anchors import line_hash

from .conftest import GATEWAY_TOKEN, SERVER_TOKEN, Stack, http_json

pytestmark = [pytest.mark.kernel, pytest.mark.gateway]

CALL_TIMEOUT = 60.0


def _value(text: str) -> str:
    """The repr an eval printed for its one value (``[line 1] VALUE``)."""
    return text.strip().split("] ", 1)[1]


def test_an_agent_reads_edits_and_evals_in_a_kernel_behind_the_gateway(stack: Stack) -> None:
    (stack.root / "g.py").write_text("g = 1\n")
    big = "".join(f"line_{i} = {i}  # {'x' * 60}\n" for i in range(2000))
    (stack.root / "big.py").write_text(big)
    h = line_hash("g = 1")
    with client.connect_server(stack.server_url, SERVER_TOKEN, label="remote agent",
                               timeout=CALL_TIMEOUT) as k:
        # No kli kernel was running: the client asked the server, the server the gateway.
        assert k.transport.owned
        kernel_id = k.transport.kernel_id
        at_gateway = http_json(f"{stack.gateway_url}/api/kernels", GATEWAY_TOKEN)
        assert [x["id"] for x in at_gateway] == [kernel_id]
        assert k.session and "read" in k.tools

        read = k.call("read", {"path": "g.py"})
        assert read.ok and read.text == f"1:{h}|g = 1"
        edit = k.call("edit", {"input": f"@@ g.py\n= 1:{h}..1:{h}\n~g = 2\n"})
        assert edit.ok, edit.text
        assert (stack.root / "g.py").read_text() == "g = 2\n"
        stale = k.call("edit", {"input": f"@@ g.py\n= 1:{h}..1:{h}\n~g = 3\n"})
        assert not stale.ok and "stale anchor" in stale.text

        pid = int(_value(k.call("eval", {"code": "import os\nos.getpid()"}).text))
        assert pid in stack.gateway_kernel_pids(), "the kernel does not run under the gateway"
        cwd = _value(k.call("eval", {"code": "os.getcwd()"}).text)
        assert cwd == repr(str(stack.root))
        k.call("eval", {"code": "kept = 41"})
        assert _value(k.call("eval", {"code": "kept + 1"}).text) == "42"  # one live image

        # A large result (≈ 170 KB of text in one comm message: a read's 2000-line maximum)
        # crosses both relays intact.
        whole = k.call("read", {"path": "big.py"})
        assert whole.ok and len(whole.text.splitlines()) == 2000
        assert whole.text.splitlines()[-1].endswith("|line_1999 = 1999  # " + "x" * 60)
        assert k.specs("all") and k.ping() < 5
    # Closing the client shut its kernel down at the gateway.
    assert http_json(f"{stack.gateway_url}/api/kernels", GATEWAY_TOKEN) == []
    assert pid not in stack.gateway_kernel_pids()


def test_kli_mcp_with_server_url_drives_the_kernel_behind_the_gateway(stack: Stack) -> None:
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp_types import Implementation

    started = http_json(f"{stack.server_url}/api/kernels", SERVER_TOKEN, "POST", {"name": "kli"})
    kernel_id = started["id"]
    (stack.root / "m.py").write_text("m = 1\n")
    h = line_hash("m = 1")
    env = {**stack.env, "JUPYTER_TOKEN": SERVER_TOKEN}  # --server-token's default
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kli.tools.cli", "mcp", "--server-url", stack.server_url,
              "--kernel-id", kernel_id, "--profile", "all"], env=env)

    def text(result: Any) -> str:
        return "\n".join(c.text for c in result.content)

    async def body() -> int:
        with anyio.fail_after(90):
            async with Client(params, client_info=Implementation(name="gw-agent", version="1")) as c:
                names = [t.name for t in (await c.list_tools()).tools]
                assert "read" in names and "ws_read" in names
                read = await c.call_tool("read", {"path": "m.py"})
                assert text(read) == f"1:{h}|m = 1"
                edit = await c.call_tool("edit", {"input": f"@@ m.py\n= 1:{h}..1:{h}\n~m = 2\n"})
                assert not edit.is_error, text(edit)
                stale = await c.call_tool("edit", {"input": f"@@ m.py\n= 1:{h}..1:{h}\n~m = 3\n"})
                assert stale.is_error and "stale anchor" in text(stale)
                pid = await c.call_tool("eval", {"code": "import os\nos.getpid()"})
                return int(_value(text(pid)))

    try:
        pid = anyio.run(body)
        assert (stack.root / "m.py").read_text() == "m = 2\n"
        assert pid in stack.gateway_kernel_pids()
        # kli mcp only attached: the kernel it did not start is still running at the gateway.
        assert [x["id"] for x in http_json(f"{stack.gateway_url}/api/kernels", GATEWAY_TOKEN)] \
            == [kernel_id]
    finally:
        http_json(f"{stack.server_url}/api/kernels/{kernel_id}", SERVER_TOKEN, "DELETE")


def test_a_kernel_the_gateway_restarts_is_reported_then_reattached(stack: Stack) -> None:
    """The gateway restarts a killed kernel under the same id: an attached client learns it at
    its next call (no wait until the timeout), and kli mcp reports it, then reattaches."""
    import signal
    import time

    import anyio
    from mcp import Client, StdioServerParameters
    from mcp_types import Implementation

    kernel_id = http_json(f"{stack.server_url}/api/kernels", SERVER_TOKEN, "POST",
                          {"name": "kli"})["id"]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kli.tools.cli", "mcp", "--server-url", stack.server_url,
              "--server-token", SERVER_TOKEN, "--kernel-id", kernel_id], env=stack.env)

    def text(result: Any) -> str:
        return "\n".join(c.text for c in result.content)

    async def body() -> None:
        with anyio.fail_after(120):
            async with Client(params, client_info=Implementation(name="gw-agent", version="1")) as c:
                pid = int(_value(text(await c.call_tool("eval", {"code": "import os\nos.getpid()"}))))
                with client.connect_server(stack.server_url, SERVER_TOKEN, kernel_id,
                                           timeout=CALL_TIMEOUT) as direct:
                    os.kill(pid, signal.SIGKILL)
                    began = time.monotonic()
                    with pytest.raises(client.KernelDied, match=r"restarted|died"):
                        await anyio.to_thread.run_sync(
                            lambda: direct.call("eval", {"code": "1"}))
                    assert time.monotonic() - began < 30
                died = await c.call_tool("eval", {"code": "1"})
                assert died.is_error and "the kernel died while running eval" in text(died)
                assert "restarts a dead kernel by itself" in text(died)
                back = await c.call_tool("eval", {"code": "import os\nos.getpid()"})
                assert not back.is_error, text(back)
                new_pid = int(_value(text(back)))
                assert new_pid != pid and new_pid in stack.gateway_kernel_pids()

    try:
        anyio.run(body)
    finally:
        http_json(f"{stack.server_url}/api/kernels/{kernel_id}", SERVER_TOKEN, "DELETE")


def test_stopping_the_server_and_the_gateway_leaves_no_process_behind(stack: Stack) -> None:
    http_json(f"{stack.server_url}/api/kernels", SERVER_TOKEN, "POST", {"name": "kli"})
    kernels = stack.gateway_kernel_pids()
    assert len(kernels) == 1  # a kernel is running when the stack stops
    assert len(stack.seen) >= 3  # gateway, server, kernel
    assert stack.stop() == []
    assert all(not os.path.exists(f"/proc/{pid}") or _zombie(pid) for pid in kernels)


def _zombie(pid: int) -> bool:
    import psutil

    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True
