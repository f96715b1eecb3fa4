"""The bearer-token check of ``kli mcp``'s HTTP transport."""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable
from typing import Any


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
