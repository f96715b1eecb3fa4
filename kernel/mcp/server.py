"""The MCP handlers of a ``kli mcp`` server: tools/list and tools/call over a bridge, and how a
tool result reads as MCP content."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kli.kernel.mcp.bridge import Bridge
from kli.kernel.mcp.instructions import describe, instructions
from kli.tools.core.formats import mcp_tool, result_in_format
from kli.tools.core.result import ToolResult

SERVER_NAME = "kli"
SESSION_PREFIX = "mcp: "
# While a call runs, a progress notification this often (when the client gave a token).
PROGRESS_EVERY = 5.0


def pending_note(details: dict[str, Any]) -> str:
    """What a model is told about proposals a result left pending: a repair preview it may
    write itself (``edit accept_repair``); a call held for review (approval mode), which only
    a person decides — the note says how to wait for it, never how to write it."""
    notes = []
    held = details.get("proposal")
    if isinstance(held, str) and details.get("status") == "pending":
        paths = [str(f.get("path")) for f in details.get("files") or []
                 if isinstance(f, dict) and f.get("path")]
        wait = json.dumps({"id": held, "timeout": 60})
        notes.append(
            f"Proposal {held}{' for ' + ', '.join(paths) if paths else ''} waits for a person's "
            "review: they Accept or Reject it in the kli activity panel of the notebook attached "
            "to this kernel, and only they can. Wait for the decision with await_decision "
            f"{wait}, or go on with other work.")
    for change in details.get("files") or []:
        if not (isinstance(change, dict) and change.get("status") == "preview"
                and change.get("candidate")) or change.get("candidate") == held:
            continue
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


def result_blocks(result: ToolResult) -> tuple[list[dict[str, Any]], bool]:
    """The MCP content blocks (wire shape) and ``isError`` of a tool result: its text
    (``result_content``), then an ``image`` block per image it has (``look``)."""
    text, is_error = result_content(result)
    return result_in_format(result, "mcp", text=text), is_error


def _client_name(ctx: Any) -> str:
    params = getattr(ctx.session, "client_params", None)
    info = getattr(params, "client_info", None)
    name = getattr(info, "name", None)
    return name if isinstance(name, str) and name else "client"


def _session_key(ctx: Any, name: str) -> str:
    """One kernel session per MCP client. Over HTTP, a client proves it is the same one by its
    ``Mcp-Session-Id``; without one (stateless / modern streamable HTTP), each connection is
    its own client — two clients that share a name never share read anchors. Over stdio there
    is one client."""
    request = getattr(ctx, "request", None)
    if request is None:
        return f"stdio:{name}"
    headers = getattr(request, "headers", None)
    sid = headers.get("mcp-session-id") if headers is not None else None
    if sid:
        return f"http:{sid}"
    peer = getattr(request, "client", None)
    if peer is None:  # no peer address: nothing ties two requests together
        return f"request:{id(request)}"
    return f"conn:{peer.host}:{peer.port}:{name}"


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
            types.Tool.model_validate(mcp_tool(_with_facts(s))) for s in specs
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
        result: ToolResult | None = None

        async def report() -> None:
            # Keeps a client's request timeout from ending a long call (the Inspector's is
            # 60 s): a no-op unless the client sent a progressToken.
            began = anyio.current_time()
            while True:
                await anyio.sleep(PROGRESS_EVERY)
                seconds = anyio.current_time() - began
                note = await in_thread(lambda: bridge.busy_note(key))
                await ctx.session.report_progress(
                    seconds, None, f"{params.name} still running in the kernel "
                    f"({seconds:.0f} s)" + (f". {note}" if note else ""))

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(report)
                result = await in_thread(lambda: bridge.call(key, label, params.name, args))
                tg.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class():
            # The client cancelled the request (notifications/cancelled) or went away: stop
            # the work in the kernel too, not only our wait for it.
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(lambda: bridge.stop(key))
            raise
        assert result is not None
        blocks, is_error = result_blocks(result)
        content: list[Any] = [types.TextContent(text=b["text"]) if b["type"] == "text"
                              else types.ImageContent.model_validate(b) for b in blocks]
        return types.CallToolResult(content=content, is_error=is_error)

    return Server(SERVER_NAME, version=_version(), instructions=instructions(bridge.profile),
                  get_tool_input_schema=schemas.get,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def _with_facts(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with its MCP description (``instructions.describe``) and the ``title`` and MCP
    ``annotations`` of its registry entry, which ``formats.mcp_tool`` carries over (none for a
    tool the local registry does not know)."""
    from kli.tools.registry import REGISTRY

    spec = {**spec, "description": describe(spec)}
    entry = REGISTRY.tools.get(spec["name"])
    if entry is None:
        return spec
    facts = entry.annotations()
    return {**spec, "title": facts["title"], "annotations": facts}


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("kli-kernel")
    except Exception:
        return "0"
