"""The streamable HTTP transport of a ``kli mcp`` server: 127.0.0.1 only, every request
authenticated (``auth.BearerAuth``)."""

from __future__ import annotations

import socket
import sys
from typing import Any

from kli.kernel.mcp.auth import BearerAuth
from kli.kernel.mcp.bridge import Bridge
from kli.kernel.mcp.server import build_server

DEFAULT_PORT = 8848
HTTP_PATH = "/mcp"


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
