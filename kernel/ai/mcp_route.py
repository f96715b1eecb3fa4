"""kli's tools on Jupyter AI's MCP server (jupyter-server-mcp), for the agents of its chats.

Jupyter AI 3 hands every agent of a chat (Claude Code, Codex, Gemini CLI… through its ACP
client) the MCP server that jupyter-server-mcp runs inside the Jupyter server, on
``http://localhost:<mcp_port>/mcp``, with no token. A package adds tools there through the entry
point group ``jupyter_server_mcp.tools``; this module is kli's entry (``tool_specs``), and it
offers nothing until a person opts in (``kli ai enable``, ``kli.kernel.ai.optin``).

The route is locked: a call runs only when it brings this user's key (``X-Kli-Key``, which
the server hands Jupyter AI at its start for the agents it starts: ``hand_key_to_jupyter_ai``)
or the Jupyter server's own token (``Authorization: token …``); any other caller — another
local process, another user's shell on a shared machine — gets a refusal and nothing runs
(``admitted``).

Once opted in, every tool of the ``kli`` profile is a tool of that server, generated from the
registry (``kli.tools.registry``: names, descriptions, argument schemas), and each call:

- runs in the kli kernel of the notebook the call is about, with its arguments as that kernel
  sees them (``kli.kernel.ai.notebooks.choose``, the persona's choice too: the notebook the
  arguments name, the chat's attachments, the chat's last notebook, …; a refusal when nothing
  says which). It goes through the ``kli.agent`` comm — so it is an agent's call, held for a
  person's review when the kernel's approval mode says so, or when another notebook under
  review is one the call can change (``kli.kernel.ai.reach``; docs/review.md);
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
from typing import Annotated, Any, Literal

from kli.kernel.ai import chats
from kli.kernel.ai.notebooks import choose
from kli.kernel.ai.optin import KEY_HEADER, ensure_key, read_key
from kli.kernel.ai.reach import review_for
from kli.kernel.client import DEFAULT_TIMEOUT, AgentClient, connect_in_server
from kli.kernel.client.find import this_server
from kli.kernel.mcp.bridge import Bridge
from kli.kernel.mcp.instructions import describe, instructions
from kli.kernel.mcp.server import result_blocks
from kli.kernel.mcp.targets import CONNECT_TIMEOUT, Target
from kli.kernel.protocol import KERNEL_NAME

PROFILE = "kli"
CHAT_HEADER = "x-jupyter-chat-id"  # get_http_headers lowers header names
PERSONA_HEADER = "x-jupyterai-persona-id"
SESSION_PREFIX = "Jupyter AI chat "
NO_CHAT_LABEL = "Jupyter MCP client (no chat)"
# What the instructions call a session here (kli mcp says "mcp: <client name>").
SESSION_NAME = f'"{SESSION_PREFIX}<chat file> (<agent>)", one session per chat'


class ServerKernels(Target):
    """Kernel ``kernel_id`` of the Jupyter server this module runs in, reached through its
    connection file (``kli.kernel.client.connect_in_server``); which kernel a call goes to is
    ``kli.kernel.ai.notebooks.choose``'s answer, never this target's."""

    def __init__(self, kernel_id: str, notebook: str = "") -> None:
        super().__init__()
        self.kernel_id = kernel_id
        self.description = (f"the kli kernel of {notebook}" if notebook
                            else f"the kli kernel {kernel_id[:8]} of this Jupyter server")

    def connect(self, label: str) -> AgentClient:
        return connect_in_server(self.kernel_id, label=label, timeout=DEFAULT_TIMEOUT,
                                 ready_timeout=CONNECT_TIMEOUT)

    def advice(self) -> str:
        return (f"ask the person to open the notebook with the {KERNEL_NAME} kernel (in "
                f"JupyterLab: Kernel > Change Kernel > {KERNEL_NAME}), or to restart it if "
                "it died; the next call attaches to it.")


_BRIDGES: dict[str, Bridge] = {}
# The kernel each session last worked on (session key -> kernel id): a chat stays on the
# notebook it named or was about until it names or attaches another.
_LAST_KERNEL: dict[str, str] = {}


def _live_chat(key: str) -> bool:
    """Whether session ``key`` is a chat that is open on the server: its session is never
    closed to make room for other clients (a throwaway chat of the headless route is not)."""
    return key.startswith("chat:") and chats.chat_model(key[len("chat:"):]) is not None


def bridge(kernel_id: str, notebook: str = "") -> Bridge:
    """The bridge to kernel ``kernel_id``: a kli session per chat on that kernel; a live
    chat's session is kept whatever other clients come (``_live_chat``)."""
    b = _BRIDGES.get(kernel_id)
    if b is None:
        b = _BRIDGES[kernel_id] = Bridge(ServerKernels(kernel_id, notebook), PROFILE,
                                         keep=_live_chat)
    return b


