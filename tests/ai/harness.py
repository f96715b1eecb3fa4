"""The harness of tests/ai (fixtures in conftest.py): a real Jupyter server with Jupyter AI 3.2 and kli's persona, real kli kernels it starts for
notebooks, and the real model client (litellm) — talking to a SCRIPTED model: the one thing that
cannot exist here. ``tests/endpoint.py`` is an OpenAI-compatible server that answers with the
tool calls a test scripts (streaming, as litellm asks); it is not a model.

These tests run in a venv of their own (``scripts/test`` builds ``.venv-test-ai``: the wheel's
``[lab,collab,ai]`` extras + ``jupyter-ai==3.2.*``): jupyter-ai 3.2 pins ``mcp<2`` through
jupyter-server-mcp, which kli's ``[mcp]`` extra (and so ``[test]``) cannot sit beside. The main
test run does not collect this folder (pyproject ``norecursedirs``).

The server runs without jupyter-collaboration's documents, so Jupyter AI's chats use
jupyterlab-chat's websocket transport (``/api/chat/ws/PATH``): a test speaks to a chat as the
chat panel does (``Chat``), and presses Stop as the panel does (``POST
/api/ai/personas/cancel?chat_id=…``).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.endpoint import ScriptedEndpoint, answer, calls
from tests.jupyter_server import JupyterServer, folders, jupyter_dirs, kli_kernelspec, launch, serve
from tests.ports import free_port

PERSONA_ID = "jupyter-ai-personas::kli::KliPersona"
START_TIMEOUT = 90.0
TIMEOUT = 60.0

__all__ = ["PERSONA_ID", "Agent", "AiServer", "Chat", "Panel", "Script", "answer", "calls",
           "in_thread"]


class Script:
    """The scripted model's answers, swapped per test: ``replies`` is a list of assistant
    messages (``calls(...)``, ``answer(...)``) given in order, or a function of the request."""

    def __init__(self) -> None:
        self.replies: list[dict[str, Any]] | Callable[[dict[str, Any]], dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []

    def set(self, replies: list[dict[str, Any]] | Callable[[dict[str, Any]], dict[str, Any]]
            ) -> None:
        self.replies, self.requests = replies, []

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(request)
        if callable(self.replies):
            return self.replies(request)
        if not self.replies:
            return answer("(the script has no more replies)")
        return self.replies.pop(0)

    def tool_results(self) -> list[str]:
        """The tool results the model was sent, in order (the last request holds them all)."""
        if not self.requests:
            return []
        return [str(m.get("content")) for m in self.requests[-1]["messages"]
                if m.get("role") == "tool"]


@dataclass
class AiServer(JupyterServer):
    """A Jupyter server with Jupyter AI 3.2: its runtime folder (connection files), the scripted
    model's ``script`` (the persona's tests), the server's environment and jupyter-server-mcp's
    endpoint (``mcp_url``, the tests of kli's tools there: tests/ai/acp)."""

    runtime: Path
    script: Script = field(default_factory=Script)
    env: dict[str, str] = field(default_factory=dict)
    mcp_url: str = ""
    key: str = ""  # the user's key after `kli ai enable` (what Jupyter AI hands its agents)

    def ask(self, text: str, metadata: dict[str, Any] | None = None,
            timeout: float = 120) -> str:
        """Jupyter AI's headless route: ``POST /api/ai/message/kli``; the persona's reply."""
        body: dict[str, Any] = {"message": text}
        if metadata is not None:
            body["metadata"] = metadata
        return str(self.api("POST", "/api/ai/message/kli", body, timeout)["response"])

    def notebook(self, name: str, cells: list[tuple[str, str]], kernel: str = "kli") -> Path:
        """A notebook ``name`` (its path from the root) of code cells ``(id, source)``,
        written through the contents API; its file."""
        nb = {
            "cells": [{"cell_type": "code", "execution_count": None, "id": cid, "metadata": {},
                       "outputs": [], "source": src} for cid, src in cells],
            "metadata": {"kernelspec": {"name": kernel, "display_name": kernel,
                                        "language": "python"},
                         "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": 5,
        }
        self.api("PUT", f"/api/contents/{name}", {"type": "notebook", "format": "json",
                                                   "content": nb})
        return self.root / name

    def open(self, name: str, kernel: str = "kli") -> str:
        """Start a kernel (kli unless said) for notebook ``name``, as opening it in JupyterLab
        does; its id."""
        s = self.api("POST", "/api/sessions", {"path": name, "type": "notebook", "name": name,
                                               "kernel": {"name": kernel}})
        return str(s["kernel"]["id"])

    def connection_file(self, kernel_id: str) -> str:
        return str(self.runtime / f"kernel-{kernel_id}.json")

    def agent(self, chat_id: str | None, persona_id: str = "jupyter-ai-personas::t",
              key: str | None = None) -> Agent:
        """An MCP client of this server's jupyter-server-mcp endpoint, as chat ``chat_id``'s
        agent (None: a local client without the chat's headers), bringing ``key`` (by default
        the server's, as Jupyter AI hands it on; "" for none)."""
        return Agent(self.mcp_url, chat_id, persona_id, self.key if key is None else key)


# -- a chat, spoken to as the chat panel does -------------------------------------------------
@dataclass
class Chat:
    """One client of a websocket chat (``/api/chat/ws/PATH``), as the chat panel is: sends
    messages (to the kli persona, unless ``persona`` is False: then it waits for no persona)
    and keeps every message as the server last sent it."""

    server: AiServer
    path: str
    persona: bool = True
    ws: Any = None
    chat_id: str = ""
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    users: dict[str, Any] = field(default_factory=dict)
    writing: list[str] = field(default_factory=list)

    def __enter__(self) -> Chat:
        import websocket

        token = f"?token={self.server.token}" if self.server.token else ""
        self.ws = websocket.create_connection(
            self.server.url.replace("http", "ws", 1) + f"/api/chat/ws/{self.path}{token}",
            timeout=30)
        first = json.loads(self.ws.recv())
        assert first["action"] == "connection", first
        self.chat_id = first["id"]
        self.users.update(first.get("users") or {})
        if self.persona:
            self.wait(lambda: PERSONA_ID in self.users, 30, "the kli persona joining the chat")
        return self

    def __exit__(self, *exc: object) -> None:
        self.ws.close()

    def _pump(self, timeout: float) -> None:
        import websocket

        self.ws.settimeout(max(timeout, 0.01))
        try:
            frame = json.loads(self.ws.recv())
        except websocket.WebSocketTimeoutException:
            return
        if frame.get("action") == "message":
            msg = frame["message"]
            if msg["id"] not in self.messages:
                self.order.append(msg["id"])
            self.messages[msg["id"]] = msg
        elif frame.get("action") == "users":
            self.users.update(frame.get("users") or {})
        elif frame.get("action") == "writing" and frame.get("typingIndicator"):
            self.writing.append(str(frame["typingIndicator"]))

    def wait(self, done: Callable[[], Any], timeout: float = TIMEOUT, what: str = "") -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = done()
            if value:
                return value
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"waited {timeout:g} s for {what or done}; the persona "
                                     f"wrote:\n{self.replies()}")
            self._pump(min(left, 0.2))

    def send(self, body: str, attachments: list[dict[str, Any]] | None = None,
             to: str | None = None) -> None:
        """Send ``body`` (to the kli persona when ``persona``, or to persona ``to``) with
        ``attachments`` as the chat panel sends them (``{"type": "notebook", "value": PATH}``);
        without a persona, return once the server echoed it (stored)."""
        message: dict[str, Any] = {"type": "client", "action": "send", "id": str(uuid.uuid4()),
                                   "body": body, "attachments": attachments}
        if self.persona or to:
            message["metadata"] = {"to_persona": to or PERSONA_ID}
        self.ws.send(json.dumps(message))
        if not self.persona and not to:
            self.wait(lambda: any(m.get("body") == body for m in self.messages.values()), 30,
                      "the server's echo of the message")

    def replies(self, sender: str = PERSONA_ID) -> str:
        """Everything the persona (or ``sender``) wrote, in order."""
        return "".join(self.messages[i]["body"] for i in self.order
                       if self.messages[i].get("sender") == sender)

    def stop(self) -> Any:
        """The chat panel's Stop."""
        return self.server.api("POST", f"/api/ai/personas/cancel?chat_id={self.chat_id}", {})


# -- a chat's agent, on Jupyter AI's MCP endpoint ---------------------------------------------
class Agent:
    """An MCP client of Jupyter AI's MCP endpoint carrying one chat's identity headers, as the
    persona manager stamps them on the server it hands a chat's agent (``chat_id`` None: a
    local client without them)."""

    def __init__(self, url: str, chat_id: str | None,
                 persona_id: str = "jupyter-ai-personas::t", key: str = "",
                 headers: dict[str, str] | None = None) -> None:
        self.url = url
        self.headers = ({"X-Jupyter-Chat-Id": chat_id, "X-JupyterAI-Persona-Id": persona_id}
                        if chat_id else {})
        if key:
            self.headers["X-Kli-Key"] = key
        self.headers.update(headers or {})

    async def _session(self, body: Any) -> Any:
        from fastmcp import Client
        from fastmcp.client.transports import StreamableHttpTransport

        async with Client(StreamableHttpTransport(self.url, headers=self.headers),
                          timeout=120) as client:
            return await body(client)

    def run(self, body: Any) -> Any:
        import asyncio

        return asyncio.run(self._session(body))

    def tools(self) -> list[Any]:
        async def body(c: Any) -> Any:
            return await c.list_tools()
        return list(self.run(body))

    def instructions(self) -> str:
        async def body(c: Any) -> Any:
            return c.initialize_result.instructions or ""
        return str(self.run(body))

    def call(self, tool: str, args: dict[str, Any]) -> tuple[str, bool]:
        """The tool's text and isError."""
        async def body(c: Any) -> Any:
            r = await c.call_tool(tool, args, raise_on_error=False)
            return "".join(getattr(b, "text", "") for b in r.content), r.is_error
        text, is_error = self.run(body)
        return str(text), bool(is_error)


# -- the kli panel's side of a kernel: the kli.ui comm, as the person's Accept uses it -------
class Panel:
    """The kli panel's comm to a kernel (``kli.ui``), from one thread only (a jupyter_client
    blocking client must not be shared between threads)."""

    def __init__(self, connection_file: str) -> None:
        from jupyter_client.blocking.client import BlockingKernelClient

        from kli.kernel.client import connect

        connect(connection_file, label="test: kernel ready").close()  # waits for a new kernel
        self.kc = BlockingKernelClient(connection_file=connection_file)
        self.kc.load_connection_file()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=30)
        self.comm = uuid.uuid4().hex
        self._send("comm_open", {"comm_id": self.comm, "target_name": "kli.ui",
                                 "data": {"replay": 0}})
        # Answered at once, but iopub may join after the first replies went out (ZMQ's slow
        # joiner: a just-started kernel's first reply was lost): ask a read-only question until
        # one is heard, before any request that changes something.
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                self.request({"op": "replay"}, timeout=2.0)
                break
            except AssertionError:
                if time.monotonic() > deadline:
                    raise

    def _send(self, kind: str, content: dict[str, Any]) -> None:
        self.kc.shell_channel.send(self.kc.session.msg(kind, content))

    def request(self, data: dict[str, Any], timeout: float = TIMEOUT) -> dict[str, Any]:
        rid = uuid.uuid4().hex[:8]
        self._send("comm_msg", {"comm_id": self.comm, "data": {"v": 1, "id": rid, **data}})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self.kc.get_iopub_msg(timeout=0.5)
            except Exception:
                continue
            content = msg.get("content") or {}
            if (msg["msg_type"] == "comm_msg" and content.get("comm_id") == self.comm
                    and content["data"].get("id") == rid):
                reply: dict[str, Any] = content["data"]
                return reply
        raise AssertionError(f"the kernel did not answer {data} on kli.ui")

    def close(self) -> None:
        self._send("comm_close", {"comm_id": self.comm, "data": {}})
        self.kc.stop_channels()


