"""kli.kernel.client — attach an agent to a kli kernel and call its tools (public name: kli.client).

    from kli import client
    with client.start() as k:                    # launch and own a kernel
        r = k.call("read", {"path": "a.py"})     # -> ToolResult
    k = client.connect()                         # the newest running kernel (or a connection file)
    k = client.connect_server(url, token)        # through a Jupyter server's websocket

Each connection opens its own ``kli.agent`` comm, so it has its own tool session (anchors,
pending repair candidates). ``call`` raises ``KernelTimeout`` when the kernel does not answer in
time (it is busy) and ``KernelDied`` when it is gone; tool failures are results with
``ok=False``.
"""

from __future__ import annotations

import os
from typing import Any

from kli.kernel.client.base import (
    DEFAULT_TIMEOUT,
    AgentClient,
    KernelDied,
    KernelError,
    KernelTimeout,
    ProtocolError,
)
from kli.tools.core.result import ToolResult

__all__ = [
    "DEFAULT_TIMEOUT",
    "AgentClient",
    "KernelDied",
    "KernelError",
    "KernelTimeout",
    "ProtocolError",
    "ToolResult",
    "connect",
    "connect_server",
    "start",
]


def start(kernel_name: str = "kli", *, cwd: str | None = None, label: str = "agent",
          timeout: float = DEFAULT_TIMEOUT, env: dict[str, str] | None = None) -> AgentClient:
    """Launch a kernel (its working directory — the tools' root — is ``cwd``) and attach to it.
    Closing the client shuts the kernel down."""
    from jupyter_client.manager import KernelManager

    from kli.kernel.client.zmq import ZmqTransport

    km = KernelManager(kernel_name=kernel_name)
    kwargs: dict[str, Any] = {"cwd": cwd or os.getcwd()}
    if env is not None:
        kwargs["env"] = env
    km.start_kernel(**kwargs)
    try:
        transport = ZmqTransport(km.client(), km)
    except Exception:
        km.shutdown_kernel(now=True)
        raise
    return AgentClient(transport, label=label, timeout=timeout)


def connect(connection_file: str | None = None, *, label: str = "agent",
            timeout: float = DEFAULT_TIMEOUT) -> AgentClient:
    """Attach to a running kernel by its connection file (None: the newest ``kernel-*.json``
    in the Jupyter runtime dir). Closing the client leaves the kernel running."""
    from jupyter_client.blocking.client import BlockingKernelClient

    from kli.kernel.client.zmq import ZmqTransport, newest_connection_file

    path = connection_file or newest_connection_file()
    if not os.path.isfile(path):
        from jupyter_client.connect import find_connection_file

        path = find_connection_file(path)
    kc = BlockingKernelClient(connection_file=path)
    kc.load_connection_file()
    return AgentClient(ZmqTransport(kc), label=label, timeout=timeout)


def connect_server(url: str, token: str = "", kernel_id: str | None = None, *,
                   kernel_name: str = "kli", label: str = "agent",
                   timeout: float = DEFAULT_TIMEOUT) -> AgentClient:
    """Attach through a Jupyter server (``url`` like ``http://127.0.0.1:8888``). ``kernel_id``
    None picks the most recently active ``kernel_name`` kernel, or starts one (shut down on
    close)."""
    from kli.kernel.client.server import ServerTransport

    return AgentClient(ServerTransport(url, token, kernel_id, kernel_name=kernel_name),
                       label=label, timeout=timeout)
