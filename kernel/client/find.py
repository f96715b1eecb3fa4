"""Which running kernel is a notebook's: found through the Jupyter servers of this machine (their
sessions API) or, for kernels no server lists, through the kernels' own ``JPY_SESSION_NAME``.

A Jupyter server writes ``jpserver-PID.json`` (its ``url``, ``token``, ``root_dir``) in the
runtime dir and removes it at exit; ``GET /api/sessions`` maps each open notebook's path
(relative to ``root_dir``) to its kernel. A kernel a server started has ``JPY_SESSION_NAME``
(the notebook's full path) in its environment, readable in ``/proc/PID/environ`` by the same
user, and its connection file on its command line.
"""

from __future__ import annotations

import glob
import json
import os
import urllib.request
from dataclasses import dataclass
from typing import Any

from kli.kernel.client.base import KernelError

HTTP_TIMEOUT = 5.0


@dataclass(frozen=True)
class Found:
    """A notebook's kernel: its connection file when it runs on this machine (attach over
    ZMQ), else the server that relays it (attach through its websocket)."""

    notebook: str  # the notebook's full path
    kernel_id: str | None = None
    connection_file: str | None = None
    server_url: str | None = None
    server_token: str = ""


def _runtime_dir() -> str:
    from jupyter_core.paths import jupyter_runtime_dir

    return str(jupyter_runtime_dir())


def running_servers() -> list[dict[str, Any]]:
    """The Jupyter servers whose ``jpserver-*.json`` is in the runtime dir (newest first)."""
    found = []
    for path in glob.glob(os.path.join(_runtime_dir(), "jpserver-*.json")):
        try:
            with open(path, encoding="utf-8") as f:
                info = json.load(f)
            info["_mtime"] = os.path.getmtime(path)
        except (OSError, ValueError):
            continue
        if isinstance(info, dict) and info.get("url"):
            found.append(info)
    return sorted(found, key=lambda i: -float(i["_mtime"]))


def alive(server: dict[str, Any]) -> bool:
    """Whether the process a ``jpserver-*.json`` names still runs (a server killed without its
    clean-up leaves its file, and its port may be another program's by now)."""
    pid = server.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return True  # nothing to check: ask it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: it runs
    return True


def _sessions(server: dict[str, Any], timeout: float = HTTP_TIMEOUT) -> list[dict[str, Any]]:
    url = str(server["url"]).rstrip("/") + "/api/sessions"
    req = urllib.request.Request(url)
    if server.get("token"):
        req.add_header("Authorization", f"token {server['token']}")
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        listed = json.loads(resp.read())
    return [s for s in listed if isinstance(s, dict)]


def _same(asked: str, full: str, relative: str | None = None) -> bool:
    """Does ``asked`` (as typed: absolute, relative to here, or relative to a server's root)
    name the notebook at ``full``?"""
    if relative is not None and asked.strip("/") == relative.strip("/"):
        return True
    return os.path.realpath(os.path.abspath(asked)) == os.path.realpath(full)


def _by_server(notebook: str) -> list[Found]:
    runtime = _runtime_dir()
    out = []
    for server in running_servers():
        try:
            sessions = _sessions(server)
        except (OSError, ValueError):
            continue  # a server that went away or answers nothing useful
        root = str(server.get("root_dir") or "")
        for s in sessions:
            kernel = s.get("kernel") or {}
            rel = str(s.get("path") or "")
            full = os.path.join(root, rel)
            if not kernel.get("id") or not _same(notebook, full, rel):
                continue
            file = os.path.join(runtime, f"kernel-{kernel['id']}.json")
            out.append(Found(full, str(kernel["id"]),
                             file if os.path.isfile(file) else None,
                             str(server["url"]).rstrip("/"), str(server.get("token") or "")))
    return out


def _by_environ(notebook: str) -> list[Found]:
    """Kernels of the runtime dir whose process has JPY_SESSION_NAME naming ``notebook``."""
    files = {os.path.realpath(f): f
             for f in glob.glob(os.path.join(_runtime_dir(), "kernel-*.json"))}
    out = []
    for pid in os.listdir("/proc") if files and os.path.isdir("/proc") else []:
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().decode("utf-8", "replace").split("\0")
            matched = [files[os.path.realpath(a)] for a in argv if a and
                       os.path.realpath(a) in files]
            if not matched:
                continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(item.split("=", 1) for item in
                           f.read().decode("utf-8", "replace").split("\0") if "=" in item)
        except OSError:
            continue  # gone, or another user's
        name = env.get("JPY_SESSION_NAME")
        if name and _same(notebook, name):
            out.append(Found(name, None, matched[0]))
    return out


def this_server() -> Any:
    """The Jupyter ``ServerApp`` this process runs (a persona or a server extension runs inside
    it), or None. Reachable where a persona manager has no parent (Jupyter AI's headless
    route)."""
    try:
        from jupyter_server.serverapp import ServerApp
    except ImportError:
        return None
    return ServerApp.instance() if ServerApp.initialized() else None


def find_notebook_kernel(notebook: str) -> Found:
    """The kernel of the open notebook ``notebook`` (a path: absolute, relative to the current
    directory, or relative to a Jupyter server's root). ``KernelError`` naming what was
    searched when none is found; with several, the newest server's."""
    found = _by_server(notebook) or _by_environ(notebook)
    if found:
        return found[0]
    servers = running_servers()
    where = (f"the sessions of {len(servers)} Jupyter server(s) "
             f"({', '.join(str(s['url']) for s in servers)})" if servers
             else "no running Jupyter server")
    raise KernelError(
        f"no kernel is running for notebook {notebook!r}: searched {where} and the kernels "
        f"of {_runtime_dir()}. Open the notebook (with the kli kernel) first, or pass a "
        "connection file.")
