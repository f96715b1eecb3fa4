"""kli's tools on Jupyter AI's MCP server (jupyter-server-mcp), for the agents of its chats.

Jupyter AI 3 hands every agent of a chat (Claude Code, Codex, Gemini CLI… through its ACP
client) the MCP server that jupyter-server-mcp runs inside the Jupyter server, on
``http://localhost:<mcp_port>/mcp``, with no token. A package adds tools there through the entry
point group ``jupyter_server_mcp.tools``; this module is kli's entry (``tool_specs``), and it
offers nothing until a person opts in (``kli ai enable``, ``kli.kernel.mcp.optin``): that port
answers any local process without a token.

Once opted in, every tool of the ``kli`` profile is a tool of that server, generated from the
registry (``kli.tools.registry``: names, descriptions, argument schemas), and each call:

- runs in the kli kernel of the notebook the call is about (``choose_kernel``): the kli notebook
  its arguments name, else the notebook the chat is about (attached to its messages, newest
  first — what Jupyter AI knows of a chat's notebook), else the one the chat last worked on,
  else the only kli notebook; with several and none of these, nothing runs and the result
  says how to name one. It goes through the
  ``kli.agent`` comm — so it is an agent's call, held for a person's review when the kernel's
  approval mode says so (docs/review.md);
- runs in the kli session of its chat: the ``X-Jupyter-Chat-Id`` header Jupyter AI puts on every
  request of a chat's agent is the session key, so two chats' read anchors and proposals never
  mix, and the session's label (what the activity panel shows) names the chat's file and the
  agent (``X-JupyterAI-Persona-Id``).

The bridge (``kli.kernel.mcp.bridge``) is the one ``kli mcp`` uses; only the MCP face differs:
``kli mcp`` speaks through the MCP SDK 2, this module through jupyter-server-mcp's FastMCP
(MCP SDK 1), which is why the two can run in different environments.
"""

from __future__ import annotations

import asyncio
import inspect
import keyword
import os
import re
from typing import Annotated, Any, Literal

from kli.kernel import KERNEL_NAME
from kli.kernel.client import DEFAULT_TIMEOUT, AgentClient, KernelError, connect
from kli.kernel.mcp.bridge import Bridge
from kli.kernel.mcp.instructions import describe, instructions
from kli.kernel.mcp.server import result_content
from kli.kernel.mcp.targets import CONNECT_TIMEOUT, Target

PROFILE = "kli"
CHAT_HEADER = "x-jupyter-chat-id"  # get_http_headers lowers header names
PERSONA_HEADER = "x-jupyterai-persona-id"
SESSION_PREFIX = "Jupyter AI chat "
NO_CHAT_LABEL = "Jupyter MCP client (no chat)"
# What the instructions call a session here (kli mcp says "mcp: <client name>").
SESSION_NAME = f'"{SESSION_PREFIX}<chat file> (<agent>)", one session per chat'


def _server_app() -> Any:
    """The running Jupyter ServerApp, or None outside a Jupyter server."""
    try:
        from jupyter_server.serverapp import ServerApp
    except ImportError:
        return None
    return ServerApp.instance() if ServerApp.initialized() else None


class ServerKernels(Target):
    """A kli kernel of the Jupyter server this module runs in, reached through its connection
    file (no token, no HTTP round trip into the server's own event loop): kernel ``kernel_id``,
    or (None) the most recently active kli kernel at each new connection."""

    def __init__(self, kernel_id: str | None = None, notebook: str = "",
                 kernel_name: str = KERNEL_NAME) -> None:
        super().__init__()
        self.kernel_id = kernel_id
        self.kernel_name = kernel_name
        self.description = (f"the kli kernel of {notebook}" if notebook
                            else "the kli kernel of this Jupyter server")

    def _connection_file(self) -> str:
        app = _server_app()
        if app is None:
            raise KernelError("no Jupyter server runs in this process")
        km = app.kernel_manager
        kernels = [k for k in km.list_kernels() if k.get("name") == self.kernel_name]
        if self.kernel_id is not None:
            kernels = [k for k in kernels if k.get("id") == self.kernel_id]
            if not kernels:
                raise KernelError("that kernel no longer runs on this Jupyter server")
        if not kernels:
            raise KernelError(f"no {self.kernel_name} kernel runs on this Jupyter server")
        newest = max(kernels, key=lambda k: str(k.get("last_activity") or ""))
        return str(km.get_kernel(newest["id"]).connection_file)

    def connect(self, label: str) -> AgentClient:
        return connect(self._connection_file(), label=label, timeout=DEFAULT_TIMEOUT,
                       ready_timeout=CONNECT_TIMEOUT)

    def advice(self) -> str:
        return (f"ask the person to open the notebook with the {self.kernel_name} kernel (in "
                f"JupyterLab: Kernel > Change Kernel > {self.kernel_name}), or to restart it if "
                "it died; the next call attaches to it.")


