"""``LiveNotebooks.route``: the one decision of which document a notebook tool changes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from kli.kernel.notebook.live import DISK, LiveNotebooks


def test_a_kernel_no_server_started_edits_notebooks_on_disk(tmp_path: Path) -> None:
    store = LiveNotebooks(env={})
    route = store.route(str(tmp_path / "nb.ipynb"))
    assert route.path == DISK and "JPY_PARENT_PID" in route.reason
    assert not store.live


def test_a_notebook_outside_the_servers_root_is_edited_on_disk(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    (runtime / "jpserver-4242.json").write_text(json.dumps(
        {"url": "http://127.0.0.1:9/", "token": "", "root_dir": str(root)}))
    store = LiveNotebooks(env={"JPY_PARENT_PID": "4242", "JUPYTER_RUNTIME_DIR": str(runtime),
                               "JPY_SESSION_NAME": str(root / "nb.ipynb")})
    server = store.server()
    assert server is not None and server.rel(str(root / "sub" / "a.ipynb")) == "sub/a.ipynb"
    route = store.route(os.path.realpath(tmp_path / "elsewhere.ipynb"))
    assert route.path == DISK and "outside the server's root" in route.reason


def test_a_server_that_is_gone_leaves_notebooks_on_disk(tmp_path: Path) -> None:
    store = LiveNotebooks(env={"JPY_PARENT_PID": "4243", "JUPYTER_RUNTIME_DIR": str(tmp_path)})
    assert store.route(str(tmp_path / "nb.ipynb")).path == DISK
