"""Where the kernel of a ``kli mcp`` server is, and what its death means.

A target makes agent connections (through ``kli.kernel.client``, the one home of attaching to
a kernel) and knows two things about a dead kernel: the ``advice`` to give (what a person or
model does to get a kernel back), and whether it can ``_restart`` one itself (only the kernel
the server started and owns).
"""

from __future__ import annotations

import abc
import os
import sys
import threading
from typing import Any

from kli.kernel.client import (
    DEFAULT_TIMEOUT,
    AgentClient,
    KernelDied,
    KernelError,
    attach_manager,
    connect,
    connect_server,
    launch,
    resolve_connection_file,
)
from kli.kernel.protocol import KERNEL_NAME

# How long attaching to a kernel may take before the call reports it unreachable (a dead
# kernel's connection file never answers; a starting one answers within a few seconds).
CONNECT_TIMEOUT = 20.0


class Target(abc.ABC):
    """How to reach the kernel, and what to do when it dies.

    ``generation`` grows each time the kernel is known to have died, so every connection made
    to the dead kernel is dropped and remade.
    """

    description = "a kli kernel"

    def __init__(self) -> None:
        self.generation = 0
        self.lock = threading.Lock()
        self._after_death = ""

    def start(self) -> None:  # noqa: B027 - an optional hook: most targets have nothing to do
        """Get ready before serving (start an owned kernel); errors are fatal at start."""

    @abc.abstractmethod
    def connect(self, label: str) -> AgentClient:
        """A new agent connection (its own tool session) labelled ``label``."""

    @abc.abstractmethod
    def advice(self) -> str:
        """What the user or model does to get a kernel back; changes nothing."""

    def note_death(self, generation: int) -> str:
        """The kernel of ``generation`` died: the first report of it restarts the kernel if
        this target can (``_restart``); every report returns what to tell the caller."""
        with self.lock:
            if generation == self.generation:
                self.generation += 1
                self._after_death = self._restart() or self.advice()
            return self._after_death

    def _restart(self) -> str | None:
        """Get a working kernel back, if this target owns one: what happened, for the caller.
        None: this target cannot restart kernels (the ``advice`` says who can)."""
        return None

    def close(self) -> None:  # noqa: B027 - an optional hook: most targets own nothing
        """Release what the target owns."""


class OwnKernel(Target):
    """A kernel this server starts (root ``root``) and shuts down on exit; restarted when it
    dies."""

    def __init__(self, root: str, kernel_name: str = KERNEL_NAME,
                 env: dict[str, str] | None = None) -> None:
        super().__init__()
        self.root = os.path.abspath(root)
        self.kernel_name = kernel_name
        self.env = env
        self.km: Any = None
        self.description = f"the kernel kli mcp started in {self.root}"

    def start(self) -> None:
        # The kernel's own stdout goes to our stderr: on stdio, our stdout is the MCP wire.
        self.km = launch(self.kernel_name, cwd=self.root, env=self.env,
                         stdout=sys.stderr.fileno())

    def connect(self, label: str) -> AgentClient:
        with self.lock:
            if self.km is None:  # an earlier start failed: try again now
                self.start()
            km = self.km
        if not km.is_alive():
            raise KernelDied("the kernel process has exited")
        return attach_manager(km, label=label, timeout=DEFAULT_TIMEOUT,
                              ready_timeout=CONNECT_TIMEOUT)

    def advice(self) -> str:
        return "retry the call: kli mcp starts a fresh kernel."

    def _restart(self) -> str:
        if self.km is not None and self.km.is_alive():  # only a connection broke
            return "kli mcp's kernel is still running; the next call reconnects to it."
        self._shutdown()
        try:
            self.start()
        except Exception as exc:
            self.km = None
            return (f"kli mcp could not start a new kernel ({type(exc).__name__}: {exc}); "
                    "retry the call to try again.")
        pid = getattr(getattr(self.km, "provisioner", None), "pid", None) or "?"
        return (f"kli mcp started a fresh kernel (pid {pid}) in {self.root}: the image's "
                "variables, your read anchors and pending repair previews are gone — read "
                "files again before editing, then retry.")

    def _shutdown(self) -> None:
        km, self.km = self.km, None
        if km is not None:
            try:
                km.shutdown_kernel(now=True)
            except Exception:
                pass
            try:
                km.cleanup_resources()
            except Exception:
                pass

    def close(self) -> None:
        with self.lock:
            self._shutdown()


