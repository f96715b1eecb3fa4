"""``kli mcp`` — a Model Context Protocol server over a live kli kernel.

Every MCP tool call becomes a tool call in a kli kernel through the ``kli.agent`` comm
(``kli.client``), so it runs in the notebook's image, shows in the notebook's activity panel
under its own session (labelled ``mcp: <client name>``), and a repair preview waits there for a
person's Accept. The tool list and JSON Schemas are the kernel's registry (``AgentClient.specs``).

Where the kernel comes from (one of):

- ``--start`` (the default): the server starts and owns a kernel whose root is ``--root``;
- ``--connection-file F``: the kernel of a connection file;
- ``--newest``: the newest running kernel (newest ``kernel-*.json`` in the Jupyter runtime dir);
- ``--server-url U --server-token T [--kernel-id K]``: a kernel of a Jupyter server (through its
  websocket: JupyterLab, a gateway, Binder).

When the kernel dies, the call that finds out returns an error naming what happened and how to
recover; with ``--start`` the server starts a fresh kernel at once, otherwise the next call
reconnects (to the same connection file, the newest kernel, or through the server).

Transports: stdio (the default) and streamable HTTP on 127.0.0.1 (``--transport http``), which
requires ``Authorization: Bearer TOKEN`` on every request.
"""

from __future__ import annotations

import abc
import argparse
import hmac
import json
import os
import secrets
import signal
import socket
import sys
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from kli.kernel import KERNEL_NAME
from kli.kernel.client.base import (
    DEFAULT_TIMEOUT,
    AgentClient,
    KernelDied,
    KernelError,
    KernelTimeout,
    ProtocolError,
)
from kli.tools.core.result import ToolResult

SERVER_NAME = "kli"
PROFILES = ("kli", "slmcode", "all")
# How long attaching to a kernel may take before the call reports it unreachable (a dead
# kernel's connection file never answers; a starting one answers within a few seconds).
CONNECT_TIMEOUT = 20.0
# Agent connections kept at once (one per MCP client session); the least recently used closes.
MAX_SESSIONS = 32
DEFAULT_PORT = 8848
HTTP_PATH = "/mcp"
TOKEN_ENV = "KLI_MCP_TOKEN"
SESSION_PREFIX = "mcp: "

_KERNEL = """\
kli tools run inside a live Python kernel: the image of a Jupyter notebook."""
_EVAL = """\
Variables defined with eval persist between calls and are shared with the notebook's cells."""
_KLI_EDITS = """\
- read returns each line as LINE:HH|content; HH is the line's anchor. edit takes a hashline \
patch whose anchors come from a read or search made in this session; a stale anchor (the line \
changed since) rejects the whole patch and nothing is written: read the file again and resend.
- An edit whose delimiter repair is not safe to write returns a repair preview (a candidate id) \
and writes nothing. A person may Accept or Reject it in the notebook's kli activity panel, or \
you can write it with edit {"accept_repair": ID, "path": PATH}."""
_SESSION = """\
- Every call shows in the notebook's activity panel under the session "mcp: <client name>".
- If a result says the kernel died, its state (variables, anchors, previews) is gone: follow \
the recovery the message gives, then read files again before editing."""


def instructions(profile: str) -> str:
    """The MCP ``instructions`` for a profile: the rules that span its tools. For slmcode, the
    edit contract's rules and worked example and repair (its turn rules are a harness's, which
    an MCP client's loop does not keep, so they are left out)."""
    from kli.tools.ws.contract import EDIT_RULES, WORKED

    parts = [_KERNEL + (" " + _EVAL if profile != "slmcode" else "")]
    if profile != "slmcode":
        parts.append(_KLI_EDITS)
    parts.append(_SESSION)
    text = "\n".join(parts)
    if profile != "kli":
        text += f"\n\n{EDIT_RULES}\n\n{WORKED}"
    return text


