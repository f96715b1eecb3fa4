"""The MCP handlers of a ``kli mcp`` server: tools/list and tools/call over a bridge, and how a
tool result reads as MCP content."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kli.kernel.mcp.bridge import Bridge
from kli.kernel.mcp.instructions import instructions
from kli.tools.core.result import ToolResult

SERVER_NAME = "kli"
SESSION_PREFIX = "mcp: "


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