REFUSED = ("kli: this call brought neither this Jupyter server's key nor its token, so nothing "
           "ran. kli's tools on Jupyter AI's MCP server answer the agents Jupyter AI starts from "
           "a chat (it hands them the key in the X-Kli-Key header) and callers with the "
           "server's token. If a person configured this endpoint for you in "
           ".jupyter/mcp_settings.json, the entry needs that header: `kli ai key` prints it.")


def admitted(headers: dict[str, str], key: str | None, token: str) -> bool:
    """Whether a request with ``headers`` (names lower-cased) may run kli's tools: it brings
    ``key`` in ``X-Kli-Key``, or the server's ``token`` (when it has one) as ``Authorization:
    token T`` / ``Bearer T``. Constant-time comparisons."""
    import hmac

    given = headers.get(KEY_HEADER.lower(), "")
    if key and given and hmac.compare_digest(given.encode(), key.encode()):
        return True
    scheme, _, value = headers.get("authorization", "").strip().partition(" ")
    return bool(token and value and scheme.lower() in ("token", "bearer")
                and hmac.compare_digest(value.strip().encode(), token.encode()))


def _server_token() -> str:
    app = this_server()
    try:
        return str(app.identity_provider.token or "")
    except Exception:
        return str(getattr(app, "token", "") or "")


def _session() -> tuple[str, str, str]:
    """(session key, label, chat id) of the current request: its chat, or (no chat header) its
    MCP session — every other local client of the tokenless port is its own session."""
    from fastmcp.server.dependencies import get_context, get_http_headers

    headers = get_http_headers()
    chat_id = headers.get(CHAT_HEADER, "")
    if chat_id:
        return (f"chat:{chat_id}",
                chats.label(chat_id, headers.get(PERSONA_HEADER, ""), SESSION_PREFIX), chat_id)
    try:
        sid = get_context().session_id
    except Exception:
        sid = ""
    return f"mcp-session:{sid}", NO_CHAT_LABEL, ""


async def call(tool: str, args: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
    """Run ``tool`` in the chat's kli session, on the kernel of the notebook the call is about
    (``kli.kernel.ai.notebooks.choose``), with the arguments as that kernel sees them: its MCP
    content blocks (text, then an image block per image: look) and whether it is an error. A
    cancelled request stops the work in the kernel too."""
    from fastmcp.server.dependencies import get_http_headers

    if not admitted(get_http_headers(include_all=True), read_key(), _server_token()):
        return [{"type": "text", "text": REFUSED}], True
    key, label, chat_id = _session()
    chat = chats.chat_model(chat_id) if chat_id else None
    state = await chats.server_state()
    choice = choose(chats.chat_of(chat, _LAST_KERNEL.get(key)), args, state, reader="model",
                    tool=tool)
    if choice.refusal is not None or choice.kernel_id is None:
        return [{"type": "text", "text": choice.refusal
                 or "kli: no kernel was chosen, so nothing ran."}], True
    if choice.path is not None:
        _LAST_KERNEL[key] = choice.kernel_id
    # Another notebook's review holds for this call where it can change that notebook.
    review = await review_for(choice.kernel_id, state)
    b = bridge(choice.kernel_id, choice.path or "")
    try:
        result = await asyncio.to_thread(b.call, key, label, tool, choice.args, review)
    except asyncio.CancelledError:
        await asyncio.shield(asyncio.to_thread(b.stop, key))
        raise
    return result_blocks(result)


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
    if kind == "number":  # NaN and infinity refused here: FastMCP would hand them on as None
        from pydantic import Field

        return Annotated[float, Field(allow_inf_nan=False)]
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
    from mcp.types import ImageContent, TextContent
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
        blocks, is_error = await call(name, args)
        content = [TextContent(type="text", text=b["text"]) if b["type"] == "text"
                   else ImageContent.model_validate(b) for b in blocks]
        return ToolResult(content=content, is_error=is_error)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = describe(spec)
    run.__signature__ = inspect.Signature(params, return_annotation=ToolResult)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params} | {"return": ToolResult}
    return run