_BRIDGES: dict[str | None, Bridge] = {}
# The kernel each session last worked on (session key -> kernel id): a chat stays on the
# notebook it named or was about until it names or attaches another.
_LAST_KERNEL: dict[str, str] = {}


def bridge(kernel_id: str | None = None, notebook: str = "") -> Bridge:
    """The bridge to kernel ``kernel_id`` (None: the most recently active kli kernel): a kli
    session per chat on that kernel."""
    b = _BRIDGES.get(kernel_id)
    if b is None:
        b = _BRIDGES[kernel_id] = Bridge(ServerKernels(kernel_id, notebook), PROFILE)
    return b


async def _kli_notebooks() -> dict[str, str]:
    """The notebooks of this server whose kernel is a kli kernel: path -> kernel id."""
    app = _server_app()
    if app is None:
        return {}
    kli = {k["id"] for k in app.kernel_manager.list_kernels() if k.get("name") == KERNEL_NAME}
    try:
        sessions = await app.session_manager.list_sessions()
    except Exception:
        return {}
    out: dict[str, str] = {}
    for s in sessions:
        kid = (s.get("kernel") or {}).get("id")
        path = str(s.get("path") or "")
        if kid in kli and path.endswith(".ipynb"):
            out[path] = str(kid)
    return out


def _chat_model(chat_id: str) -> Any:
    """The live chat model (jupyterlab_chat's) of ``chat_id``, or None."""
    app = _server_app()
    try:
        web = app.web_app.settings  # the server's tornado settings (not kli's)
        manager = web.get("jupyter-ai", {}).get("persona-managers", {}).get(chat_id)
        if manager is not None:
            return manager.chat
        chats = web.get("chat_manager")
        return chats.get(chat_id) if chats is not None else None
    except Exception:
        return None


def chat_notebooks(chat: Any) -> list[str]:
    """The notebooks a chat is about, as Jupyter AI knows them, most telling first: those
    attached to its messages (newest message first), then any other attached to the chat."""
    try:
        attachments = chat.get_attachments()
        messages = chat.get_messages()
    except Exception:
        return []
    out: list[str] = []

    def add(att_id: str) -> None:
        value = str(getattr(attachments.get(att_id), "value", "") or "").lstrip("/")
        if value.endswith(".ipynb") and value not in out:
            out.append(value)

    for msg in sorted(messages, key=lambda m: getattr(m, "time", 0), reverse=True):
        for att_id in getattr(msg, "attachments", None) or ():
            add(att_id)
    for att_id in reversed(list(attachments)):
        add(att_id)
    return out


def _named(notebooks: dict[str, str], args: dict[str, Any]) -> list[str]:
    """The kli notebooks the call's arguments name (``path="a.ipynb#c2"``, ``@@ a.ipynb``): by
    their path from the server's root, or by their file name alone when no other kli notebook
    has it (a kernel's paths are relative to its notebook's folder)."""
    text = "\n".join(str(v) for v in args.values())

    def said(name: str) -> bool:
        return re.search(r"(?<![\w./-])(\./)?" + re.escape(name) + r"(?![\w.-])", text) is not None

    base = [os.path.basename(p) for p in notebooks]
    return [p for p in notebooks
            if said(p) or (base.count(os.path.basename(p)) == 1 and said(os.path.basename(p)))]


