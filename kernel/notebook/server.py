"""How a kernel finds the Jupyter server that started it, and the notebook it was started for.

A server starting a kernel for a notebook sets ``JPY_PARENT_PID`` (its pid) and
``JPY_SESSION_NAME`` (the notebook's path) in the kernel's environment, and writes
``jpserver-PID.json`` (``url``, ``token``, ``root_dir``) in ``jupyter --runtime-dir`` while it
runs. ``find`` reads those; ``collaboration_session`` asks the server for a notebook's room
(jupyter-collaboration's ``PUT /api/collaboration/session/PATH``).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

HTTP_TIMEOUT = 5.0  # seconds for one request to the local server


@dataclass(frozen=True)
class Server:
    url: str  # ends with "/"
    token: str
    root_dir: str

    def request(self, method: str, path: str, body: Any = None) -> Any:
        """JSON of ``method url+path``; ``urllib.error.HTTPError`` / ``OSError`` on failure."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path.lstrip("/"), data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", f"token {self.token}")
        with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def rel(self, real: str) -> str | None:
        """The server's path of the file at ``real`` ("a/nb.ipynb"), or None outside its root."""
        root = os.path.realpath(self.root_dir)
        rel = os.path.relpath(os.path.realpath(real), root)
        if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
            return None
        return rel.replace(os.sep, "/")

    def real(self, rel: str) -> str:
        return os.path.realpath(os.path.join(self.root_dir, rel))


def runtime_dir(env: Mapping[str, str]) -> str:
    if env.get("JUPYTER_RUNTIME_DIR"):
        return env["JUPYTER_RUNTIME_DIR"]
    from jupyter_core.paths import jupyter_runtime_dir

    return jupyter_runtime_dir()


def find(env: Mapping[str, str] | None = None) -> Server | None:
    """The server that started this kernel, or None (started otherwise, or the server gone)."""
    env = os.environ if env is None else env
    pid = env.get("JPY_PARENT_PID", "")
    if not pid.isdigit():
        return None
    path = os.path.join(runtime_dir(env), f"jpserver-{pid}.json")
    try:
        with open(path, encoding="utf-8") as fh:
            info = json.load(fh)
    except (OSError, ValueError):
        return None
    url = str(info.get("url") or "")
    if not url:
        return None
    return Server(url if url.endswith("/") else url + "/", str(info.get("token") or ""),
                  str(info.get("root_dir") or os.getcwd()))


def session_notebook(server: Server, env: Mapping[str, str] | None = None) -> str | None:
    """The real path of the notebook this kernel was started for (``JPY_SESSION_NAME``)."""
    env = os.environ if env is None else env
    name = env.get("JPY_SESSION_NAME", "")
    if not name.lower().endswith(".ipynb"):
        return None
    return os.path.realpath(name) if os.path.isabs(name) else server.real(name)


def open_notebooks(server: Server) -> set[str]:
    """Real paths of the notebooks that have a session (a kernel) on the server."""
    try:
        sessions = server.request("GET", "api/sessions") or []
    except (urllib.error.URLError, OSError, ValueError):
        return set()
    return {server.real(str(s["path"])) for s in sessions
            if isinstance(s, dict) and str(s.get("path", "")).lower().endswith(".ipynb")}


def collaboration_session(server: Server, rel: str) -> dict[str, Any] | None:
    """The room of notebook ``rel`` (``fileId``, ``sessionId``, ``format``, ``type``), or None
    when the server has no jupyter-collaboration (404) or does not answer."""
    try:
        reply = server.request("PUT", "api/collaboration/session/" + urllib.parse.quote(rel),
                               {"format": "json", "type": "notebook"})
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return reply if isinstance(reply, dict) and reply.get("fileId") else None


def room_url(server: Server, session: Mapping[str, Any]) -> str:
    """The Y websocket of a room ``collaboration_session`` returned."""
    room = f"{session['format']}:{session['type']}:{session['fileId']}"
    base = "ws" + server.url[len("http"):] if server.url.startswith("http") else server.url
    params = {"sessionId": str(session["sessionId"])}
    if server.token:
        params["token"] = server.token
    return f"{base}api/collaboration/room/{room}?{urllib.parse.urlencode(params)}"
