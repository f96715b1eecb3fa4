"""A real Jupyter Kernel Gateway on loopback serving the kli kernelspec, and a real Jupyter
server configured to manage its kernels through that gateway (``--gateway-url``), as a remote
deployment would have them. Every process they start is tracked so the tests can check that
none is left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.kernelspec import kli_kernelspec  # noqa: F401  (session, autouse: the spec installed)
from tests.ports import free_port

START_TIMEOUT = 60.0
GATEWAY_TOKEN = "gateway-secret"
SERVER_TOKEN = "server-secret"


def http_json(url: str, token: str, method: str = "GET", body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Authorization": f"token {token}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        raw = resp.read()
    return json.loads(raw) if raw else None


def wait_http(url: str, token: str, proc: subprocess.Popen[bytes], log: Path) -> Any:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{proc.args!r} exited: {log.read_text()[-2000:]}")
        try:
            return http_json(url, token)
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"{url} did not answer within {START_TIMEOUT:g} s: "
                         f"{log.read_text()[-2000:]}")


class Stack:
    """Kernel Gateway + Jupyter server (gateway client), both on 127.0.0.1.

    ``defaults``: the gateway at its default configuration (no kernel listing, python3 its
    default kernel) and no Jupyter server in front of it."""

    def __init__(self, tmp: Path, *, defaults: bool = False) -> None:
        self.tmp = tmp
        self.root = tmp / "root"
        self.root.mkdir()
        self.env = dict(os.environ)
        self.env.update({"JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
                         "XDG_CONFIG_HOME": str(tmp / "xdg"),
                         "JUPYTER_CONFIG_DIR": str(tmp / "jupyter-config")})
        self.env.pop("PYTEST_CURRENT_TEST", None)
        self.env.pop("JUPYTER_TOKEN", None)
        self.gateway_port, self.server_port = free_port(), free_port()
        self.gateway_url = f"http://127.0.0.1:{self.gateway_port}"
        self.server_url = f"http://127.0.0.1:{self.server_port}"
        self.seen: set[int] = set()  # every pid either process tree ever had
        jupyter = [sys.executable, "-m", "jupyter"]
        self.gateway_log = tmp / "gateway.log"
        configured = [] if defaults else [
            "--KernelGatewayApp.default_kernel_name=kli",
            # A client without a kernel id finds the running kli kernel by listing them.
            "--JupyterWebsocketPersonality.list_kernels=True"]
        self.gateway = subprocess.Popen(
            [*jupyter, "kernelgateway",
             "--KernelGatewayApp.ip=127.0.0.1",
             f"--KernelGatewayApp.port={self.gateway_port}",
             f"--KernelGatewayApp.auth_token={GATEWAY_TOKEN}", *configured],
            cwd=self.root, env=self.env, stdout=self.gateway_log.open("wb"),
            stderr=subprocess.STDOUT)
        self.server_log = tmp / "server.log"
        self.server: subprocess.Popen[bytes] | None = None
        try:
            specs = wait_http(f"{self.gateway_url}/api/kernelspecs", GATEWAY_TOKEN, self.gateway,
                              self.gateway_log)
            assert "kli" in specs["kernelspecs"]
            assert specs["default"] == ("python3" if defaults else "kli")
            if defaults:
                self.track()
                return
            self.server = subprocess.Popen(
                [*jupyter, "server", "--allow-root", "--no-browser", "--ip=127.0.0.1",
                 f"--port={self.server_port}", f"--ServerApp.root_dir={self.root}",
                 f"--IdentityProvider.token={SERVER_TOKEN}", "--ServerApp.password=",
                 f"--gateway-url={self.gateway_url}",
                 f"--GatewayClient.auth_token={GATEWAY_TOKEN}",
                 "--GatewayClient.request_timeout=30"],
                cwd=self.root, env=self.env, stdout=self.server_log.open("wb"),
                stderr=subprocess.STDOUT)
            wait_http(f"{self.server_url}/api/kernelspecs", SERVER_TOKEN, self.server,
                      self.server_log)
        except BaseException:
            self.stop()
            raise
        self.track()

    def track(self) -> set[int]:
        """Record (and return) the pids now under the gateway and the server."""
        import psutil

        now: set[int] = set()
        for proc in (self.gateway, self.server):
            if proc is None or proc.poll() is not None:
                continue
            try:
                parent = psutil.Process(proc.pid)
                now |= {proc.pid} | {c.pid for c in parent.children(recursive=True)}
            except psutil.NoSuchProcess:
                pass
        self.seen |= now
        return now

    def gateway_kernel_pids(self) -> set[int]:
        import psutil

        self.track()
        kids = psutil.Process(self.gateway.pid).children(recursive=True)
        return {c.pid for c in kids if "kli.kernel" in " ".join(c.cmdline())}

    def alive(self) -> list[int]:
        import psutil

        out = []
        for pid in sorted(self.seen):
            try:
                if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                    out.append(pid)
            except psutil.NoSuchProcess:
                pass
        return out

    def stop(self) -> list[int]:
        """Stop the server, then the gateway; the pids still alive after a grace period (then
        killed, so nothing outlives the tests even when one fails)."""
        for proc in (self.server, self.gateway):
            if proc is None or proc.poll() is not None:
                continue
            self.track()
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        deadline = time.monotonic() + 10
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        leftover = self.alive()
        for pid in leftover:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        return leftover


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    s = Stack(tmp_path_factory.mktemp("gateway"))
    yield s
    s.stop()


@pytest.fixture(scope="module")
def default_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A Kernel Gateway at its default configuration (GET /api/kernels answers 403)."""
    s = Stack(tmp_path_factory.mktemp("gateway-defaults"), defaults=True)
    yield s
    s.stop()
