"""The sandboxed kernel started by a real Jupyter server (docs/sandbox.md): the server's
TCP sockets reach the kernel in the box through its launcher, an agent attached over the
server's websocket works in the box (writes outside fail, NoNewPrivs), the server's interrupt
reaches it, and deleting the kernel leaves nothing running."""

from __future__ import annotations

import json
import os
import shutil
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.jupyter_server import JupyterServer, folders, jupyter_dirs, launch, serve
from tests.ports import free_port
from tests.waiting import wait_until

SPEC = Path(__file__).resolve().parents[2] / "kernel" / "kernelspec-sandboxed"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[JupyterServer]:
    if shutil.which("bwrap") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("bubblewrap (bwrap) is missing, and CI installs it: the box is untested")
        pytest.skip("bubblewrap (bwrap) is not installed (apt-get install bubblewrap)")
    root, runtime, share = folders(tmp_path)
    spec_dir = share / "kernels" / "kli-sandboxed"
    spec_dir.mkdir(parents=True)
    spec = json.loads((SPEC / "kernel.json").read_text())
    spec["argv"] = [sys.executable, *spec["argv"][1:]]
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    env = dict(os.environ, **jupyter_dirs(tmp_path, runtime), JUPYTER_PATH=str(share),
               XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    port = free_port()
    log = tmp_path / "server.log"
    proc = launch("jupyter_server", port, root, env=env, log=log)
    with serve(JupyterServer(f"http://127.0.0.1:{port}", root, proc, log), 60) as srv:
        yield srv


def test_a_server_started_sandboxed_kernel_is_boxed_and_leaves_nothing(server: JupyterServer
                                                                       ) -> None:
    from kli import client

    kernel = server.api("POST", "/api/kernels", {"name": "kli-sandboxed"})
    outside = Path("/var/tmp") / f"kli-sandbox-test-{uuid.uuid4().hex[:12]}"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("original\n")
    try:
        with client.connect_server(server.url, "", kernel["id"], timeout=60) as k:
            inside = k.call("bash", {"command": "grep NoNewPrivs /proc/self/status"})
            assert inside.ok and "NoNewPrivs:\t1" in inside.text
            r = k.call("eval", {"code": f"open({str(victim)!r}, 'w').write('evil')"})
            assert not r.ok and "Read-only file system" in r.text
            assert victim.read_text() == "original\n"
            made = k.call("bash", {"command": "echo work > made.txt"})
            assert made.ok and (server.root / "made.txt").read_text() == "work\n"
        server.api("POST", f"/api/kernels/{kernel['id']}/interrupt")  # message mode: no error
    finally:
        server.api("DELETE", f"/api/kernels/{kernel['id']}")
        shutil.rmtree(outside, ignore_errors=True)
    wait_until(lambda: not server.api("GET", "/api/kernels"), "the kernel to be gone")