# -- where the kernel is -----------------------------------------------------------------------
class Target(abc.ABC):
    """How to reach the kernel, and what to do when it dies.

    ``generation`` grows each time the kernel is known to have died, so every connection made
    to the dead kernel is dropped and remade.
    """

    description = "a kli kernel"

    def __init__(self) -> None:
        self.generation = 0
        self.lock = threading.Lock()
        self._last_recovery = ""

    def start(self) -> None:  # noqa: B027 - an optional hook: most targets have nothing to do
        """Get ready before serving (start an owned kernel); errors are fatal at start."""

    @abc.abstractmethod
    def connect(self, label: str) -> AgentClient:
        """A new agent connection (its own tool session) labelled ``label``."""

    @abc.abstractmethod
    def recovery(self) -> str:
        """What the user or model does to get a kernel back."""

    def died(self, generation: int) -> str:
        """The kernel of ``generation`` died: recover what can be, and say what to do."""
        with self.lock:
            if generation == self.generation:
                self.generation += 1
                self._last_recovery = self._recover()
            return self._last_recovery

    def _recover(self) -> str:
        return self.recovery()

    def close(self) -> None:  # noqa: B027 - an optional hook: most targets own nothing
        """Release what the target owns."""


def _zmq_transport(kc: Any, manager: Any = None) -> Any:
    from kli.kernel.client.zmq import ZmqTransport

    return ZmqTransport(kc, manager, ready_timeout=CONNECT_TIMEOUT)


class OwnKernel(Target):
    """A kernel this server starts (root ``root``) and shuts down on exit; restarted when it
    dies."""

    def __init__(self, root: str, kernel_name: str = KERNEL_NAME,
                 env: dict[str, str] | None = None) -> None:
        super().__init__()
        self.root = os.path.abspath(root)
        self.kernel_name = kernel_name
        self.env = env
        self.km: Any = None
        self.description = f"the kernel kli mcp started in {self.root}"

    def start(self) -> None:
        from jupyter_client.manager import KernelManager

        km = KernelManager(kernel_name=self.kernel_name)
        # The kernel's own stdout goes to our stderr: on stdio, our stdout is the MCP wire.
        kwargs: dict[str, Any] = {"cwd": self.root, "stdout": sys.stderr.fileno()}
        if self.env is not None:
            kwargs["env"] = self.env
        km.start_kernel(**kwargs)
        self.km = km

    def connect(self, label: str) -> AgentClient:
        with self.lock:
            if self.km is None:  # an earlier start failed: try again now
                self.start()
            km = self.km
        if not km.is_alive():
            raise KernelDied("the kernel process has exited")
        return AgentClient(_OwnedTransport(km), label=label, timeout=DEFAULT_TIMEOUT)

    def recovery(self) -> str:
        return "retry the call: kli mcp starts a fresh kernel."

    def _recover(self) -> str:
        if self.km is not None and self.km.is_alive():  # only a connection broke
            return "kli mcp's kernel is still running; the next call reconnects to it."
        self._shutdown()
        try:
            self.start()
        except Exception as exc:
            self.km = None
            return (f"kli mcp could not start a new kernel ({type(exc).__name__}: {exc}); "
                    "retry the call to try again.")
        pid = getattr(getattr(self.km, "provisioner", None), "pid", None) or "?"
        return (f"kli mcp started a fresh kernel (pid {pid}) in {self.root}: the image's "
                "variables, your read anchors and pending repair previews are gone — read "
                "files again before editing, then retry.")

    def _shutdown(self) -> None:
        km, self.km = self.km, None
        if km is not None:
            try:
                km.shutdown_kernel(now=True)
            except Exception:
                pass
            try:
                km.cleanup_resources()
            except Exception:
                pass

    def close(self) -> None:
        with self.lock:
            self._shutdown()


class _OwnedTransport:
    """A connection to the owned kernel: liveness from the process itself (a kill is seen at
    once); closing it leaves the kernel to its owner."""

    def __init__(self, km: Any) -> None:
        self.km = km
        self.inner = _zmq_transport(km.client())

    def send_shell(self, msg_type: str, content: dict[str, Any]) -> str:
        msg_id: str = self.inner.send_shell(msg_type, content)
        return msg_id

    def recv_iopub(self, timeout: float) -> dict[str, Any] | None:
        msg: dict[str, Any] | None = self.inner.recv_iopub(timeout)
        return msg

    def alive(self) -> bool:
        return bool(self.km.is_alive())

    def interrupt(self) -> None:
        self.km.interrupt_kernel()

    def close(self) -> None:
        self.inner.close()