async def choose_kernel(key: str, chat_id: str, args: dict[str, Any]) -> tuple[str | None, str]:
    """(kernel id, notebook) of the call: the kli notebook its arguments name; else the one the
    chat is about (attached to its messages); else the one this session last worked on; else
    the only kli notebook in the chat file's folder; else the only kli notebook. (None, "") when no
    notebook runs a kli kernel (the most recently active kli kernel then). ValueError with the
    text for the model when several do and nothing says which."""
    notebooks = await _kli_notebooks()
    if not notebooks:
        return None, ""
    named = _named(notebooks, args)
    if len({notebooks[p] for p in named}) == 1:
        return _keep(key, notebooks, named[0])
    chat = _chat_model(chat_id) if chat_id else None
    if chat is not None:
        for path in chat_notebooks(chat):
            if path in notebooks:
                return _keep(key, notebooks, path)
    last = _LAST_KERNEL.get(key)
    for path, kid in notebooks.items():
        if kid == last:
            return kid, path
    if chat is not None:
        try:
            folder = os.path.dirname(str(chat.get_path()))
        except Exception:
            folder = None
        near = [p for p in notebooks if os.path.dirname(p) == folder]
        if len(near) == 1:
            return _keep(key, notebooks, near[0])
    if len(set(notebooks.values())) == 1:
        return _keep(key, notebooks, next(iter(notebooks)))
    names = ", ".join(sorted(notebooks))
    raise ValueError(
        f"kli: {len(notebooks)} notebooks run a kli kernel on this Jupyter server ({names}) and "
        "nothing says which one this chat is about, so nothing ran. Name the notebook in the "
        f'call (e.g. read path="{sorted(notebooks)[0]}"); this chat\'s later calls stay on '
        "its kernel. Or ask the person to attach the notebook to their chat message.")


def _keep(key: str, notebooks: dict[str, str], path: str) -> tuple[str, str]:
    _LAST_KERNEL[key] = notebooks[path]
    return notebooks[path], path


def _chat_label(chat_id: str, persona_id: str) -> str:
    """The session's label: the chat's file and the agent, as Jupyter AI knows them."""
    chat, agent = chat_id, ""
    app = _server_app()
    try:
        managers = app.web_app.settings.get("jupyter-ai", {}).get("persona-managers", {})
        manager = managers.get(chat_id)
        if manager is not None:
            chat = os.path.basename(str(manager.chat.get_path())) or chat_id
            persona = manager.personas.get(persona_id) if persona_id else None
            agent = str(getattr(persona, "name", "") or "")
    except Exception:  # the chat's names are a courtesy: the id still keeps sessions apart
        pass
    return f"{SESSION_PREFIX}{chat}" + (f" ({agent})" if agent else "")


def _session() -> tuple[str, str, str]:
    """(session key, label, chat id) of the current request: its chat, or (no chat header) its
    MCP session — every other local client of the tokenless port is its own session."""
    from fastmcp.server.dependencies import get_context, get_http_headers

    headers = get_http_headers()
    chat_id = headers.get(CHAT_HEADER, "")
    if chat_id:
        return (f"chat:{chat_id}", _chat_label(chat_id, headers.get(PERSONA_HEADER, "")),
                chat_id)
    try:
        sid = get_context().session_id
    except Exception:
        sid = ""
    return f"mcp-session:{sid}", NO_CHAT_LABEL, ""


async def call(tool: str, args: dict[str, Any]) -> tuple[str, bool]:
    """Run ``tool`` in the chat's kli session, on the kernel of the notebook the call is about
    (``choose_kernel``): its MCP text and whether it is an error. A cancelled request stops the
    work in the kernel too."""
    key, label, chat_id = _session()
    try:
        kernel_id, notebook = await choose_kernel(key, chat_id, args)
    except ValueError as exc:
        return str(exc), True
    b = bridge(kernel_id, notebook)
    try:
        result = await asyncio.to_thread(b.call, key, label, tool, args)
    except asyncio.CancelledError:
        await asyncio.shield(asyncio.to_thread(b.stop, key))
        raise
    return result_content(result)


# --- one Python function per registry tool (jupyter-server-mcp registers functions) ---------

_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool,
                          "object": dict[str, Any]}


