"""A real Jupyter server with jupyter-collaboration on loopback, a kli kernel it starts for a
notebook (so the kernel has JPY_PARENT_PID and JPY_SESSION_NAME), an agent attached to that
kernel through the server, and a second Y client of the notebook's room standing for the person.
No browser is opened."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kli import client
from tests.jupyter_server import JupyterServer, folders, jupyter_dirs, launch, serve
from tests.kernelspec import write_kli_kernelspec
from tests.ports import free_port

pytest.importorskip("jupyter_server_ydoc", reason="jupyter-collaboration is not installed")
pytest.importorskip("jupyter_nbmodel_client", reason="jupyter-nbmodel-client is not installed")

START_TIMEOUT = 60.0
SAVE_DELAY = 0.5  # the server's document_save_delay, seconds


@dataclass
class CollabServer(JupyterServer):
    """A jupyter_server with jupyter-collaboration (notebooks and sessions:
    tests/jupyter_server.py)."""

    api_timeout = 20.0

    def saved(self, name: str) -> dict[str, Any]:
        """The notebook as the server last saved it. The server writes the file in place, so
        a read can land mid-save (an empty or cut file, ci13): read again."""
        for _ in range(50):
            try:
                return dict(json.loads((self.root / name).read_text(encoding="utf-8")))
            except json.JSONDecodeError:
                time.sleep(0.05)
        return dict(json.loads((self.root / name).read_text(encoding="utf-8")))


@contextlib.contextmanager
def start_collab_server(base: Path, *, collaboration: bool = True) -> Iterator[CollabServer]:
    """A jupyter_server on loopback with the kli kernelspec; ``collaboration=False`` turns the
    jupyter-collaboration server extension off (a plain server)."""
    root, runtime, share = folders(base)
    write_kli_kernelspec(share)
    env = dict(os.environ)
    env.update(jupyter_dirs(base, runtime), JUPYTER_PATH=str(share))
    port = free_port()
    log = base / "server.log"
    flags = [f"--YDocExtension.document_save_delay={SAVE_DELAY}"]
    if not collaboration:
        flags.append("--ServerApp.jpserver_extensions=jupyter_server_ydoc=False")
    proc = launch("jupyter_server", port, root, *flags, env=env, log=log)
    with serve(CollabServer(f"http://127.0.0.1:{port}", root, proc, log), START_TIMEOUT) as server:
        yield server


@pytest.fixture(scope="module")
def plain_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CollabServer]:
    with start_collab_server(tmp_path_factory.mktemp("plain"), collaboration=False) as server:
        yield server


@pytest.fixture(scope="module")
def collab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CollabServer]:
    with start_collab_server(tmp_path_factory.mktemp("collab")) as server:
        yield server


class Person:
    """A second Y client of a notebook's room (what a person's browser is to the server)."""

    def __init__(self, server: CollabServer, name: str) -> None:
        from jupyter_nbmodel_client import NbModelClient, get_jupyter_notebook_websocket_url

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        url = get_jupyter_notebook_websocket_url(server.url, name)
        self.client = NbModelClient(url, path=name, username="person")
        self._run_coro(self.client.start())
        assert self.client.synced

    def _run_coro(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def _on_loop(self, fn: Callable[[], Any]) -> Any:
        async def call() -> Any:
            return fn()

        return self._run_coro(call())

    def sources(self) -> list[str]:
        doc = self.client._doc
        return self._on_loop(lambda: [str(doc.ycells[i]["source"])
                                      for i in range(len(doc.ycells))])

    def cell(self, index: int) -> dict[str, Any]:
        return dict(self._on_loop(lambda: self.client._doc.get_cell(index)))

    def type_into(self, index: int, at: int, text: str) -> None:
        """Insert ``text`` at character ``at`` of cell ``index`` (typing)."""
        doc = self.client._doc
        self._on_loop(lambda: doc.ycells[index]["source"].insert(at, text))

    def wait_for(self, check: Callable[[], bool], timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                raise AssertionError(f"not seen in the person's document: {self.sources()}")
            time.sleep(0.05)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._run_coro(self.client.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)


@contextlib.contextmanager
def live_notebook(collab: CollabServer, name: str, cells: list[tuple[str, str]],
                  timeout: float = 120) -> Iterator[tuple[str, Any, Person]]:
    """A new notebook ``name`` of ``cells`` (id, source) open on ``collab`` with a kernel: its
    name, an agent attached to that kernel through the server, and a person in its live
    document; both closed at the end."""
    name = collab.new_notebook(name, cells)
    kernel_id = collab.start_session(name)
    agent = client.connect_server(collab.url, kernel_id=kernel_id, timeout=timeout)
    person = Person(collab, name)
    try:
        yield name, agent, person
    finally:
        person.close()
        agent.close()
