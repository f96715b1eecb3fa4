"""A Jupyter Kernel Gateway at its default configuration, as people run it: listing kernels is
off (``GET /api/kernels`` answers 403) and its default kernel is python3. ``connect_server`` and
``kli mcp --server-url`` without a kernel id start a kli kernel there, and errors say what the
gateway answered rather than "cannot reach"."""

from __future__ import annotations

import sys
import urllib.error
from typing import Any

import pytest

from kli import client

from .conftest import GATEWAY_TOKEN, Stack, http_json

pytestmark = [pytest.mark.kernel, pytest.mark.gateway]

CALL_TIMEOUT = 60.0


def test_the_gateway_at_its_defaults_forbids_listing_kernels(default_gateway: Stack) -> None:
    with pytest.raises(urllib.error.HTTPError) as info:
        http_json(f"{default_gateway.gateway_url}/api/kernels", GATEWAY_TOKEN)
    assert info.value.code == 403


def test_connect_server_without_a_kernel_id_starts_a_kli_kernel_when_listing_is_forbidden(
        default_gateway: Stack) -> None:
    (default_gateway.root / "d.py").write_text("d = 1\n")
    with client.connect_server(default_gateway.gateway_url, GATEWAY_TOKEN,
                               timeout=CALL_TIMEOUT) as k:
        assert k.transport.owned
        assert k.call("read", {"path": "d.py"}).text.endswith("|d = 1")
        pid = int(k.call("eval", {"code": "import os\nos.getpid()"}).text.split("] ", 1)[1])
        assert pid in default_gateway.gateway_kernel_pids()
    # The kernel it started is shut down at close.
    assert pid not in default_gateway.gateway_kernel_pids()


def test_a_wrong_token_is_reported_as_the_gateway_s_answer_not_as_unreachable(
        default_gateway: Stack) -> None:
    with pytest.raises(client.KernelError) as info:
        client.connect_server(default_gateway.gateway_url, "not-the-token", timeout=CALL_TIMEOUT)
    text = str(info.value)
    assert "cannot reach" not in text
    assert "answered GET /api/kernels with 401" in text and "check the token" in text


def test_an_unreachable_server_is_reported_as_unreachable() -> None:
    from .conftest import free_port

    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(client.KernelError, match=f"cannot reach the Jupyter server at {url}"):
        client.connect_server(url, "t", timeout=5)


def test_kli_mcp_with_server_url_and_no_kernel_id_serves_a_gateway_at_its_defaults(
        default_gateway: Stack) -> None:
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp_types import Implementation

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kli.tools.cli", "mcp", "--server-url", default_gateway.gateway_url,
              "--server-token", GATEWAY_TOKEN], env=default_gateway.env)

    def text(result: Any) -> str:
        return "\n".join(c.text for c in result.content)

    async def body() -> tuple[int, int]:
        with anyio.fail_after(90):
            async with Client(params, client_info=Implementation(name="gw-a", version="1")) as a, \
                    Client(params, client_info=Implementation(name="gw-b", version="1")) as b:
                first = await a.call_tool("eval", {"code": "import os\nos.getpid()"})
                assert not first.is_error, text(first)
                again = await a.call_tool("eval", {"code": "os.getpid()"})
                other = await b.call_tool("eval", {"code": "import os\nos.getpid()"})
                assert not other.is_error, text(other)
                return (int(text(first).split("] ", 1)[1]),
                        int(text(again).split("] ", 1)[1]))

    pid, same = anyio.run(body)
    assert pid == same  # one kernel for the server's lifetime, not one per call
    # kli mcp started that kernel, so it shut it down when it stopped.
    assert pid not in default_gateway.gateway_kernel_pids()


def test_kli_mcp_s_server_target_shares_the_kernel_it_started_and_shuts_it_down(
        default_gateway: Stack) -> None:
    from kli.kernel.mcp.targets import ServerKernel

    target = ServerKernel(default_gateway.gateway_url, GATEWAY_TOKEN)
    a = target.connect("mcp: a")
    b = target.connect("mcp: b")  # a second MCP session: the same kernel, not a new one
    try:
        assert a.transport.kernel_id == b.transport.kernel_id
        pid = int(a.call("eval", {"code": "import os\nos.getpid()"}).text.split("] ", 1)[1])
    finally:
        a.close()
        b.close()
    assert pid in default_gateway.gateway_kernel_pids()  # sessions closed, the kernel stays
    target.close()
    import time

    deadline = time.monotonic() + 15
    while pid in default_gateway.gateway_kernel_pids() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert pid not in default_gateway.gateway_kernel_pids()