def _annotation(schema: dict[str, Any]) -> Any:
    """The Python type FastMCP turns back into ``schema`` (its JSON type, enum, items)."""
    if "enum" in schema:
        return Literal[tuple(schema["enum"])]
    kind = schema.get("type")
    if isinstance(kind, list):  # ["string", "array"]: any of them
        kinds = tuple(_annotation({**schema, "type": k}) for k in kind)
        return kinds[0] if len(kinds) == 1 else _union(kinds)
    if kind == "array":
        item = _annotation(schema.get("items") or {})
        return list.__class_getitem__(item)
    return _TYPES.get(kind or "", Any)


def _union(kinds: tuple[Any, ...]) -> Any:
    out = kinds[0]
    for k in kinds[1:]:
        out = out | k
    return out


def make_tool(spec: dict[str, Any]) -> Any:
    """An async function FastMCP registers as ``spec``'s tool: its signature is the spec's
    arguments (required ones first, optional ones default None and are not sent), its
    docstring the MCP description."""
    from fastmcp.tools import ToolResult
    from mcp.types import TextContent
    from pydantic import Field

    name = spec["name"]
    schema = spec.get("parameters") or {}
    required = set(schema.get("required") or ())
    params = []
    props = schema.get("properties") or {}
    names: dict[str, str] = {}  # Python parameter -> argument ('from' is a keyword: from_)
    for arg in sorted(props, key=lambda a: a not in required):
        prop = props[arg]
        kind = _annotation(prop)
        py = arg if arg.isidentifier() and not keyword.iskeyword(arg) else f"{arg}_"
        names[py] = arg
        field = Field(description=prop.get("description") or None,
                      alias=arg if py != arg else None)
        if arg in required:
            params.append(inspect.Parameter(py, inspect.Parameter.KEYWORD_ONLY,
                                            annotation=Annotated[kind, field]))
        else:
            params.append(inspect.Parameter(py, inspect.Parameter.KEYWORD_ONLY, default=None,
                                            annotation=Annotated[kind | None, field]))

    async def run(**kwargs: Any) -> ToolResult:
        args = {names.get(k, k): v for k, v in kwargs.items() if v is not None}
        text, is_error = await call(name, args)
        return ToolResult(content=[TextContent(type="text", text=text)], is_error=is_error)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = describe(spec)
    run.__signature__ = inspect.Signature(params, return_annotation=ToolResult)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params} | {"return": ToolResult}
    return run


def _specs() -> list[dict[str, Any]]:
    from kli.tools.registry import REGISTRY

    return [t.spec() for t in REGISTRY.tools.values() if t.profile == PROFILE]


_TOOLS: dict[str, Any] = {}
TOOLS_MODULE = "kli.kernel.mcp.jupyter_ai_tools"  # where jupyter-server-mcp finds them by name


def tool(name: str) -> Any:
    """The generated function of registry tool ``name`` (made once); AttributeError when the
    ``kli`` profile has no such tool."""
    if name not in _TOOLS:
        spec = next((s for s in _specs() if s["name"] == name), None)
        if spec is None:
            raise AttributeError(f"kli has no tool {name!r}")
        _TOOLS[name] = make_tool(spec)
    return _TOOLS[name]


def tool_specs() -> list[str]:
    """The ``jupyter_server_mcp.tools`` entry point: ``module:function`` of every kli tool when
    the person opted in (``kli ai enable``), none otherwise. Also adds kli's rules to the MCP
    server's instructions (the server is jupyter-server-mcp's, shared with other packages)."""
    from kli.kernel.mcp.optin import enabled

    if not enabled():
        return []
    _add_instructions()
    return [f"{TOOLS_MODULE}:{s['name']}" for s in _specs()]


def _add_instructions() -> None:
    app = _server_app()
    if app is None:
        return
    try:
        apps = app.extension_manager.extension_apps.get("jupyter_server_mcp") or ()
    except Exception:
        return
    text = instructions(PROFILE, session=SESSION_NAME)
    for ext in apps:
        server = getattr(getattr(ext, "mcp_server_instance", None), "mcp", None)
        if server is None:
            continue
        before = server.instructions or ""
        if text not in before:
            server.instructions = f"{before}\n\n{text}" if before else text
