"""JupyterHub on loopback, as teaching runs it: a real hub (6.x) with configurable-http-proxy
from npm, a dummy authenticator and the simple local-process spawner (the user's server runs
as this user, so no system account is needed), a user whose single-user server has the kli
kernel, and an agent attached through the hub's proxy with a hub API token —
``kli.client.connect_server`` and ``kli mcp --server-url``."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kli import client

from .conftest import free_port

pytestmark = [pytest.mark.kernel, pytest.mark.gateway, pytest.mark.hub]

ADMIN_TOKEN = "hub-admin-secret"
USER = "alice"
START_TIMEOUT = 120.0


def _chp() -> str:
    """configurable-http-proxy: on PATH, or in the test environment, where scripts/test
    installs it (``npm install --prefix $VENV/npm``)."""
    found = shutil.which("configurable-http-proxy") or str(
        Path(sys.prefix) / "npm" / "node_modules" / ".bin" / "configurable-http-proxy")
    if not os.path.exists(found):
        pytest.fail("configurable-http-proxy is not installed: run scripts/test, or npm install "
                    f"--prefix {sys.prefix}/npm configurable-http-proxy@5")
    return found


def _api(base: str, path: str, token: str, method: str = "GET", body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"{base}{path}", data=data, method=method,
                                 headers={"Authorization": f"token {token}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        raw = resp.read()
    return json.loads(raw) if raw else None


class Hub:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.home = tmp / "homes" / USER
        self.home.mkdir(parents=True)
        self.port, self.hub_port, self.api_port = free_port(), free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = tmp / "jupyterhub_config.py"
        config.write_text(f"""
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {self.port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {self.hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{self.api_port}"
c.ConfigurableHTTPProxy.command = [{_chp()!r}]
c.ConfigurableHTTPProxy.pid_file = {str(tmp / "proxy.pid")!r}
c.JupyterHub.db_url = "sqlite:///{tmp / 'hub.sqlite'}"
c.JupyterHub.cookie_secret_file = {str(tmp / "cookie_secret")!r}
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = {str(tmp / "homes" / "{username}")!r}
c.Spawner.cmd = [{sys.executable!r}, "-m", "jupyterhub.singleuser"]
c.Spawner.args = ["--allow-root"]
c.Spawner.start_timeout = 90
c.Spawner.environment = {{"XDG_CONFIG_HOME": {str(tmp / "xdg")!r}}}
c.JupyterHub.services = [{{"name": "kli-test", "api_token": {ADMIN_TOKEN!r}}}]
c.JupyterHub.load_roles = [{{"name": "kli-test", "services": ["kli-test"],
                             "scopes": ["admin:users", "admin:servers", "tokens"]}}]
""")
        self.env = dict(os.environ)
        self.env.pop("JUPYTER_TOKEN", None)
        self.env["JUPYTER_RUNTIME_DIR"] = str(tmp / "runtime")
        self.log = tmp / "hub.log"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(config)], cwd=tmp, env=self.env,
            stdout=self.log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
        try:
            self._wait(lambda: _api(self.url, "/hub/api/", ADMIN_TOKEN), "the hub")
            _api(self.url, f"/hub/api/users/{USER}", ADMIN_TOKEN, "POST", {})
            _api(self.url, f"/hub/api/users/{USER}/server", ADMIN_TOKEN, "POST", {})
            self._wait(self._ready, f"{USER}'s server")
            self.user_token = _api(self.url, f"/hub/api/users/{USER}/tokens", ADMIN_TOKEN,
                                   "POST", {"note": "kli agent"})["token"]
        except BaseException:
            self.stop()
            raise

    def _ready(self) -> bool:
        user = _api(self.url, f"/hub/api/users/{USER}", ADMIN_TOKEN)
        return bool((user.get("servers") or {}).get("", {}).get("ready"))

    def _wait(self, probe: Any, what: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"jupyterhub exited: {self.log.read_text()[-3000:]}")
            try:
                if probe():
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.5)
        raise AssertionError(f"{what} was not ready within {START_TIMEOUT:g} s: "
                             f"{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        # The user's server and the proxy run in the hub's process group, killed with it.
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory, kli_kernelspec: str) -> Iterator[Hub]:
    h = Hub(tmp_path_factory.mktemp("hub"))
    yield h
    h.stop()


def test_an_agent_reaches_a_hub_users_kernel_through_the_proxy_with_a_hub_token(
        hub: Hub) -> None:
    (hub.home / "h.py").write_text("h = 1\n")
    server = f"{hub.url}/user/{USER}"
    with client.connect_server(server, hub.user_token, timeout=60) as k:
        assert k.transport.owned  # no kli kernel ran: one was started in alice's server
        assert k.cwd == str(hub.home)
        assert k.call("read", {"path": "h.py"}).text.endswith("|h = 1")
        pid = int(k.call("eval", {"code": "import os\nos.getpid()"}).text.split("] ", 1)[1])
        assert pid != os.getpid()
    with pytest.raises(client.KernelError) as info:  # the hub's proxy refuses a wrong token
        client.connect_server(server, "not-a-hub-token", timeout=30)
    assert "cannot reach" not in str(info.value)


def test_kli_mcp_with_server_url_drives_a_hub_users_kernel(hub: Hub) -> None:
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp_types import Implementation

    (hub.home / "m.py").write_text("m = 1\n")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kli.tools.cli", "mcp", "--server-url", f"{hub.url}/user/{USER}"],
        env={**hub.env, "JUPYTER_TOKEN": hub.user_token})

    async def body() -> str:
        with anyio.fail_after(120):
            async with Client(params, client_info=Implementation(name="hub-agent",
                                                                 version="1")) as c:
                read = await c.call_tool("read", {"path": "m.py"})
                assert not read.is_error
                return "\n".join(x.text for x in read.content)

    assert anyio.run(body).endswith("|m = 1")