class FileKernel(Target):
    """The kernel of one connection file (``path`` None: the newest one, looked up anew at
    every reconnect)."""

    def __init__(self, path: str | None = None) -> None:
        super().__init__()
        self.path = path
        self.description = (f"the kernel of connection file {path}" if path
                            else "the newest running kernel")

    def _resolve(self) -> str:
        from jupyter_client.connect import find_connection_file

        from kli.kernel.client.zmq import newest_connection_file

        if self.path is None:
            return newest_connection_file()
        return self.path if os.path.isfile(self.path) else find_connection_file(self.path)

    def connect(self, label: str) -> AgentClient:
        from jupyter_client.blocking.client import BlockingKernelClient

        try:
            path = self._resolve()
        except OSError as exc:
            raise KernelError(f"connection file {self.path} not found ({exc})") from exc
        kc = BlockingKernelClient(connection_file=path)
        kc.load_connection_file()
        try:
            transport = _zmq_transport(kc)
        except KernelError as exc:
            raise KernelError(f"no kernel answered at {path} within {CONNECT_TIMEOUT:g} s "
                              f"({exc})") from exc
        return AgentClient(transport, label=label, timeout=DEFAULT_TIMEOUT)

    def recovery(self) -> str:
        if self.path is None:
            return ("start or restart a kli kernel (e.g. open a notebook with the kli kernel); "
                    "the next call attaches to the newest running kernel.")
        return ("restart that kernel (in JupyterLab: Kernel > Restart Kernel, which keeps its "
                "connection file); the next call reconnects to it.")


class ServerKernel(Target):
    """A kernel of a Jupyter server, through its REST API and websocket (``kernel_id`` None:
    the most recently active kli kernel, or a new one)."""

    def __init__(self, url: str, token: str = "", kernel_id: str | None = None,
                 kernel_name: str = KERNEL_NAME) -> None:
        super().__init__()
        self.url, self.token, self.kernel_id, self.kernel_name = url, token, kernel_id, kernel_name
        which = f"kernel {kernel_id}" if kernel_id else f"the newest {kernel_name} kernel"
        self.description = f"{which} of the Jupyter server at {url}"

    def connect(self, label: str) -> AgentClient:
        from kli.kernel.client.server import ServerTransport

        transport = ServerTransport(self.url, self.token, self.kernel_id,
                                    kernel_name=self.kernel_name, ready_timeout=CONNECT_TIMEOUT)
        return AgentClient(transport, label=label, timeout=DEFAULT_TIMEOUT)

    def recovery(self) -> str:
        return (f"the Jupyter server at {self.url} restarts a dead kernel by itself; if it did "
                "not, restart the kernel in JupyterLab (Kernel > Restart Kernel) or start a new "
                f"{self.kernel_name} kernel. The next call reconnects.")


# -- the bridge: MCP sessions -> agent connections --------------------------------------------
@dataclass
class _Conn:
    label: str
    client: AgentClient | None = None
    generation: int = -1
    lock: threading.Lock = field(default_factory=threading.Lock)