class FileKernel(Target):
    """The kernel of one connection file (``path`` None: the newest one, looked up anew at
    every reconnect)."""

    def __init__(self, path: str | None = None) -> None:
        super().__init__()
        self.path = path
        self.description = (f"the kernel of connection file {path}" if path
                            else "the newest running kernel")

    def connect(self, label: str) -> AgentClient:
        try:
            path = resolve_connection_file(self.path)
        except OSError as exc:
            raise KernelError(f"connection file {self.path} not found ({exc})") from exc
        try:
            return connect(path, label=label, timeout=DEFAULT_TIMEOUT,
                           ready_timeout=CONNECT_TIMEOUT)
        except KernelError as exc:
            raise KernelError(f"no kernel answered at {path} within {CONNECT_TIMEOUT:g} s "
                              f"({exc})") from exc

    def advice(self) -> str:
        if self.path is None:
            return ("start or restart a kli kernel (e.g. open a notebook with the kli kernel); "
                    "the next call attaches to the newest running kernel.")
        return ("restart that kernel (in JupyterLab: Kernel > Restart Kernel, which keeps its "
                "connection file); the next call reconnects to it.")


class ServerKernel(Target):
    """A kernel of a Jupyter server, through its REST API and websocket (``kernel_id`` None:
    the most recently active kli kernel, or a new one)."""

    def __init__(self, url: str, token: str = "", kernel_id: str | None = None,
                 kernel_name: str = KERNEL_NAME) -> None:
        super().__init__()
        self.url, self.token, self.kernel_id, self.kernel_name = url, token, kernel_id, kernel_name
        which = f"kernel {kernel_id}" if kernel_id else f"the newest {kernel_name} kernel"
        self.description = f"{which} of the Jupyter server at {url}"
        self._started: str | None = None  # the kernel this target started (and shuts down)

    def connect(self, label: str) -> AgentClient:
        """Without a kernel id, the first connection may start a kernel (no kli kernel runs, or
        the server forbids listing them, as a Kernel Gateway at its defaults does): this target
        then owns it, every later session attaches to it, and ``close`` shuts it down."""
        started = None if self.kernel_id else self._started
        try:
            client = connect_server(self.url, self.token, self.kernel_id or started,
                                    kernel_name=self.kernel_name, label=label,
                                    timeout=DEFAULT_TIMEOUT, ready_timeout=CONNECT_TIMEOUT)
        except KernelError:
            if started is None:
                raise
            self._started = None  # the kernel it started is gone (404): find or start anew
            return self.connect(label)
        transport: Any = client.transport
        if getattr(transport, "owned", False):
            transport.owned = False  # the target's now, not this one session's
            self._started = transport.kernel_id
        return client

    def close(self) -> None:
        """Shut down the kernel this target started, if any."""
        kernel_id, self._started = self._started, None
        if kernel_id is None:
            return
        import urllib.request

        req = urllib.request.Request(f"{self.url.rstrip('/')}/api/kernels/{kernel_id}",
                                     method="DELETE")
        if self.token:
            req.add_header("Authorization", f"token {self.token}")
        try:
            urllib.request.urlopen(req, timeout=30).close()
        except OSError:
            pass  # gone already, or the server is: nothing left to shut down

    def advice(self) -> str:
        return (f"the Jupyter server at {self.url} restarts a dead kernel by itself; if it did "
                "not, restart the kernel in JupyterLab (Kernel > Restart Kernel) or start a new "
                f"{self.kernel_name} kernel. The next call reconnects.")
