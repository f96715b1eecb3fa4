"""The stdio transport of a ``kli mcp`` server: the SDK's, plus an answer to every line that is
not a JSON-RPC message."""

from __future__ import annotations

import json
import re

from kli.kernel.mcp.bridge import Bridge
from kli.kernel.mcp.server import build_server

# A request id read back from a line the SDK could not read: an integer of at most this many
# digits (JSON-RPC ids are small; a longer one could not be written back as the same number).
MAX_ID_DIGITS = 19
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


def _id_of_line(line: str) -> int | str | None:
    """The top-level ``"id"`` of a line that is a JSON object whose other parts no JSON reader
    here takes (a lone surrogate, a list nested 1,000 deep, a 5,000-digit integer): a tolerant
    scan of the tokens, never of the values it does not need. None when the line is not an
    object, has no such id, or the id is not a string or an integer that can be sent back as
    it came (the last one wins when there are several, as with a JSON reader)."""
    if not line.lstrip().startswith("{"):
        return None
    depth = 0
    found: int | str | None = None
    tokens = _TOKEN.finditer(line)
    for match in tokens:
        token = match.group()
        if token in "{[":
            depth += 1
        elif token in "}]":
            depth -= 1
            if depth == 0:
                break
        elif depth == 1 and token == '"id"':
            colon = next(tokens, None)
            value = next(tokens, None)
            if colon is None or colon.group() != ":" or value is None:
                return None
            found = _id_value(value.group())
            if value.group() in "{[":
                depth += 1
    return found


def _id_value(token: str) -> int | str | None:
    if token.startswith('"'):
        try:
            text = json.loads(token)
            text.encode("utf-8")  # a lone surrogate cannot be written back
        except (ValueError, UnicodeError):
            return None
        return text if isinstance(text, str) else None
    digits = token[1:] if token.startswith("-") else token
    if digits.isascii() and digits.isdigit() and len(digits) <= MAX_ID_DIGITS:
        return int(token)
    return None


def _readable_id(exc: Exception) -> int | str | None:
    """The request id of a line that was a JSON object but not a valid message: from the
    validation error, which keeps the rejected input — the parsed object when the line was
    JSON the SDK read, else the line itself (``_id_of_line``); None otherwise."""
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
        elif isinstance(value, str):
            rid = _id_of_line(value)
            if rid is not None:
                return rid
    return None


def _first_problem(exc: Exception) -> str:
    """The validation error's first problem in words (``Invalid JSON: recursion limit
    exceeded at line 1 column 289``), else the first line of its text."""
    errors = getattr(exc, "errors", None)
    try:
        first = errors()[0] if callable(errors) else None
        if isinstance(first, dict) and isinstance(first.get("msg"), str):
            loc = ".".join(str(part) for part in first.get("loc") or ())
            return f"{loc}: {first['msg']}" if loc else str(first["msg"])
    except Exception:
        pass
    text = str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


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
                        first = _first_problem(item)
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
