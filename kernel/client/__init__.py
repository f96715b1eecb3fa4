"""kli.kernel.client — attach an agent to a kli kernel and call its tools (public name: kli.client).

    from kli import client
    with client.start() as k:                    # launch and own a kernel
        r = k.call("read", {"path": "a.py"})     # -> ToolResult
    k = client.connect(notebook="analysis.ipynb")  # that notebook's kernel (or a connection file)
    print(k.where)                               # which kernel, its notebook and working dir
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
    KernelBusy,
    KernelDied,
    KernelError,
    KernelTimeout,
    ProtocolError,
)
from kli.tools.core.result import ToolResult

__all__ = [
    "DEFAULT_TIMEOUT",
    "AgentClient",
    "KernelBusy",
    "KernelDied",
    "KernelError",
    "KernelTimeout",
    "ProtocolError",
    "ToolResult",
    "attach_manager",
    "connect",
    "connect_in_server",
    "connect_server",
    "launch",
    "resolve_connection_file",
    "start",
]


def launch(kernel_name: str = "kli", *, cwd: str | None = None,
           env: dict[str, str] | None = None, stdout: int | None = None) -> Any:
    """Start a kernel process (its working directory — the tools' root — is ``cwd``) and return
    its jupyter_client ``KernelManager``; ``stdout``, a descriptor, receives the kernel's own
    output (default: this process's). The kernel listens on IPC transport (Unix sockets in a
    private folder), not loopback TCP: see ``kli.kernel.client.zmq``."""
    from kli.kernel.client.zmq import IpcKernelManager

    km = IpcKernelManager(kernel_name=kernel_name)
    kwargs: dict[str, Any] = {"cwd": cwd or os.getcwd()}
    if env is not None:
        kwargs["env"] = env
    if stdout is not None:
        kwargs["stdout"] = stdout
    km.start_kernel(**kwargs)
    return km


def start(kernel_name: str = "kli", *, cwd: str | None = None, label: str = "agent",
          timeout: float = DEFAULT_TIMEOUT, env: dict[str, str] | None = None) -> AgentClient:
    """Launch a kernel (its working directory — the tools' root — is ``cwd``) and attach to it
    over IPC transport (Unix sockets only this user can open; see ``kli.kernel.client.zmq``).
    Closing the client shuts the kernel down."""
    from kli.kernel.client.zmq import ZmqTransport, manager_client

    km = launch(kernel_name, cwd=cwd, env=env)
    try:
        transport = ZmqTransport(manager_client(km), km)
    except Exception:
        km.shutdown_kernel(now=True)
        raise
    return AgentClient(transport, label=label, timeout=timeout)


def attach_manager(km: Any, *, label: str = "agent", timeout: float = DEFAULT_TIMEOUT,
                   ready_timeout: float = 60) -> AgentClient:
    """Attach to a kernel whose ``KernelManager`` this process holds (see ``launch``), leaving
    the kernel to its owner on close; liveness comes from the process itself, so a kill is seen
    at once."""
    from kli.kernel.client.zmq import ZmqTransport, manager_client

    transport = ZmqTransport(manager_client(km), km, shutdown_on_close=False,
                             ready_timeout=ready_timeout)
    return AgentClient(transport, label=label, timeout=timeout)


def resolve_connection_file(path: str | None = None) -> str:
    """The connection file to attach to: ``path`` itself, or found by name in the Jupyter
    runtime dir (``OSError`` when there is none); None: the newest ``kernel-*.json`` there
    (``KernelError`` when there is none)."""
    from kli.kernel.client.zmq import newest_connection_file

    if not path:
        return newest_connection_file()
    if os.path.isfile(path):
        return path
    from jupyter_client.connect import find_connection_file

    found: str = find_connection_file(path)
    return found


def connect(connection_file: str | None = None, *, notebook: str | None = None,
            label: str = "agent", timeout: float = DEFAULT_TIMEOUT,
            ready_timeout: float = 60) -> AgentClient:
    """Attach to a running kernel: the one of ``notebook`` (a path — absolute, relative to
    here, or relative to a Jupyter server's root — looked up in this machine's Jupyter servers'
    sessions, then in the kernels' own ``JPY_SESSION_NAME``), or of a connection file, or
    (neither given) the newest ``kernel-*.json`` in the Jupyter runtime dir — with a warning
    naming the one picked when several run. The client's ``where`` (also logged) names the
    kernel, its notebook and its working directory. Closing it leaves the kernel running."""
    import warnings

    from jupyter_client.blocking.client import BlockingKernelClient

    from kli.kernel.client.zmq import ZmqTransport, running_connection_files

    if notebook is not None:
        if connection_file is not None:
            raise ValueError("pass connection_file or notebook, not both")
        from kli.kernel.client.find import find_notebook_kernel

        found = find_notebook_kernel(notebook)
        if found.connection_file is None:  # a kernel the server relays (e.g. on a gateway)
            return connect_server(str(found.server_url), found.server_token, found.kernel_id,
                                  label=label, timeout=timeout, ready_timeout=ready_timeout)
        connection_file = found.connection_file
    path = resolve_connection_file(connection_file)
    kc = BlockingKernelClient(connection_file=path)
    kc.load_connection_file()
    agent = AgentClient(ZmqTransport(kc, ready_timeout=ready_timeout), label=label,
                        timeout=timeout)
    if connection_file is None:
        others = len(running_connection_files()) - 1
        if others > 0:
            warnings.warn(f"kli.client.connect() attached to the newest of {others + 1} "
                          f"kernels: {agent.where}. Pass notebook= or a connection file to "
                          "choose.", stacklevel=2)
    return agent


def connect_in_server(kernel_id: str, *, label: str = "agent",
                      timeout: float = DEFAULT_TIMEOUT, ready_timeout: float = 60) -> AgentClient:
    """Attach to kernel ``kernel_id`` of the Jupyter server this process runs (a persona, a
    server extension) through its connection file: no token, no HTTP round trip into the
    server's own event loop. Blocking (call it off that loop); ``KernelError`` when no server
    runs here or it has no such kernel."""
    from kli.kernel.client.find import this_server

    app = this_server()
    if app is None:
        raise KernelError("no Jupyter server runs in this process")
    try:
        manager = app.kernel_manager.get_kernel(kernel_id)
    except KeyError:
        raise KernelError(f"kernel {kernel_id} no longer runs on this Jupyter server") from None
    return connect(str(manager.connection_file), label=label, timeout=timeout,
                   ready_timeout=ready_timeout)


def connect_server(url: str, token: str = "", kernel_id: str | None = None, *,
                   notebook: str | None = None, kernel_name: str = "kli", label: str = "agent",
                   timeout: float = DEFAULT_TIMEOUT, ready_timeout: float = 60) -> AgentClient:
    """Attach through a Jupyter server (``url`` like ``http://127.0.0.1:8888``): to kernel
    ``kernel_id``, or to the kernel of the server's session for ``notebook`` (a path under the
    server's root), or (neither) to the most recently active ``kernel_name`` kernel, or a new
    one (shut down on close) when there is none or the server forbids listing kernels."""
    from kli.kernel.client.server import ServerTransport

    transport = ServerTransport(url, token, kernel_id, kernel_name=kernel_name,
                                ready_timeout=ready_timeout, notebook=notebook)
    return AgentClient(transport, label=label, timeout=timeout)
