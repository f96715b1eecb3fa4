"""Jupyter Enterprise Gateway 3.x on loopback with its local process proxy, serving the kli
kernelspec: ``kli.client.connect_server`` and ``kli mcp --server-url`` against it.

Enterprise Gateway 3.x needs jupyter_server < 2 and jupyter_client 6, which the test
environment's JupyterLab cannot share, so it runs from a virtual environment of its own
(``$PREFIX/enterprise-gateway``, made on first use from the package index and kept). Its
kernels run the test environment's Python: the kernelspec it serves names that interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kli import client
from tests.installer import install_command
from tests.kernelspec import write_kli_kernelspec

from .conftest import free_port, http_json

pytestmark = [pytest.mark.kernel, pytest.mark.gateway]

EG_VERSION = "jupyter_enterprise_gateway>=3.3,<4"
EG_TOKEN = "eg-secret"
START_TIMEOUT = 60.0


def _eg_python() -> Path:
    """The Enterprise Gateway environment's python, made once per test environment."""
    venv = Path(sys.prefix) / "enterprise-gateway"
    python = venv / "bin" / "python"
    if not (venv / "bin" / "jupyter-enterprisegateway").exists():
        print(f"\n[kli tests] installing {EG_VERSION} into {venv} (once)", file=sys.__stderr__,
              flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run(install_command(python, EG_VERSION), check=True, stderr=subprocess.DEVNULL)
    return python


class EnterpriseGateway:
    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "root"
        self.root.mkdir()
        # The kernel runs where kli is installed, started by EG's local process proxy.
        write_kli_kernelspec(tmp / "share" / "jupyter", {"process_proxy": {
            "class_name": "enterprise_gateway.services.processproxies.processproxy."
                          "LocalProcessProxy"}})
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "JUPYTER_PATH": str(tmp / "share" / "jupyter"),
                    "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
                    "XDG_CONFIG_HOME": str(tmp / "xdg")}
        self.env.pop("JUPYTER_TOKEN", None)
        self.log = tmp / "eg.log"
        self.proc = subprocess.Popen(
            [str(_eg_python()), "-m", "enterprise_gateway", "--ip=127.0.0.1",
             f"--port={self.port}", f"--EnterpriseGatewayApp.auth_token={EG_TOKEN}",
             "--EnterpriseGatewayApp.allowed_kernels=kli",
             # EG refuses kernels for user root unless told otherwise; CI runs as root.
             "--EnterpriseGatewayApp.unauthorized_users=nobody"],
            cwd=self.root, env=self.env, stdout=self.log.open("wb"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                specs = http_json(f"{self.url}/api/kernelspecs", EG_TOKEN)
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise AssertionError(f"Enterprise Gateway did not start: "
                                         f"{self.log.read_text()[-2000:]}") from None
                time.sleep(0.3)
        assert list(specs["kernelspecs"]) == ["kli"]

    def kernel_pids(self) -> set[int]:
        import psutil

        return {c.pid for c in psutil.Process(self.proc.pid).children(recursive=True)
                if "kli.kernel" in " ".join(c.cmdline())}

    def stop(self) -> None:
        import psutil

        kids = []
        if self.proc.poll() is None:
            kids = psutil.Process(self.proc.pid).children(recursive=True)
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        for kid in kids:
            try:
                kid.kill()
            except psutil.NoSuchProcess:
                pass


@pytest.fixture(scope="module")
def eg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EnterpriseGateway]:
    g = EnterpriseGateway(tmp_path_factory.mktemp("eg"))
    yield g
    g.stop()


def test_connect_server_starts_a_kli_kernel_at_enterprise_gateway_and_works_in_it(
        eg: EnterpriseGateway) -> None:
    (eg.root / "e.py").write_text("e = 1\n")
    with client.connect_server(eg.url, EG_TOKEN, timeout=60) as k:
        assert k.transport.owned  # EG forbids listing kernels by default: one was started
        assert k.cwd == str(eg.root)
        assert k.call("read", {"path": "e.py"}).text.endswith("|e = 1")
        pid = int(k.call("eval", {"code": "import os\nos.getpid()"}).text.split("] ", 1)[1])
        assert pid in eg.kernel_pids(), "the kernel is not a process of the gateway"
    assert _gone(eg, pid)  # closing the client shut its kernel down


def test_kli_mcp_with_server_url_serves_a_kernel_of_enterprise_gateway(
        eg: EnterpriseGateway) -> None:
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp_types import Implementation

    (eg.root / "m.py").write_text("m = 1\n")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kli.tools.cli", "mcp", "--server-url", eg.url, "--server-token", EG_TOKEN],
        env=eg.env)

    async def body() -> Any:
        with anyio.fail_after(120):
            async with Client(params, client_info=Implementation(name="eg-agent",
                                                                 version="1")) as c:
                read = await c.call_tool("read", {"path": "m.py"})
                pid = await c.call_tool("eval", {"code": "import os\nos.getpid()"})
                return ("\n".join(x.text for x in read.content),
                        int("\n".join(x.text for x in pid.content).split("] ", 1)[1]))

    text, pid = anyio.run(body)
    assert text.endswith("|m = 1")
    assert _gone(eg, pid)  # kli mcp stopped: the kernel it started is gone


def _gone(eg: EnterpriseGateway, pid: int, within: float = 15.0) -> bool:
    deadline = time.monotonic() + within
    while pid in eg.kernel_pids():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True
