"""What ``kli mcp`` adds to a tool call: the same ``read`` against the same kli kernel, through
``kli.client`` directly (the peer: the agent comm with nothing in front) and through ``kli mcp``
over stdio and over streamable HTTP, each driven by the MCP SDK's own client.

    .venv/bin/python bench/bench_mcp.py [--calls 40]

Calls alternate between the three paths (one of each per round) so load on a shared machine
hits them alike; the table gives the median and 90th percentile round trip per path.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any


def _http_server(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], str, str]:
    proc = subprocess.Popen([sys.executable, "-m", "kli.tools.cli", "mcp", "--transport", "http",
                             "--port", "0", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env)
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in proc.stdout or []:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    url = token = ""
    deadline = time.monotonic() + 60
    while not (url and token) and time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        if "streamable HTTP at " in line:
            url = line.split("streamable HTTP at ", 1)[1].strip()
        if line.startswith("kli mcp: token "):
            token = line.split("kli mcp: token ", 1)[1].strip()
    if not (url and token):
        proc.kill()
        raise SystemExit("kli mcp --transport http did not start")
    return proc, url, token


class _RawHttp:
    """Bare JSON-RPC POSTs (a handshake-era session) to the HTTP server: the server's share of
    an HTTP call, without the SDK client's."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token, self.sid, self.n = url, token, "", 0
        init = {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "bench-raw", "version": "1"}}
        self.post("initialize", init)
        self.post("notifications/initialized", None)

    def post(self, method: str, params: Any) -> str:
        import json
        import urllib.request

        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            self.n += 1
            body.update(id=self.n, params=params)
        req = urllib.request.Request(self.url, data=json.dumps(body).encode(), method="POST")
        for key, value in (("Content-Type", "application/json"),
                           ("Accept", "application/json, text/event-stream"),
                           ("Authorization", f"Bearer {self.token}")):
            req.add_header(key, value)
        if self.sid:
            req.add_header("mcp-session-id", self.sid)
            req.add_header("mcp-protocol-version", "2025-06-18")
        with urllib.request.urlopen(req, timeout=60) as resp:
            self.sid = resp.headers.get("mcp-session-id") or self.sid
            return str(resp.read().decode())


async def _measure(calls: int, conn_file: str, env: dict[str, str]) -> dict[str, list[float]]:
    import httpx2
    from mcp import Client, StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client
    from mcp_types import Implementation

    from kli import client

    info = Implementation(name="bench", version="1")
    stdio = StdioServerParameters(command=sys.executable, env=env, args=[
        "-m", "kli.tools.cli", "mcp", "--connection-file", conn_file])
    proc, url, token = _http_server(["--connection-file", conn_file], env)
    times: dict[str, list[float]] = {"kli.client (direct)": [], "kli mcp, stdio": [],
                                     "kli mcp, streamable HTTP": [],
                                     "kli mcp, HTTP, bare POSTs (no SDK client)": []}
    args = {"path": "a.py"}
    try:
        async with contextlib.AsyncExitStack() as stack:
            direct = stack.enter_context(client.connect(conn_file, label="bench direct"))
            over_stdio = await stack.enter_async_context(Client(stdio, client_info=info))
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60))
            over_http = await stack.enter_async_context(
                Client(streamable_http_client(url, http_client=http), client_info=info))
            raw = _RawHttp(url, token)
            call = {"name": "read", "arguments": args}
            for _ in range(3):  # warm-up: connections, imports, first listings
                direct.call("read", args)
                await over_stdio.call_tool("read", args)
                await over_http.call_tool("read", args)
            for _ in range(calls):
                began = time.perf_counter()
                r = direct.call("read", args)
                assert r.ok, r.text
                times["kli.client (direct)"].append(time.perf_counter() - began)
                began = time.perf_counter()
                assert not (await over_stdio.call_tool("read", args)).is_error
                times["kli mcp, stdio"].append(time.perf_counter() - began)
                began = time.perf_counter()
                assert not (await over_http.call_tool("read", args)).is_error
                times["kli mcp, streamable HTTP"].append(time.perf_counter() - began)
                began = time.perf_counter()
                assert '"isError":false' in raw.post("tools/call", call)
                times["kli mcp, HTTP, bare POSTs (no SDK client)"].append(
                    time.perf_counter() - began)
    finally:
        proc.terminate()
        proc.wait(20)
    return times


def main() -> None:
    import anyio
    from jupyter_client.manager import KernelManager

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=40)
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        (root / "a.py").write_text("".join(f"value_{i} = {i}\n" for i in range(20)))
        runtime = Path(tmp) / "runtime"
        runtime.mkdir()
        env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime),
               "XDG_CONFIG_HOME": str(Path(tmp) / "xdg")}
        conn_file = str(runtime / "kernel-bench.json")
        km = KernelManager(kernel_name="kli", connection_file=conn_file)
        km.start_kernel(cwd=str(root), env=env)
        try:
            times = anyio.run(_measure, ns.calls, conn_file, env)
        finally:
            km.shutdown_kernel(now=True)
    load = os.getloadavg()[0]
    base = statistics.median(times["kli.client (direct)"])
    print(f"read of a 20-line file, {ns.calls} calls per path, alternating; "
          f"load average {load:.1f} on {os.cpu_count()} CPUs")
    print("| path | median | p90 | median ÷ direct |")
    print("|---|---|---|---|")
    for name, values in times.items():
        values.sort()
        med = statistics.median(values)
        p90 = values[int(0.9 * (len(values) - 1))]
        print(f"| {name} | {med * 1000:.1f} ms | {p90 * 1000:.1f} ms | {med / base:.1f}× |")


if __name__ == "__main__":
    main()
