"""The ``kli mcp`` command line: which kernel, which profile, which transport (``main``).

``kli mcp ARGS`` (the ``kli`` console script) and ``python -m kli.kernel.mcp ARGS`` both run
``main``.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import sys
from typing import Any

from kli.kernel.mcp.bridge import PROFILES, Bridge
from kli.kernel.mcp.stdio import serve_stdio
from kli.kernel.mcp.streamable_http import DEFAULT_PORT, listen, serve_http
from kli.kernel.mcp.targets import FileKernel, OwnKernel, ServerKernel, Target
from kli.kernel.protocol import KERNEL_NAME

TOKEN_ENV = "KLI_MCP_TOKEN"


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