def _specs() -> list[dict[str, Any]]:
    from kli.tools.registry import REGISTRY

    return [t.spec() for t in REGISTRY.tools.values() if t.profile == PROFILE]


_TOOLS: dict[str, Any] = {}
TOOLS_MODULE = "kli.kernel.ai.mcp_tools"  # where jupyter-server-mcp finds them by name


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
    from kli.kernel.ai.optin import enabled

    if not enabled():
        return []
    _add_instructions()
    hand_key_to_jupyter_ai(ensure_key())
    _guard_raw_arguments()
    return [f"{TOOLS_MODULE}:{s['name']}" for s in _specs()]


def _add_instructions() -> None:
    app = this_server()
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


def hand_key_to_jupyter_ai(key: str) -> None:
    """Put ``key`` in the headers of Jupyter AI's built-in MCP entry (this endpoint), which
    Jupyter AI hands every agent it starts from a chat: the entry as Jupyter AI builds it by
    default (``PersonaManager.builtin_mcp_servers``: jupyter-server-mcp's name and port) with
    the header added, or — when the server's configuration lists entries of its own — the
    header added to those on this endpoint's port. Set in the configuration of the server and
    of its extensions, which each chat's persona manager reads when the chat opens."""
    app = this_server()
    if app is None:
        return
    try:
        exts = [e for apps in app.extension_manager.extension_apps.values() for e in apps]
    except Exception:
        exts = []
    mcp = next((e for e in exts if getattr(e, "name", "") == "jupyter_server_mcp"), None)
    port = int(getattr(mcp, "mcp_port", 0) or 0)
    if mcp is None or port == 0:  # no endpoint, or an ephemeral port Jupyter AI cannot name
        return
    header = {"name": KEY_HEADER, "value": key}
    configs = {id(c): c for c in [app.config, *(e.config for e in exts)]}
    for config in configs.values():
        section = config.PersonaManager
        listed = section.get("builtin_mcp_servers")
        if not isinstance(listed, list):
            listed = [{"type": "http", "name": str(mcp.mcp_name),
                       "url": f"http://localhost:{port}/mcp", "headers": []}]
        out = []
        for entry in listed:
            entry = dict(entry)
            url = str(entry.get("url") or "")
            if entry.get("type") == "http" and url.rstrip("/").endswith(f":{port}/mcp"):
                headers = [h for h in entry.get("headers") or []
                           if str(h.get("name", "")).lower() != KEY_HEADER.lower()]
                entry["headers"] = [*headers, header]
            out.append(entry)
        section.builtin_mcp_servers = out


def _guard_raw_arguments() -> None:
    """NaN and infinities in a kli tool's raw arguments refused at the HTTP door
    (``kli.kernel.ai.mcp_guard``): the MCP SDK would turn them into absent arguments."""
    from kli.kernel.ai.mcp_guard import guard

    app = this_server()
    try:
        apps = app.extension_manager.extension_apps.get("jupyter_server_mcp") or ()
    except Exception:
        return
    names = frozenset(s["name"] for s in _specs())
    for ext in apps:
        server = getattr(getattr(ext, "mcp_server_instance", None), "mcp", None)
        if server is not None:
            guard(server, names)
