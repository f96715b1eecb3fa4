"""Transport over jupyter_client's ZMQ channels: a kernel this process started, or one found by
its connection file.

Kernels this process starts (``kli.client.start``, ``kli mcp --start``) listen on IPC
transport — Unix sockets in a private folder (mode 0700) — not on loopback TCP: only this user
can reach them, no port is taken, and ipykernel has no reason to warn "running over TCP without
encryption" into the user's outputs. (CurveZMQ would also silence it, but ipykernel 7.4 uses it
only when the kernel manager provisions keys, which jupyter_client 8.10 does not do.)

Every blocking jupyter_client call made here (``own_loop``) runs on an event loop of the calling
thread alone: jupyter_client runs a blocking call on the loop it keeps in a context variable,
and a thread handed a copy of another thread's context (every anyio or ``asyncio.to_thread``
worker) would otherwise share that loop — two calls at once then fail with "This event loop is
already running" (an MCP server's interrupt of an abandoned eval, racing the next request's
new connection, was lost that way). Each such loop is closed when its thread ends, and those of
threads still there at exit when the process exits: a loop left to the garbage collector prints
"unclosed event loop" or "Exception ignored in: <function BaseEventLoop.__del__> … Invalid file
descriptor: -1" on a clean exit (a timer thread per interrupt made forty of them).
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import functools
import glob
import os
import queue
import shutil
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import jupyter_core.utils
from jupyter_client.manager import KernelManager
from jupyter_client.utils import run_sync

from kli.kernel.client.base import KernelError

F = TypeVar("F", bound=Callable[..., Any])
_threads = threading.local()  # per thread: its ThreadContext, and whether in it


class ThreadContext:
    """One thread's context for jupyter_client's blocking calls. The event loop those calls
    make in it (``jupyter_core.utils.ensure_event_loop`` keeps it in a context variable) is
    closed when this is dropped — when its thread ends — or at exit (``close``)."""

    def __init__(self) -> None:
        self.context = contextvars.Context()
        _live.add(self)

    def loop(self) -> asyncio.AbstractEventLoop | None:
        var = getattr(jupyter_core.utils, "_loop", None)
        loop = self.context.get(var) if isinstance(var, contextvars.ContextVar) else None
        return loop if isinstance(loop, asyncio.AbstractEventLoop) else None

    def close(self) -> None:
        loop = self.loop()
        if loop is not None and not loop.is_closed() and not loop.is_running():
            loop.close()

    def __del__(self) -> None:
        self.close()


_live: weakref.WeakSet[ThreadContext] = weakref.WeakSet()


@atexit.register
def _close_loops() -> None:
    """The loops of threads still there at exit (the main thread's)."""
    for ctx in list(_live):
        ctx.close()


def own_loop(fn: F) -> F:
    """``fn`` (which makes blocking jupyter_client calls), run in a context kept for the calling
    thread, so the event loop jupyter_client's blocking API keeps in a context variable
    (``jupyter_core.utils.run_sync``) is this thread's own, never one inherited from the thread
    whose context was copied (see the module docstring). Reentrant."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        if getattr(_threads, "inside", False):  # a nested call: already in the context
            return fn(*args, **kwargs)
        own = getattr(_threads, "own", None)
        if own is None:
            own = _threads.own = ThreadContext()
        _threads.inside = True
        try:
            return own.context.run(fn, *args, **kwargs)
        finally:
            _threads.inside = False

    return run  # type: ignore[return-value]


def manager_client(km: Any) -> Any:
    """A ``BlockingKernelClient`` (channels not started) of ``km``'s kernel, with a session id of
    its own. ``km.client()`` gives every client the manager's session id, which jupyter_client also uses
    as the ZMQ identity of the client's shell and control sockets, and ipykernel's ROUTER
    sockets hand an identity over to its newest connection (``router_handover``): a second
    client of one manager (``kli mcp --start`` makes one per MCP session) silently took the
    first one's shell over, and the first one's requests were dropped unanswered."""
    kc = km.client()
    kc.session.session = str(uuid.uuid4())  # the identity follows (Session.bsession)
    return kc


class ZmqTransport:
    """``client`` is a started BlockingKernelClient; ``manager`` the KernelManager when this
    process holds the kernel's process (liveness and interrupts go through it; it is shut down
    on close unless ``shutdown_on_close`` is False)."""

    def __init__(self, client: Any, manager: Any | None = None, *, ready_timeout: float = 60,
                 shutdown_on_close: bool = True) -> None:
        self.client = client
        self.manager = manager
        self.shutdown_on_close = shutdown_on_close
        self.kernel_info: dict[str, Any] = {}  # the kernel_info_reply's content
        self.description = f"the kernel of {client.connection_file}" if \
            getattr(client, "connection_file", None) else "a kernel over ZMQ"
        own_loop(client.start_channels)()
        try:
            self._sync_iopub(ready_timeout)
        except Exception:
            self.close()
            raise

    @own_loop
    def _sync_iopub(self, timeout: float) -> None:
        """Wait until the kernel answers on iopub: it may still be starting, and a
        subscription is live only some time after connect (a comm reply sent before that
        would be lost). The probe is a ``kernel_info_request`` on the control channel, which a
        kernel answers even while a cell runs (so a busy kernel is not taken for a dead one).
        A kernel this process owns is checked for death meanwhile; for one found by its
        connection file, only ``timeout`` ends the wait (its heartbeat is not trustworthy
        while it boots)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.manager is not None and not self.manager.is_alive():
                raise KernelError("the kernel died while starting; see its log above.")
            msg = self.client.session.msg("kernel_info_request", {})
            self.client.control_channel.send(msg)
            msg_id = msg["header"]["msg_id"]
            until = time.monotonic() + 0.5
            while time.monotonic() < until:
                try:
                    got = self.client.get_iopub_msg(timeout=0.1)
                except queue.Empty:
                    continue
                if got.get("parent_header", {}).get("msg_id") == msg_id:
                    self.kernel_info = self._control_reply(msg_id, 2.0) or {}
                    return
        raise KernelError(f"the kernel did not answer within {timeout:g} s; is it running?")

    def _control_reply(self, msg_id: str, timeout: float) -> dict[str, Any] | None:
        """The content of the control reply to ``msg_id`` (older replies are dropped)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                reply = self.client.get_control_msg(timeout=max(deadline - time.monotonic(),
                                                                0.01))
            except queue.Empty:
                return None
            if reply.get("parent_header", {}).get("msg_id") == msg_id:
                content: dict[str, Any] = reply.get("content") or {}
                return content
        return None

    def send_shell(self, msg_type: str, content: dict[str, Any]) -> str:
        msg = self.client.session.msg(msg_type, content)
        self.client.shell_channel.send(msg)
        msg_id: str = msg["header"]["msg_id"]
        return msg_id

    @own_loop
    def recv_iopub(self, timeout: float) -> dict[str, Any] | None:
        try:
            msg: dict[str, Any] = self.client.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            return None
        return msg

    @own_loop
    def alive(self) -> bool:
        if self.manager is not None:
            return bool(self.manager.is_alive())
        return bool(self.client.hb_channel.is_beating())

    @own_loop
    def interrupt(self) -> None:
        if self.manager is not None:
            self.manager.interrupt_kernel()
        else:
            msg = self.client.session.msg("interrupt_request", {})
            self.client.control_channel.send(msg)

    @own_loop
    def close(self) -> None:
        try:
            self.client.stop_channels()
        finally:
            if self.manager is not None and self.shutdown_on_close:
                self.manager.shutdown_kernel(now=False)


class IpcKernelManager(KernelManager):
    """A KernelManager whose kernel listens on Unix sockets in a private temporary folder
    (removed with the kernel). The folder is short-pathed: a Unix socket path has ~107 bytes."""

    def __init__(self, **kwargs: Any) -> None:
        folder = tempfile.mkdtemp(prefix="kli-kernel-")  # mode 0700
        super().__init__(transport="ipc", ip=os.path.join(folder, "k"), **kwargs)
        self.ipc_folder = folder

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            shutil.rmtree(self.ipc_folder, ignore_errors=True)

    cleanup_resources = own_loop(run_sync(_async_cleanup_resources))
    # The blocking API of the manager, each call on the calling thread's own loop (own_loop).
    start_kernel = own_loop(KernelManager.start_kernel)
    is_alive = own_loop(KernelManager.is_alive)
    interrupt_kernel = own_loop(KernelManager.interrupt_kernel)
    shutdown_kernel = own_loop(KernelManager.shutdown_kernel)
    restart_kernel = own_loop(KernelManager.restart_kernel)


def running_connection_files() -> list[str]:
    """The ``kernel-*.json`` files of the Jupyter runtime dir."""
    from jupyter_core.paths import jupyter_runtime_dir

    return glob.glob(os.path.join(jupyter_runtime_dir(), "kernel-*.json"))


def newest_connection_file() -> str:
    """The most recently written ``kernel-*.json`` in the Jupyter runtime dir."""
    from jupyter_core.paths import jupyter_runtime_dir

    found = running_connection_files()
    if not found:
        raise KernelError(
            f"no running kernel found: no kernel-*.json in {jupyter_runtime_dir()}. Start one "
            "(kli.client.start()) or pass connection_file."
        )
    return max(found, key=os.path.getmtime)