class Bridge:
    """One agent connection (one kernel tool session) per MCP client session, made on first
    use and remade after the kernel died. Blocking: the MCP handlers call it from threads."""

    def __init__(self, target: Target, profile: str = "kli") -> None:
        if profile not in PROFILES:
            raise ValueError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r}")
        self.target = target
        self.profile = profile
        self._conns: OrderedDict[str, _Conn] = OrderedDict()
        self._lock = threading.Lock()

    def _conn(self, key: str, label: str) -> _Conn:
        with self._lock:
            conn = self._conns.get(key)
            if conn is None:
                conn = self._conns[key] = _Conn(label)
            self._conns.move_to_end(key)
            old = []
            while len(self._conns) > MAX_SESSIONS:
                old.append(self._conns.popitem(last=False)[1])
        for stale in old:
            with stale.lock:
                _close_quietly(stale.client)
                stale.client = None
        return conn

    def _attached(self, conn: _Conn) -> AgentClient:
        """The connection's client, (re)connected if it is missing or from a dead kernel."""
        if conn.client is not None and conn.generation == self.target.generation:
            return conn.client
        _close_quietly(conn.client)
        conn.client = None
        generation = self.target.generation
        conn.client = self.target.connect(conn.label)
        conn.generation = generation
        return conn.client

    def specs(self, key: str, label: str) -> list[dict[str, Any]]:
        """The profile's tool specs as the kernel's registry has them; the local registry's
        when no kernel answers (calls then report the kernel's state)."""
        conn = self._conn(key, label)
        with conn.lock:
            try:
                return self._attached(conn).specs(self.profile)
            except KernelError:
                from kli.tools.registry import REGISTRY

                profile = None if self.profile == "all" else self.profile
                return [t.spec() for t in REGISTRY.tools.values()
                        if profile is None or t.profile == profile]

    def call(self, key: str, label: str, tool: str, args: dict[str, Any]) -> ToolResult:
        """Run ``tool`` in the kernel; failures to get a result become error results whose
        text says what happened and how to recover."""
        conn = self._conn(key, label)
        with conn.lock:
            generation = self.target.generation
            try:
                client = self._attached(conn)
            except KernelDied as exc:
                return self._died(conn, generation, tool, str(exc))
            except KernelError as exc:
                return ToolResult.error(
                    f"kli mcp: cannot reach {self.target.description}: {exc}. "
                    f"{self.target.recovery()}", error="kernel_unreachable")
            except Exception as exc:
                return ToolResult.error(
                    f"kli mcp: cannot reach {self.target.description}: {type(exc).__name__}: "
                    f"{exc}. {self.target.recovery()}", error="kernel_unreachable")
            generation = conn.generation
            try:
                return client.call(tool, args)
            except KernelDied as exc:
                return self._died(conn, generation, tool, str(exc))
            except KernelTimeout as exc:
                return ToolResult.error(f"kli mcp: {exc}", error="kernel_timeout")
            except ProtocolError as exc:
                return ToolResult.error(f"kli mcp: the kernel refused the {tool} request "
                                        f"({exc.code}): {exc}", error="protocol")
            except KernelError as exc:  # the connection broke: reconnect as after a death
                return self._died(conn, generation, tool, str(exc), "lost its connection")

    def _died(self, conn: _Conn, generation: int, tool: str, why: str,
              what: str = "died") -> ToolResult:
        _close_quietly(conn.client)
        conn.client = None
        recovery = self.target.died(generation)
        return ToolResult.error(
            f"kli mcp: the kernel {what} while running {tool} ({self.target.description}; "
            f"{why.rstrip('.')}). The call's outcome is unknown. Recovery: {recovery}",
            error="kernel_died")

    def close(self) -> None:
        with self._lock:
            conns = list(self._conns.values())
            self._conns.clear()
        for conn in conns:
            _close_quietly(conn.client)
            conn.client = None
        self.target.close()


def _close_quietly(client: AgentClient | None) -> None:
    if client is None:
        return
    try:
        client.close()
    except Exception:
        pass


# -- results ------------------------------------------------------------------------------------
def pending_note(details: dict[str, Any]) -> str:
    """What a model is told about repair previews a result left pending."""
    notes = []
    for change in details.get("files") or []:
        if isinstance(change, dict) and change.get("status") == "preview" and change.get("candidate"):
            cid, path = change["candidate"], change.get("path") or "?"
            accept = json.dumps({"accept_repair": cid, "path": path})
            notes.append(
                f"Repair preview {cid} for {path} is pending in the notebook: a person can "
                "Accept or Reject it in the kli activity panel of the notebook attached to this "
                f"kernel. To write it yourself, call edit with {accept}.")
    return "\n\n".join(notes)


def result_content(result: ToolResult) -> tuple[str, bool]:
    """The MCP text content and ``isError`` of a tool result."""
    text = result.text if result.text else "(no output)"
    note = pending_note(result.details)
    if note:
        text = f"{text}\n\n{note}"
    return text, not result.ok


# -- the MCP server -----------------------------------------------------------------------------
def _client_name(ctx: Any) -> str:
    params = getattr(ctx.session, "client_params", None)
    info = getattr(params, "client_info", None)
    name = getattr(info, "name", None)
    return name if isinstance(name, str) and name else "client"


def _session_key(ctx: Any, name: str) -> str:
    """One kernel session per MCP session: the HTTP session id when there is one, else the
    client's name (stdio has one client; stateless HTTP clients are told apart by name)."""
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    sid = headers.get("mcp-session-id") if headers is not None else None
    return f"http:{sid}" if sid else f"name:{name}"


