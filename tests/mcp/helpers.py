"""Helpers: real ``kli mcp`` servers (subprocesses) driven by the MCP SDK's own client, real kli kernels,
and a stand-in for the notebook's activity panel: a ``kli.ui`` comm on the same kernel."""

from __future__ import annotations

import os
import queue
import re
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

# Every await in a test is bounded by this (a hung server fails the test, never the suite).
TEST_TIMEOUT = 60.0
CLIENT_NAME = "probe-agent"


def run(fn: Callable[[], Awaitable[Any]], timeout: float = TEST_TIMEOUT) -> Any:
    """Run an async test body under anyio with a deadline."""
    import anyio

    async def bounded() -> Any:
        with anyio.fail_after(timeout):
            return await fn()

    return anyio.run(bounded)


def server_env(tmp: Path) -> dict[str, str]:
    """The server's environment: no user settings, its own Jupyter runtime dir."""
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(tmp / "xdg")
    env["JUPYTER_RUNTIME_DIR"] = str(tmp / "runtime")
    env.pop("PYTEST_CURRENT_TEST", None)
    (tmp / "runtime").mkdir(exist_ok=True)
    return env


def mcp_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "kli.tools.cli", "mcp", *args]


def stdio_params(tmp: Path, *args: str) -> Any:
    from mcp import StdioServerParameters

    cmd = mcp_command(*args)
    return StdioServerParameters(command=cmd[0], args=cmd[1:], env=server_env(tmp))


def client_info(name: str = CLIENT_NAME) -> Any:
    from mcp_types import Implementation

    return Implementation(name=name, version="1.0")


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def kernel_pid(text: str) -> int:
    """The pid an ``eval`` of ``os.getpid()`` printed (``[line 2] 1234``; a line naming what
    the call changed in the live image may follow)."""
    found = re.search(r"^\[line \d+\] (\d+)$", text, re.MULTILINE)
    assert found is not None, text
    return int(found.group(1))


def pid_gone(pid: int, within: float = 15.0) -> bool:
    import psutil

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


class Notebook:
    """A kernel owned by the test, as JupyterLab would own it, with the activity panel's
    ``kli.ui`` comm open on it: ``events`` and ``pending`` are what the panel would show."""

    def __init__(self, root: Path, runtime: Path, name: str = "kernel-nb.json") -> None:
        from jupyter_client.manager import KernelManager

        self.connection_file = str(runtime / name)
        self.km = KernelManager(kernel_name="kli", connection_file=self.connection_file)
        self.km.start_kernel(cwd=str(root), env={**os.environ, "XDG_CONFIG_HOME": str(runtime)})
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)
        self.ui = uuid.uuid4().hex
        self.seen: list[dict[str, Any]] = []
        self.kc.shell_channel.send(self.kc.session.msg("comm_open", {
            "comm_id": self.ui, "target_name": "kli.ui", "data": {"replay": 0}}))
        self.hello = self.wait(lambda d: d.get("op") == "hello")

    @property
    def pid(self) -> int:
        provisioner: Any = self.km.provisioner
        return int(provisioner.process.pid)

    def _ui_data(self, timeout: float) -> dict[str, Any] | None:
        try:
            msg = self.kc.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            return None
        if msg["msg_type"] == "comm_msg" and msg["content"].get("comm_id") == self.ui:
            data: dict[str, Any] = msg["content"]["data"]
            self.seen.append(data)
            return data
        return None

    def wait(self, pred: Callable[[dict[str, Any]], bool], timeout: float = 30.0) -> dict[str, Any]:
        for data in self.seen:
            if pred(data):
                return data
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self._ui_data(0.2)
            if got is not None and pred(got):
                return got
        raise AssertionError("the activity panel did not get the expected message")

    def accept(self, candidate: str) -> dict[str, Any]:
        """What a person's click on Accept sends."""
        return self.request("accept", candidate=candidate)

    def request(self, op: str, **data: Any) -> dict[str, Any]:
        """A ``kli.ui`` request as the panel sends it (``approval``, ``accept``, ``replay``…),
        and its reply."""
        rid = uuid.uuid4().hex[:8]
        self.kc.shell_channel.send(self.kc.session.msg("comm_msg", {
            "comm_id": self.ui, "data": {"v": 1, "id": rid, "op": op, **data}}))
        return self.wait(lambda d: d.get("id") == rid)

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


class HttpServer:
    """``kli mcp --transport http`` as a subprocess; ``url`` and ``token`` read from what it
    printed at start."""

    def __init__(self, tmp: Path, *args: str, timeout: float = 60.0) -> None:
        import subprocess
        import threading

        self.proc = subprocess.Popen(mcp_command("--transport", "http", "--port", "0", *args),
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, env=server_env(tmp))
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.printed: list[str] = []
        self.url = self.token = ""
        deadline = time.monotonic() + timeout
        while not any("Authorization: Bearer" in line for line in self.printed):
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                self.stop()
                raise AssertionError(f"kli mcp did not print its URL and token: {self.printed}")
            try:
                line = self.lines.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            self.printed.append(line)
            if "streamable HTTP at " in line:
                self.url = line.split("streamable HTTP at ", 1)[1].strip()
            if line.startswith("kli mcp: token "):
                self.token = line.split("kli mcp: token ", 1)[1].strip()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def client(self, token: str | None = None, name: str = CLIENT_NAME) -> Any:
        """An SDK client over streamable HTTP sending ``token`` (default: the right one).
        Use as ``async with``."""
        import contextlib

        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        @contextlib.asynccontextmanager
        async def connect() -> Any:
            headers = {"Authorization": f"Bearer {self.token if token is None else token}"}
            async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
                    Client(streamable_http_client(self.url, http_client=http),
                           client_info=client_info(name)) as c:
                yield c

        return connect()

    def stop(self) -> int | None:
        import signal

        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except Exception:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode
