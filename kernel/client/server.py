"""Transport through a Jupyter server: REST to find or start the kernel, the kernel's
``/api/kernels/{id}/channels`` websocket for messages (JupyterLab, Binder, a gateway).

Messages travel as JSON text frames with a ``channel`` key (the server's default protocol);
binary frames (messages with buffers, e.g. widget data) are skipped — kli's comms use none.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any

from kli.kernel.client.base import KernelDied, KernelError

# How long a REST request may take.
HTTP_TIMEOUT = 30.0
# A REST liveness check at most this often while waiting for a reply.
ALIVE_EVERY = 2.0


class ServerTransport:
    """One websocket to one kernel of a Jupyter server.

    ``kernel_id`` None attaches to the most recently active running kernel named
    ``kernel_name``, or starts one (owned: shut down on close) if there is none.
    """

    def __init__(self, url: str, token: str = "", kernel_id: str | None = None, *,
                 kernel_name: str = "kli", ready_timeout: float = 60,
                 notebook: str | None = None) -> None:
        import websocket  # websocket-client

        self.base = url.rstrip("/")
        self.token = token
        self.owned = False
        if kernel_id is None and notebook is not None:
            kernel_id = self._of_notebook(notebook)
        if kernel_id is None:
            kernel_id = self._pick(kernel_name)
        self.kernel_id = kernel_id
        self.description = f"kernel {kernel_id} of the Jupyter server at {self.base}"
        self.session_id = uuid.uuid4().hex
        parts = urllib.parse.urlsplit(self.base)
        scheme = "wss" if parts.scheme == "https" else "ws"
        query = urllib.parse.urlencode({"session_id": self.session_id})
        ws_url = urllib.parse.urlunsplit(
            (scheme, parts.netloc, f"{parts.path}/api/kernels/{kernel_id}/channels", query, "")
        )
        headers = [f"Authorization: token {token}"] if token else []
        try:
            self.ws = websocket.create_connection(ws_url, header=headers, timeout=ready_timeout)
        except Exception as exc:
            raise KernelError(f"cannot open the websocket of kernel {kernel_id} at {ws_url}: "
                              f"{exc}") from exc
        self._last_check = 0.0
        self._alive = True
        self.kernel_info: dict[str, Any] = {}  # the kernel_info_reply's content
        self._wait_ready(ready_timeout)

    # -- REST ---------------------------------------------------------------------------------
    def _http(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        if self.token:
            req.add_header("Authorization", f"token {self.token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def _pick(self, kernel_name: str) -> str:
        """The most recently active ``kernel_name`` kernel, or a new one (owned). A server that
        forbids listing kernels (a Kernel Gateway at its defaults answers 403) gets a new one."""
        try:
            listed = self._http("GET", "/api/kernels")
        except urllib.error.HTTPError as exc:
            if exc.code != 403:
                raise KernelError(self._refused("GET /api/kernels", exc)) from exc
            listed = None  # listing is off (a gateway's list_kernels=False): start one
        except (urllib.error.URLError, OSError) as exc:
            raise KernelError(f"cannot reach the Jupyter server at {self.base}: "
                              f"{getattr(exc, 'reason', exc)}") from exc
        kernels = [k for k in listed or [] if k.get("name") == kernel_name]
        if kernels:
            kernels.sort(key=lambda k: k.get("last_activity") or "")
            return str(kernels[-1]["id"])
        try:
            started = self._http("POST", "/api/kernels", {"name": kernel_name})
        except urllib.error.HTTPError as exc:
            raise KernelError(self._refused(f"POST /api/kernels (start a {kernel_name} kernel)",
                                            exc)) from exc
        except (urllib.error.URLError, OSError) as exc:
            raise KernelError(f"the Jupyter server at {self.base} did not answer POST "
                              f"/api/kernels: {getattr(exc, 'reason', exc)}") from exc
        self.owned = True
        return str(started["id"])

    def _of_notebook(self, notebook: str) -> str:
        """The kernel of the server's session for ``notebook`` (its path under the server's
        root, as JupyterLab shows it)."""
        try:
            sessions = self._http("GET", "/api/sessions")
        except urllib.error.HTTPError as exc:
            raise KernelError(self._refused("GET /api/sessions", exc)) from exc
        except (urllib.error.URLError, OSError) as exc:
            raise KernelError(f"cannot reach the Jupyter server at {self.base}: "
                              f"{getattr(exc, 'reason', exc)}") from exc
        want = notebook.strip("/")
        for s in sessions or []:
            if str(s.get("path") or "").strip("/") == want and (s.get("kernel") or {}).get("id"):
                return str(s["kernel"]["id"])
        open_ = sorted(str(s.get("path")) for s in sessions or [] if s.get("path"))
        raise KernelError(f"the Jupyter server at {self.base} has no session for notebook "
                          f"{notebook!r} (open: {', '.join(open_) or 'none'}). Open it there "
                          "with the kli kernel first; paths are relative to the server's root.")

    def _refused(self, what: str, exc: urllib.error.HTTPError) -> str:
        """An error text for a request the server answered with an HTTP error."""
        try:
            body = exc.read().decode("utf-8", "replace")
            detail = json.loads(body).get("message") or body
        except Exception:
            detail = ""
        hint = {401: "check the token", 403: "the token may lack the permission, or the "
                "server forbids it", 404: "is this a Jupyter server's base URL (with its "
                "base_url path)?"}.get(exc.code, "see the server's log")
        said = f" ({str(detail)[:200]})" if detail else ""
        return (f"the Jupyter server at {self.base} answered {what} with {exc.code} "
                f"{exc.reason}{said}: {hint}.")

    # -- messages -----------------------------------------------------------------------------
    def _msg(self, msg_type: str, content: dict[str, Any], channel: str) -> dict[str, Any]:
        msg_id = uuid.uuid4().hex
        return {
            "header": {"msg_id": msg_id, "msg_type": msg_type, "username": "kli-agent",
                       "session": self.session_id, "date": _now(), "version": "5.3"},
            "parent_header": {}, "metadata": {}, "content": content, "buffers": [],
            "channel": channel,
        }

    def _send(self, msg: dict[str, Any]) -> str:
        try:
            self.ws.send(json.dumps(msg))
        except Exception as exc:
            raise KernelError(f"the websocket to kernel {self.kernel_id} broke: {exc}") from exc
        msg_id: str = msg["header"]["msg_id"]
        return msg_id

    def send_shell(self, msg_type: str, content: dict[str, Any]) -> str:
        return self._send(self._msg(msg_type, content, "shell"))

    def _recv(self, timeout: float) -> dict[str, Any] | None:
        """The next message of any channel, or None after ``timeout`` seconds."""
        import websocket

        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.ws.settimeout(left)
            try:
                frame = self.ws.recv()
            except websocket.WebSocketTimeoutException:
                return None
            except (websocket.WebSocketConnectionClosedException, OSError) as exc:
                self._alive = False
                raise KernelDied(f"the websocket to kernel {self.kernel_id} closed: {exc}") from exc
            if not isinstance(frame, str):
                continue  # a binary (buffers) message: not ours
            msg: dict[str, Any] = json.loads(frame)
            return msg

    def recv_iopub(self, timeout: float) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        while True:
            msg = self._recv(deadline - time.monotonic())
            if msg is None or msg.get("channel") == "iopub":
                return msg

    def _control(self, msg_type: str, content: dict[str, Any], timeout: float,
                 iopub_too: bool = False) -> dict[str, Any] | None:
        """Send a control request; the content of its reply (None after ``timeout``). With
        ``iopub_too``, also wait for an iopub message it caused (the subscription is live)."""
        msg_id = self._send(self._msg(msg_type, content, "control"))
        reply: dict[str, Any] | None = None
        seen_iopub = not iopub_too
        deadline = time.monotonic() + timeout
        while reply is None or not seen_iopub:
            msg = self._recv(deadline - time.monotonic())
            if msg is None:
                return None
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg.get("channel") == "iopub":
                seen_iopub = True
            elif msg.get("channel") == "control":
                reply = msg.get("content") or {}
        return reply

    def _wait_ready(self, timeout: float) -> None:
        """Wait for the kernel to answer ``kernel_info`` on the control channel (answered even
        while a cell runs) and for an iopub message it caused."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            info = self._control("kernel_info_request", {}, 1.0, iopub_too=True)
            if info is not None:
                self.kernel_info = info
                return
        raise KernelError(f"kernel {self.kernel_id} did not answer kernel_info within {timeout:g} s")

    def alive(self) -> bool:
        now = time.monotonic()
        if not self._alive or now - self._last_check < ALIVE_EVERY:
            return self._alive
        self._last_check = now
        try:
            info = self._http("GET", f"/api/kernels/{self.kernel_id}")
        except urllib.error.HTTPError as exc:
            self._alive = exc.code != 404
            return self._alive
        except (urllib.error.URLError, OSError):
            return self._alive  # the server may be slow; the websocket will tell
        self._alive = info.get("execution_state") != "dead"
        return self._alive

    def interrupt(self) -> None:
        self._http("POST", f"/api/kernels/{self.kernel_id}/interrupt")

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            if self.owned:
                try:
                    self._http("DELETE", f"/api/kernels/{self.kernel_id}")
                except Exception:
                    pass


def _now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).isoformat()
