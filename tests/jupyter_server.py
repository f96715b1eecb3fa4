"""A real Jupyter server for the tests that need one, in folders of its own under a base folder.

The one home of what every such server shares: its folders and Jupyter directories, the kli
kernelspec running this Python (tests/kernelspec.py), the command line (loopback, a given port,
no token, password or xsrf check), its start (polling ``/api/status`` until it answers, the
log's tail when it does not) and its stop (its sessions closed, then terminate, wait, kill); and
what a test does with it: write a kli notebook, open it (a session: its kernel), find its
kernel and connection file, close the sessions. The starters add what is theirs: tests/ai/harness.py, tests/ai/acp/conftest.py (Jupyter AI's venv),
tests/notebook_live/conftest.py and tests/browser/conftest.py (the shared test venv).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, NoReturn, TypeVar

import pytest

from tests.kernelspec import write_kli_kernelspec
from tests.processes import descendants, outliving

# The writer's former name here; tests/ai's starters still import it.
kli_kernelspec = write_kli_kernelspec
LOG_TAIL_CHARS = 3000  # of the server's log, in a failure's message


@dataclass
class JupyterServer:
    """A started server: its URL, root folder, process and log file."""

    url: str
    root: Path
    process: subprocess.Popen[bytes]
    log: Path

    api_timeout: ClassVar[float] = 30.0  # seconds, for a request without its own timeout
    # The token a server was launched with (``launch(token=)``), which ``api`` sends.
    token: ClassVar[str] = ""

    def api(self, method: str, path: str, body: Any = None, timeout: float | None = None) -> Any:
        """``METHOD PATH`` with ``body`` as JSON; the JSON answer (None when empty). Raises
        urllib's errors (HTTPError for a status of 400 or more)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", f"token {self.token}")
        wait = self.api_timeout if timeout is None else timeout
        with urllib.request.urlopen(req, timeout=wait) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    @property
    def runtime_dir(self) -> Path:
        """The server's runtime folder (``folders`` makes it beside the root): its kernels'
        connection files."""
        return self.root.parent / "runtime"

    def new_notebook(self, name: str, cells: Sequence[str | tuple[str, str]] | None = None,
                     kernel: str = "kli") -> str:
        """Write notebook ``name`` (its path from the root) through the contents API: a code
        cell per item of ``cells`` (None: one empty cell), its source or ``(id, source)``, and
        kernelspec ``kernel``. Returns ``name``."""
        made = []
        for cell in cells if cells is not None else [""]:
            cid, src = cell if isinstance(cell, tuple) else (None, cell)
            made.append({"cell_type": "code", "execution_count": None, "metadata": {},
                         "outputs": [], "source": src, **({"id": cid} if cid else {})})
        display = "Python 3 (kli)" if kernel == "kli" else kernel
        nb = {
            "cells": made,
            "metadata": {"kernelspec": {"name": kernel, "display_name": display,
                                        "language": "python"},
                         "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": 5,
        }
        self.api("PUT", f"/api/contents/{name}", {"type": "notebook", "format": "json",
                                                   "content": nb})
        return name

    def start_session(self, name: str, kernel: str = "kli") -> str:
        """Start a ``kernel`` kernel for notebook ``name`` (its path from the root), as opening
        it in JupyterLab does (the session named for the file); the kernel's id."""
        s = self.api("POST", "/api/sessions", {"path": name, "type": "notebook",
                                               "name": name.rsplit("/", 1)[-1],
                                               "kernel": {"name": kernel}})
        return str(s["kernel"]["id"])

    def kernel_id(self, notebook: str) -> str:
        """The id of the kernel of ``notebook``'s session; LookupError when it has none."""
        for s in self.api("GET", "/api/sessions"):
            if s.get("path") == notebook and s.get("kernel"):
                return str(s["kernel"]["id"])
        raise LookupError(f"no session for {notebook}")

    def connection_file(self, kernel_id: str) -> Path:
        """The connection file of kernel ``kernel_id`` (in the server's runtime folder)."""
        return self.runtime_dir / f"kernel-{kernel_id}.json"

    def close_sessions(self) -> None:
        """Shut every session down (and so its kernel), past one the server no longer knows."""
        for s in self.api("GET", "/api/sessions"):
            with contextlib.suppress(urllib.error.URLError):
                self.api("DELETE", f"/api/sessions/{s['id']}")


Server = TypeVar("Server", bound=JupyterServer)


def folders(base: Path) -> tuple[Path, Path, Path]:
    """The server's root, runtime and ``share/jupyter`` folders under ``base``, made."""
    root, runtime, share = base / "root", base / "runtime", base / "share" / "jupyter"
    for d in (root, runtime, share):
        d.mkdir(parents=True)
    return root, runtime, share


def jupyter_dirs(base: Path, runtime: Path) -> dict[str, str]:
    """The environment that keeps the server's config, data and runtime files under ``base``
    (the caller adds ``JUPYTER_PATH`` where it has a kernelspec of its own)."""
    return {"JUPYTER_CONFIG_DIR": str(base / "config"), "JUPYTER_DATA_DIR": str(base / "data"),
            "JUPYTER_RUNTIME_DIR": str(runtime), "JUPYTER_PLATFORM_DIRS": "1",
            "PYTHONUNBUFFERED": "1"}


def launch(module: str, port: int, root: Path, *flags: str, env: dict[str, str],
           log: Path, token: str = "") -> subprocess.Popen[bytes]:
    """``python -m MODULE`` serving ``root`` on 127.0.0.1:PORT with ``token`` (none unless
    given: the server's ``JupyterServer.token`` then names it), no password or xsrf check, then
    ``flags`` (``--allow-root`` last when run as root), started in ``root`` with ``env``, its
    output (both streams) written to ``log``."""
    cmd = [sys.executable, "-m", module, "--no-browser",
           "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
           f"--IdentityProvider.token={token}", "--ServerApp.password=",
           "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={root}", *flags]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    with open(log, "wb") as out:
        return subprocess.Popen(cmd, env=env, cwd=root, stdout=out, stderr=subprocess.STDOUT)


def fail_test(exit_code: int | None, log_tail: str) -> NoReturn:
    """The test fails: the server exited (``exit_code``) or did not answer in time (None)."""
    if exit_code is not None:
        pytest.fail(f"the server exited:\n{log_tail}")
    pytest.fail(f"the server did not start:\n{log_tail}")


@contextlib.contextmanager
def serve(server: Server, start_timeout: float, *, stop_timeout: float = 15.0,
          ready: Callable[[], object] = lambda: None,
          fail: Callable[[int | None, str], NoReturn] = fail_test) -> Iterator[Server]:
    """``server`` once ``/api/status`` answers and ``ready()`` returns (both retried every
    0.25 s while they raise an OSError, for ``start_timeout`` seconds); ``fail(exit code or
    None, the log's tail)`` when the server exits first or the time runs out. On exit, even a
    failed start: its sessions closed (when it still answers), then terminate, ``stop_timeout``
    seconds' wait, kill; and the test fails when anything the server started (a kernel, an
    agent a persona started in a session of its own) outlives it — killed all the same."""
    proc = server.process
    try:
        deadline = time.monotonic() + start_timeout
        while True:
            if proc.poll() is not None:
                fail(proc.returncode, server.log_text()[-LOG_TAIL_CHARS:])
            try:
                server.api("GET", "/api/status")
                ready()
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if time.monotonic() > deadline:
                    fail(None, server.log_text()[-LOG_TAIL_CHARS:])
                time.sleep(0.25)
        yield server
    finally:
        with contextlib.suppress(urllib.error.URLError, OSError):
            server.close_sessions()
        started = descendants(proc.pid)
        proc.terminate()
        try:
            proc.wait(timeout=stop_timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        left = outliving(started)
        if left and sys.exc_info()[0] is None:  # never hides the failure that stopped it
            pytest.fail("the server stopped and left behind what it started:\n"
                        + "\n".join(f"  {pid}: {cmd[:200]}" for pid, cmd in left.items()))


def ready_client(connection_file: str | Path) -> Any:
    """A started jupyter_client ``BlockingKernelClient`` of the kernel a server started, once it
    answers: a client without its kernel's manager judges a starting kernel dead by its
    heartbeat, so it asks again (up to 90 s)."""
    from jupyter_client.blocking.client import BlockingKernelClient

    kc = BlockingKernelClient(connection_file=str(connection_file))
    kc.load_connection_file()
    kc.start_channels()
    deadline = time.monotonic() + 90
    while True:
        try:
            kc.wait_for_ready(timeout=30)
            return kc
        except RuntimeError:
            if time.monotonic() > deadline:
                kc.stop_channels()
                raise
            time.sleep(0.5)
