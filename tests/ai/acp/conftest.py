"""A real Jupyter server with Jupyter AI 3.2 (its persona manager, ACP client and
jupyter-server-mcp's MCP server on a port of its own), a kli kernel it starts for a notebook,
and MCP clients that speak to Jupyter AI's MCP endpoint as a chat's agent does: with the
``X-Jupyter-Chat-Id`` and ``X-JupyterAI-Persona-Id`` headers the persona manager puts on it.
Nothing is mocked; no browser is opened. The server (``AiServer``), a chat (``Chat``) and a chat's
agent on the MCP endpoint (``Agent``) are tests/ai/harness.py's, shared with the persona's tests."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from tests.ai.harness import Agent, AiServer, Script
from tests.jupyter_server import folders, jupyter_dirs, kli_kernelspec, launch, serve
from tests.ports import free_port

for _module in ("jupyter_ai", "jupyter_server_mcp", "fastmcp"):
    if os.environ.get("CI"):  # in CI these tests run, never skip: a missing package is a failure
        importlib.import_module(_module)
    else:
        pytest.importorskip(_module, reason=f"{_module} is not installed (scripts/test runs "
                            "tests/ai in .venv-test-ai)")

START_TIMEOUT = 90.0


def npm_agent(command: str) -> str:
    """The agent CLI ``command`` of npm package ``@zed-industries/COMMAND``: on PATH, or where
    scripts/test installs it (``$AI_VENV/npm``). Fails in CI (the real agent runs there, never
    skips); skips elsewhere."""
    found = shutil.which(command) or str(Path(sys.prefix) / "npm" / "node_modules" / ".bin" / command)
    if not os.access(found, os.X_OK):
        message = (f"{command} is not installed: run scripts/test tests/ai, or npm install "
                   f"--prefix $VENV/npm @zed-industries/{command}")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def kli_ai(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``kli ai ARGS`` as a person runs it (the console script's ``main``)."""
    return subprocess.run([sys.executable, "-m", "kli.tools.cli", "ai", *args], env=env,
                          capture_output=True, text=True, timeout=60)


@dataclasses.dataclass
class TokenAiServer(AiServer):
    """An ``AiServer`` launched with a token (``start_ai_server(token=True)``), which its
    requests send."""

    token: ClassVar[str] = secrets.token_hex(24)


@contextlib.contextmanager
def start_ai_server(base: Path, *, enable: bool, pythonpath: list[Path] = (),  # type: ignore[assignment]
                    mcp_settings: bool = False, args: tuple[str, ...] = (),
                    env: dict[str, str] | None = None, token: bool = False) -> Iterator[AiServer]:
    """A jupyter_server with every extension of this environment (Jupyter AI 3.2 among them) on
    loopback, jupyter-server-mcp on a free port, the kli kernelspec of this worktree, and
    ``kli ai enable`` run first when ``enable``. ``pythonpath``: more for the server's import
    path; ``mcp_settings``: a ``.jupyter/mcp_settings.json`` in the root naming the MCP
    endpoint ``kli-test`` (what a person writes for an agent; the headless chat route builds
    its persona manager without the server's config, so its built-in entry keeps port 3001);
    ``args``: more server options; ``env``: more of the server's environment (its agents
    inherit it); ``token``: the server wants a token, as a person's ``jupyter lab`` does
    (``TokenAiServer``; without it, none)."""
    root, runtime, share = folders(base)
    kli_kernelspec(share)
    extra, env = env or {}, dict(os.environ)
    env.update(extra)
    env.update(jupyter_dirs(base, runtime), JUPYTER_PATH=str(share),
               XDG_CONFIG_HOME=str(base / "xdg"))
    env.pop("PYTEST_CURRENT_TEST", None)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join([*map(str, pythonpath), env.get("PYTHONPATH", "")])
    key = ""
    if enable:
        done = kli_ai(env, "enable")
        assert done.returncode == 0, done.stdout + done.stderr
        key = json.loads(kli_ai(env, "key").stdout)["value"]
    port, mcp_port = free_port(), free_port()
    log = base / "server.log"
    if mcp_settings:
        (root / ".jupyter").mkdir()
        # a person's own entry for the endpoint carries the key, as `kli ai key` prints it
        headers = [{"name": "X-Kli-Key", "value": key}] if key else []
        (root / ".jupyter" / "mcp_settings.json").write_text(json.dumps({"mcp_servers": [
            {"type": "http", "name": "kli-test", "url": f"http://localhost:{mcp_port}/mcp",
             "headers": headers}]}))
    kind = TokenAiServer if token else AiServer
    proc = launch("jupyter_server", port, root, f"--MCPExtensionApp.mcp_port={mcp_port}", *args,
                  env=env, log=log, token=kind.token)
    server = kind(f"http://127.0.0.1:{port}", root, proc, log, runtime, Script(), env,
                      f"http://localhost:{mcp_port}/mcp", key)

    def mcp_listening() -> None:
        socket.create_connection(("127.0.0.1", mcp_port), timeout=1).close()

    with serve(server, START_TIMEOUT, stop_timeout=20, ready=mcp_listening):
        yield server


@pytest.fixture(scope="module")
def off_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AiServer]:
    with start_ai_server(tmp_path_factory.mktemp("off"), enable=False) as server:
        yield server


@pytest.fixture(scope="module")
def ai_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AiServer]:
    with start_ai_server(tmp_path_factory.mktemp("on"), enable=True) as server:
        yield server


__all__ = ["Agent", "AiServer", "kli_ai", "npm_agent", "start_ai_server"]
