"""The stdio transport of a ``kli mcp`` server: the SDK's, plus an answer to every line that is
not a JSON-RPC message."""

from __future__ import annotations

from kli.kernel.mcp.bridge import Bridge
from kli.kernel.mcp.server import build_server


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