def build_server(bridge: Bridge) -> Any:
    """The MCP low-level server whose tools are the kernel's registry for ``bridge.profile``."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    known: dict[str, set[str]] = {}
    # Input schemas of the last listing, for the SDK's per-call header validation on modern
    # streamable HTTP (without it, the SDK would run tools/list — a kernel round trip — per call).
    schemas: dict[str, dict[str, Any]] = {}

    async def in_thread(fn: Callable[[], Any]) -> Any:
        return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        name = _client_name(ctx)
        key = _session_key(ctx, name)
        specs = await in_thread(lambda: bridge.specs(key, SESSION_PREFIX + name))
        known[key] = {s["name"] for s in specs}
        schemas.update({s["name"]: s.get("parameters") or {"type": "object"} for s in specs})
        return types.ListToolsResult(tools=[
            types.Tool(name=s["name"], description=s.get("description") or "",
                       input_schema=s.get("parameters") or {"type": "object"})
            for s in specs
        ])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name = _client_name(ctx)
        key = _session_key(ctx, name)
        label = SESSION_PREFIX + name
        names = known.get(key)
        if names is None:
            names = {s["name"] for s in await in_thread(lambda: bridge.specs(key, label))}
            known[key] = names
        if params.name not in names:
            raise MCPError(types.INVALID_PARAMS,
                           f"Unknown tool: {params.name!r}. This kli server (profile "
                           f"{bridge.profile}) offers: {', '.join(sorted(names))}.")
        args = dict(params.arguments or {})
        result: ToolResult = await in_thread(lambda: bridge.call(key, label, params.name, args))
        text, is_error = result_content(result)
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)

    return Server(SERVER_NAME, version=_version(), instructions=instructions(bridge.profile),
                  get_tool_input_schema=schemas.get,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("kli-kernel")
    except Exception:
        return "0"


def _readable_id(exc: Exception) -> int | str | None:
    """The request id of a line that was a JSON object but not a valid message, when the
    validation error carries it (pydantic keeps the rejected input); None otherwise."""
    errors = getattr(exc, "errors", None)
    try:
        inputs = [e.get("input") for e in errors()] if callable(errors) else []
    except Exception:
        return None
    for value in inputs:
        if isinstance(value, dict) and "id" in value:
            rid = value["id"]
            if isinstance(rid, (int, str)) and not isinstance(rid, bool):
                return rid
    return None


async def serve_stdio(bridge: Bridge) -> None:
    """Serve over stdin/stdout. A line that is not a JSON-RPC message gets a JSON-RPC parse
    error (id null), as JSON-RPC 2.0 asks; the SDK alone would drop it silently."""
    import anyio
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage
    from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError

    server = build_server(bridge)
    async with stdio_server() as (read, write):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def relay() -> None:
            async with send:
                async for item in read:
                    if isinstance(item, Exception):
                        first = str(item).splitlines()[0] if str(item) else type(item).__name__
                        rid = _readable_id(item)
                        if rid is None:
                            error = ErrorData(code=PARSE_ERROR, message=(
                                "Parse error: each line must be one JSON-RPC 2.0 message (a "
                                "JSON object with jsonrpc, method and, for a request, id): "
                                f"{first}"))
                        else:  # valid JSON with an id the client waits on: answer that id
                            error = ErrorData(code=INVALID_REQUEST, message=(
                                "Invalid request: not a valid JSON-RPC 2.0 / MCP message "
                                f"(check method and params): {first}"))
                        await write.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=rid,
                                                                     error=error)))
                        continue
                    await send.send(item)

        async with anyio.create_task_group() as tg:
            tg.start_soon(relay)
            await server.run(receive, write, server.create_initialization_options())


class BearerAuth:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer TOKEN``."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Awaitable[Any]],
                       send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        if scope["type"] == "http":
            header = dict(scope.get("headers") or []).get(b"authorization", b"")
            scheme, _, given = header.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(given.strip(), self.token):
                why = "missing" if not header else "wrong"
                body = json.dumps({
                    "error": "unauthorized",
                    "message": f"kli mcp: {why} bearer token. Send the token kli mcp printed at "
                               "start as 'Authorization: Bearer TOKEN'.",
                }).encode()
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="kli mcp"'),
                    (b"content-length", str(len(body)).encode()),
                ]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def http_app(bridge: Bridge, token: str) -> Any:
    server = build_server(bridge)
    return BearerAuth(server.streamable_http_app(streamable_http_path=HTTP_PATH,
                                                 host="127.0.0.1"), token)


def listen(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0: any free port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(False)
    return sock


async def serve_http(bridge: Bridge, token: str, sock: socket.socket, out: Any = None) -> None:
    import uvicorn

    url = f"http://127.0.0.1:{sock.getsockname()[1]}{HTTP_PATH}"
    out = out or sys.stdout
    print(f"kli mcp: streamable HTTP at {url}", file=out)
    print(f"kli mcp: token {token}", file=out)
    print(f"kli mcp: clients send 'Authorization: Bearer {token}'", file=out, flush=True)
    config = uvicorn.Config(http_app(bridge, token), log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


# -- command line -------------------------------------------------------------------------------
def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kli mcp",
        description="Serve the kli tools of a live kli kernel over MCP (stdio, or streamable "
                    "HTTP on 127.0.0.1 with a bearer token). Without a kernel option it starts "
                    "its own kernel (--start).")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--start", action="store_true",
                       help="start and own a kli kernel rooted at --root (the default)")
    where.add_argument("--connection-file", metavar="FILE",
                       help="attach to the kernel of this connection file")
    where.add_argument("--newest", action="store_true",
                       help="attach to the newest running kernel (Jupyter runtime dir)")
    where.add_argument("--server-url", metavar="URL",
                       help="attach through a Jupyter server, e.g. http://127.0.0.1:8888")
    p.add_argument("--server-token", default=os.environ.get("JUPYTER_TOKEN", ""),
                   help="the Jupyter server's token (default: $JUPYTER_TOKEN)")
    p.add_argument("--kernel-id", help="with --server-url: which kernel (default: the most "
                   "recently active kli kernel, or a new one)")
    p.add_argument("--root", default=os.getcwd(),
                   help="with --start: the kernel's working directory, the tools' root")
    p.add_argument("--kernel-name", default=KERNEL_NAME, help="kernelspec to start (default kli)")
    p.add_argument("--profile", default="kli", choices=PROFILES,
                   help="which tools to offer: kli (bash, eval, read, find, search, write, "
                        "edit), slmcode (ws_* and git_*), or all")
    p.add_argument("--transport", default="stdio", choices=("stdio", "http"))
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"with --transport http: the port on 127.0.0.1 (0: any free port; "
                        f"default {DEFAULT_PORT})")
    p.add_argument("--token", default=os.environ.get(TOKEN_ENV),
                   help=f"with --transport http: the bearer token (default: ${TOKEN_ENV}, else "
                        "a generated one, printed at start)")
    return p


def target_from(ns: argparse.Namespace) -> Target:
    if ns.connection_file:
        return FileKernel(ns.connection_file)
    if ns.newest:
        return FileKernel(None)
    if ns.server_url:
        return ServerKernel(ns.server_url, ns.server_token, ns.kernel_id, ns.kernel_name)
    return OwnKernel(ns.root, ns.kernel_name)


def main(argv: list[str] | None = None) -> int:
    ns = parser().parse_args(argv)
    if ns.kernel_id and not ns.server_url:
        parser().error("--kernel-id needs --server-url")
    import anyio

    sock = None
    if ns.transport == "http":
        try:  # before a kernel starts, so a busy port costs nothing
            sock = listen(ns.port)
        except OSError as exc:
            print(f"kli mcp: cannot listen on 127.0.0.1:{ns.port}: {exc.strerror or exc}; "
                  "choose another --port (0 picks a free one).", file=sys.stderr)
            return 1
    target = target_from(ns)
    try:
        target.start()
    except Exception as exc:
        print(f"kli mcp: could not start a kernel: {type(exc).__name__}: {exc}", file=sys.stderr)
        if sock is not None:
            sock.close()
        return 1
    bridge = Bridge(target, ns.profile)
    # SIGTERM (a client stopping the server) unwinds like Ctrl-C, so an owned kernel is shut
    # down rather than left running.
    signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        if sock is not None:
            token = ns.token or secrets.token_urlsafe(24)
            anyio.run(serve_http, bridge, token, sock)
        else:
            anyio.run(serve_stdio, bridge)
    except KeyboardInterrupt:
        pass
    finally:
        bridge.close()
    return 0


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
