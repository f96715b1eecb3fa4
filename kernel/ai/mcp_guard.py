"""A call of kli's tools on Jupyter AI's MCP server whose arguments hold NaN or an infinity is
refused at the HTTP door, before the MCP SDK reads it.

JSON has no NaN or infinity, but a lenient client writes them (``"timeout": NaN``) and
Python's reader takes them. The MCP SDK of Jupyter AI's environment (``mcp<2``) then re-dumps
each request in JSON mode with nulls left out: the NaN becomes an absent argument before any
tool code sees it, and a NaN timeout was taken as "no timeout". So the check reads the raw
body: a ``tools/call`` of a kli tool with such a number is answered with an error result
naming the argument, and nothing runs. Other requests pass through untouched.

It is an ASGI middleware added to the app jupyter-server-mcp builds (``guard``, from
``kli.kernel.ai.mcp_route.tool_specs``, before the server starts).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class _NonFinite:
    """What the JSON reader makes of ``NaN``, ``Infinity`` or ``-Infinity``."""

    def __init__(self, text: str) -> None:
        self.text = text


def _found(value: Any, name: str = "") -> tuple[str, str] | None:
    if isinstance(value, _NonFinite):
        return name, value.text
    if isinstance(value, dict):
        for key, item in value.items():
            hit = _found(item, f"{name}.{key}" if name else str(key))
            if hit:
                return hit
    if isinstance(value, list):
        for i, item in enumerate(value):
            hit = _found(item, f"{name}[{i}]")
            if hit:
                return hit
    return None


def non_finite_call(body: bytes, tools: frozenset[str]) -> tuple[Any, str] | None:
    """(JSON-RPC id, refusal text) when ``body`` calls one of ``tools`` with NaN or an
    infinity among its arguments; None otherwise (also for what is not JSON: the SDK answers
    that)."""
    if b"NaN" not in body and b"Infinity" not in body:
        return None
    try:
        data = json.loads(body, parse_constant=_NonFinite)
    except ValueError:
        return None
    for msg in data if isinstance(data, list) else [data]:
        if not isinstance(msg, dict) or msg.get("method") != "tools/call":
            continue
        params = msg.get("params")
        if not isinstance(params, dict) or params.get("name") not in tools:
            continue
        hit = _found(params.get("arguments"))
        if hit is not None:
            name, text = hit
            return msg.get("id"), (
                f"kli: argument '{name}' is {text}, not a finite number (JSON has no NaN or "
                "infinity), so the call was refused and nothing ran. Give a number (a "
                "timeout in seconds), or leave the argument out for its default.")
    return None


class Guard:
    """The ASGI middleware: POST bodies read whole, checked by ``non_finite_call``, then handed
    on unchanged (or answered with the refusal as a JSON-RPC error result)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]],
                 tools: frozenset[str]) -> None:
        self.app, self.tools = app, tools

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        body = b""
        while True:
            msg = await receive()
            messages.append(msg)
            if msg.get("type") != "http.request":
                break
            body += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        refused = non_finite_call(body, self.tools)
        if refused is None:
            async def replay() -> Message:
                return messages.pop(0) if messages else await receive()

            await self.app(scope, replay, send)
            return
        rid, text = refused
        answer = json.dumps({"jsonrpc": "2.0", "id": rid, "result": {
            "content": [{"type": "text", "text": text}], "isError": True}}).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(answer)).encode())]})
        await send({"type": "http.response.body", "body": answer})


def guard(fastmcp_server: Any, tools: frozenset[str]) -> None:
    """Make ``fastmcp_server.http_app`` (which jupyter-server-mcp calls when it starts serving)
    build its app with ``Guard`` in front; once."""
    if getattr(fastmcp_server, "_kli_guarded", False):
        return
    from starlette.middleware import Middleware

    build = fastmcp_server.http_app

    def http_app(*args: Any, **kwargs: Any) -> Any:
        kwargs["middleware"] = [*(kwargs.get("middleware") or []),
                                Middleware(Guard, tools=tools)]
        return build(*args, **kwargs)

    fastmcp_server.http_app = http_app
    fastmcp_server._kli_guarded = True