def in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    """Run ``fn`` in a thread of its own; its result or error lands in the dict."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


def lab_page_settings(base: Path) -> None:
    """The lab page of a server in ``base`` without jupyter-collaboration's front end (its
    server side is off): notebooks open as plain documents, chats over jupyterlab-chat's
    websocket; and no news toast over the chat in screenshots."""
    labconfig = base / "config" / "labconfig"
    labconfig.mkdir(parents=True)
    (labconfig / "page_config.json").write_text(json.dumps({"disabledExtensions": {
        "@jupyter/docprovider-extension": True, "@jupyter/collaboration-extension": True}}))
    notify = base / "settings" / "@jupyterlab" / "apputils-extension"
    notify.mkdir(parents=True)
    (notify / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))


def kli_labextension(share: Path) -> None:
    """The kli JupyterLab extension where a server with ``JUPYTER_PATH=share`` finds it: an
    editable install carries no data files, so the built one (labextension/build.sh) is linked
    in; an installed wheel's is found in the environment's own share."""
    built = Path(__file__).resolve().parents[2] / "labextension" / "kli_kernel_labextension"
    installed = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "kli-kernel"
    if not installed.exists() and built.is_dir():
        (share / "labextensions").mkdir(parents=True, exist_ok=True)
        (share / "labextensions" / "kli-kernel").symlink_to(built)


@contextlib.contextmanager
def start_server(base: Path) -> Iterator[AiServer]:
    """The server (Jupyter AI 3.2 + kli's persona) in ``base``, its model the scripted one."""
    root, runtime, share = folders(base)
    kli_kernelspec(share)
    kli_labextension(share)
    lab_page_settings(base)
    script = Script()
    with ScriptedEndpoint(script) as model_url:  # closed after the server has stopped
        env = dict(os.environ)
        env.update(jupyter_dirs(base, runtime), JUPYTER_PATH=str(share),
                   XDG_CONFIG_HOME=str(base / "xdg"),
                   JUPYTERLAB_SETTINGS_DIR=str(base / "settings"),
                   KLI_AGENT_MODEL="openai/scripted", KLI_AGENT_MODELS="openai/scripted-b",
                   OPENAI_BASE_URL=model_url, OPENAI_API_KEY="not-a-key",
                   LITELLM_LOCAL_MODEL_COST_MAP="True", KLI_AGENT_REVIEW_WAIT="60")
        port = free_port()
        log = base / "server.log"
        proc = launch(
            "jupyter_server", port, root,
            # jupyterlab-chat's websocket chats (no jupyter-collaboration documents)
            "--ServerApp.jpserver_extensions=jupyter_server_ydoc=False",
            "--MCPExtensionApp.mcp_port=0",  # two servers on one machine would share 3001
            # window.jupyterapp, for the Chromium test (tests/ai/test_chat_browser.py)
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            env=env, log=log)
        server = AiServer(f"http://127.0.0.1:{port}", root, proc, log, runtime, script, env)
        with serve(server, START_TIMEOUT):
            yield server


def stored_plot(server: AiServer, name: str, source: str,
                draw: Callable[[Any], object]) -> None:
    """Notebook ``name`` with one cell ``plot`` (``source``) whose stored output is the PNG a
    retina inline backend saves (1280×960 shown at 640×480), drawn by ``draw(axes)`` with
    matplotlib (Agg) in this process; written through the contents API, no kernel run."""
    import base64
    import io

    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.8), dpi=200)
    draw(fig.subplots())
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    server.notebook(name, [("plot", source)])
    nb = json.loads((server.root / name).read_text())
    nb["cells"][0]["outputs"] = [{"output_type": "display_data",
                                  "metadata": {"image/png": {"width": 640, "height": 480}},
                                  "data": {"image/png": base64.b64encode(buf.getvalue()).decode(),
                                           "text/plain": "<Figure size 640x480 with 1 Axes>"}}]
    server.api("PUT", f"/api/contents/{name}", {"type": "notebook", "format": "json",
                                                 "content": nb})
