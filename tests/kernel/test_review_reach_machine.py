"""A notebook under review holds the calls of the hosts outside Jupyter AI that can change it
(kli.kernel.client.reach): ``kli mcp``'s bridge attached to another notebook's kernel, and
``%kli agent``'s host in that kernel. A real Jupyter server (found as every host finds it: its
``jpserver-*.json`` and ``GET /api/sessions``) with two kli notebooks, a.ipynb under review by
the person's magic and sub/b.ipynb on auto; the calls run in b's kernel and would ``sed``
../a.ipynb. Jupyter AI's route and persona: tests/ai/acp/test_route_locked.py and
tests/ai/test_persona.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.jupyter_server import JupyterServer, folders, jupyter_dirs, launch, ready_client, serve
from tests.kernelspec import write_kli_kernelspec
from tests.ports import free_port

pytestmark = pytest.mark.kernel

SED = "sed -i 's/a = 1/a = 666/' ../a.ipynb"
HELD = "a.ipynb is under review for shell commands, and this bash can change it"


def _notebook(server: JupyterServer, path: str, source: str) -> str:
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {},
                     "outputs": [], "source": source}],
          "metadata": {"kernelspec": {"name": "kli", "display_name": "kli", "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    server.api("PUT", f"/api/contents/{path}", {"type": "notebook", "format": "json", "content": nb})
    session = server.api("POST", "/api/sessions", {"path": path, "type": "notebook", "name": path,
                                                   "kernel": {"name": "kli"}})
    return str(session["kernel"]["id"])


def _run(connection_file: Path, code: str) -> str:
    """Run a cell in the kernel of ``connection_file``, as a person does; its printed text."""
    kc = ready_client(connection_file)
    try:
        out: list[str] = []
        reply = kc.execute_interactive(code, timeout=120, output_hook=lambda m: out.append(
            m["content"].get("text", "") if m["msg_type"] == "stream" else ""))
        assert reply["content"]["status"] == "ok", reply["content"]
        return "".join(out)
    finally:
        kc.stop_channels()


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[JupyterServer, Path, Path]]:
    """The server, a.ipynb's kernel (under review) and sub/b.ipynb's (auto): connection files."""
    base = tmp_path_factory.mktemp("reach")
    root, runtime, share = folders(base)
    write_kli_kernelspec(share)
    env = dict(os.environ, **jupyter_dirs(base, runtime), JUPYTER_PATH=str(share),
               XDG_CONFIG_HOME=str(base / "xdg"))
    port = free_port()
    log = base / "server.log"
    proc = launch("jupyter_server", port, root, env=env, log=log)
    with serve(JupyterServer(f"http://127.0.0.1:{port}", root, proc, log), 60) as server:
        server.api("PUT", "/api/contents/sub", {"type": "directory"})
        a = runtime / f"kernel-{_notebook(server, 'a.ipynb', 'a = 1')}.json"
        b = runtime / f"kernel-{_notebook(server, 'sub/b.ipynb', 'b = 2')}.json"
        said = _run(a, "%kli approval review")
        assert "review" in said, said
        mp = pytest.MonkeyPatch()
        mp.setenv("JUPYTER_RUNTIME_DIR", str(runtime))  # where this process finds the server
        try:
            yield server, a, b
        finally:
            mp.undo()


def test_kli_mcps_call_in_another_kernel_that_can_change_a_notebook_under_review_is_held(
        two: tuple[JupyterServer, Path, Path]) -> None:
    from kli.kernel.mcp.bridge import Bridge
    from kli.kernel.mcp.targets import FileKernel

    server, _a, b = two
    before = (server.root / "a.ipynb").read_bytes()
    bridge = Bridge(FileKernel(str(b)), "kli")
    try:
        held = bridge.call("mcp", "mcp: test", "bash", {"command": SED})
        assert held.ok and held.details.get("status") == "pending", held.text
        assert HELD in held.text, held.text
        assert (server.root / "a.ipynb").read_bytes() == before
        # b's file tools cannot reach ../a.ipynb: a write inside sub/ is not held for it.
        wrote = bridge.call("mcp", "mcp: test", "write", {"path": "notes.txt", "content": "x\n"})
        assert wrote.ok and wrote.details.get("status") != "pending", wrote.text
    finally:
        bridge.close()


def test_kli_agents_host_in_another_kernel_holds_a_call_that_can_change_it(
        two: tuple[JupyterServer, Path, Path]) -> None:
    server, _a, b = two
    before = (server.root / "a.ipynb").read_bytes()
    said = _run(b, "from kli.kernel.agentcell import _ReviewedHost\n"
                   "k = get_ipython().kernel\n"
                   "s = k.workspace.open_session('agent: probe')\n"
                   f"r = _ReviewedHost(k.workspace, s).call('bash', {{'command': {SED!r}}})\n"
                   "print(r.details.get('status'), r.text)")
    assert said.startswith("pending") and HELD in said, said
    assert (server.root / "a.ipynb").read_bytes() == before
    # The same call with a.ipynb's review off runs: the hold came from a.ipynb.
    a_file = two[1]
    _run(a_file, "%kli approval auto")
    try:
        ran = _run(b, "r = _ReviewedHost(k.workspace, s).call('bash', {'command': 'echo ran'})\n"
                      "print(r.details.get('status'), r.text)")
        assert "ran" in ran and not ran.startswith("pending"), ran
    finally:
        _run(a_file, "%kli approval review")
