"""Transport over jupyter_client's ZMQ channels: a kernel this process started, or one found by
its connection file.

Kernels this process starts (``kli.client.start``, ``kli mcp --start``) listen on IPC
transport — Unix sockets in a private folder (mode 0700) — not on loopback TCP: only this user
can reach them, no port is taken, and ipykernel has no reason to warn "running over TCP without
encryption" into the user's outputs. (CurveZMQ would also silence it, but ipykernel 7.4 uses it
only when the kernel manager provisions keys, which jupyter_client 8.10 does not do.)
"""

from __future__ import annotations

import glob
import os
import queue
import shutil
import tempfile
import time
from typing import Any

from jupyter_client.manager import KernelManager
from jupyter_client.utils import run_sync

from kli.kernel.client.base import KernelError


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
        client.start_channels()
        try:
            self._sync_iopub(ready_timeout)
        except Exception:
            self.close()
            raise

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

    def recv_iopub(self, timeout: float) -> dict[str, Any] | None:
        try:
            msg: dict[str, Any] = self.client.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            return None
        return msg

    def alive(self) -> bool:
        if self.manager is not None:
            return bool(self.manager.is_alive())
        return bool(self.client.hb_channel.is_beating())

    def interrupt(self) -> None:
        if self.manager is not None:
            self.manager.interrupt_kernel()
        else:
            msg = self.client.session.msg("interrupt_request", {})
            self.client.control_channel.send(msg)

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

    cleanup_resources = run_sync(_async_cleanup_resources)


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
