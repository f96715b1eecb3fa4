"""What every agent connection does, whatever carries the Jupyter messages.

A transport sends shell messages and yields iopub messages; ``AgentClient`` opens the
``kli.agent`` comm on it and turns requests into ``ToolResult``s (docs/protocol.md). While it
waits it checks that the kernel is alive, so a dead kernel is reported within seconds and a
busy one within the call's timeout — never waited on forever.
"""

from __future__ import annotations

import itertools
import time
import uuid
from typing import Any, Protocol

from kli.tools.core.result import ToolResult

AGENT_TARGET = "kli.agent"
# Longer than the longest tool deadline (300 s), so the tool's own timeout answers first.
DEFAULT_TIMEOUT = 330.0
# How often, while waiting, the kernel's liveness is checked.
ALIVE_EVERY = 1.0
RESTARTED = ("the kernel restarted while waiting for {what}: its image and this connection's "
             "session (read anchors, pending previews) are gone; connect again.")


class KernelError(RuntimeError):
    """The kernel cannot answer: it died, or the connection broke."""


class KernelDied(KernelError):
    """The kernel process is gone (or its heartbeat stopped)."""


class KernelTimeout(KernelError, TimeoutError):
    """No reply within the timeout (the kernel is busy, e.g. running a long cell)."""


class ProtocolError(KernelError):
    """The kernel answered with an ``error`` reply (malformed request) or is not a kli kernel."""

    def __init__(self, text: str, code: str = "error") -> None:
        super().__init__(text)
        self.code = code


class Transport(Protocol):
    """The few things an AgentClient needs from a connection to a kernel."""

    def send_shell(self, msg_type: str, content: dict[str, Any]) -> str:
        """Send a shell-channel message; returns its msg_id."""
        ...

    def recv_iopub(self, timeout: float) -> dict[str, Any] | None:
        """The next iopub message, or None after ``timeout`` seconds."""
        ...

    def alive(self) -> bool:
        """False once the kernel is known to be dead."""
        ...

    def interrupt(self) -> None: ...

    def close(self) -> None: ...


class AgentClient:
    """One ``kli.agent`` comm (one tool session) over a transport.

    ``call`` returns the tool's ``ToolResult`` (tool-level failures are results with
    ``ok=False``); it raises ``KernelTimeout``, ``KernelDied`` or ``ProtocolError`` when the
    kernel does not give a result.
    """

    def __init__(self, transport: Transport, *, label: str = "agent",
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        self.transport = transport
        self.timeout = timeout
        self.comm_id = uuid.uuid4().hex
        self._ids = itertools.count(1)
        self._status = "unknown"
        self._closed = False
        self._restarted = False
        self._kernel_session: str | None = None  # the kernel process's message session id
        self.session: str | None = None
        self.tools: list[str] = []
        self.transport.send_shell("comm_open", {"comm_id": self.comm_id,
                                                "target_name": AGENT_TARGET,
                                                "data": {"v": 1, "label": label}})
        try:
            hello = self._wait(lambda d: d.get("op") == "hello", timeout,
                               "opening the kli.agent comm")
        except BaseException:
            self._closed = True
            self.transport.close()
            raise
        self.session = hello.get("session")
        self.tools = list(hello.get("tools") or [])

    # -- requests -----------------------------------------------------------------------------
    def request(self, data: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send one request (an id is added) and return the reply naming it."""
        if self._closed:
            raise KernelError("this client is closed; connect again.")
        if self._restarted:
            raise KernelDied(RESTARTED.format(what="this request"))
        rid = next(self._ids)
        self.transport.send_shell("comm_msg", {"comm_id": self.comm_id,
                                               "data": {"v": 1, "id": rid, **data}})
        what = f"the {data.get('tool') or data.get('op')} request"
        reply = self._wait(lambda d: d.get("id") == rid, timeout or self.timeout, what)
        if reply.get("op") == "error":
            raise ProtocolError(str(reply.get("text")), str(reply.get("error")))
        return reply

    def call(self, tool: str, args: dict[str, Any] | None = None, *,
             timeout: float | None = None) -> ToolResult:
        reply = self.request({"op": "call", "tool": tool, "args": args or {}}, timeout)
        return ToolResult.from_json(reply)

    def specs(self, profile: str = "kli") -> list[dict[str, Any]]:
        """JSON-Schema function-calling specs (``profile``: kli, slmcode or all)."""
        specs: list[dict[str, Any]] = self.request({"op": "list", "profile": profile})["specs"]
        return specs

    def ping(self, timeout: float | None = None) -> float:
        """Round trip of a bare comm echo, in seconds."""
        started = time.perf_counter()
        self.request({"op": "ping"}, timeout)
        return time.perf_counter() - started

    def interrupt(self) -> None:
        """Interrupt what the kernel runs (a long eval returns an 'interrupted' error)."""
        self.transport.interrupt()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self.transport.alive():
                self.transport.send_shell("comm_close", {"comm_id": self.comm_id, "data": {}})
        except Exception:
            pass
        self.transport.close()

    def __enter__(self) -> AgentClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- waiting ------------------------------------------------------------------------------
    def _wait(self, match: Any, timeout: float, what: str) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        next_check = time.monotonic() + ALIVE_EVERY
        while True:
            now = time.monotonic()
            if now >= deadline:
                busy = " The kernel is busy (running a cell or another call);" if \
                    self._status == "busy" else ""
                raise KernelTimeout(
                    f"no reply to {what} within {timeout:g} s.{busy} Interrupt the kernel "
                    "or retry with a longer timeout."
                )
            if now >= next_check:
                next_check = now + ALIVE_EVERY
                if not self.transport.alive():
                    raise KernelDied(f"the kernel died while waiting for {what}; restart it "
                                     "and connect again (the image's state is lost).")
            msg = self.transport.recv_iopub(min(ALIVE_EVERY, max(deadline - now, 0.01)))
            if msg is None:
                continue
            msg_type = msg.get("msg_type") or msg.get("header", {}).get("msg_type")
            content = msg.get("content") or {}
            if msg_type == "status":
                state = content.get("execution_state")
                if state == "dead":
                    raise KernelDied(f"the kernel died while waiting for {what}.")
                if state in ("restarting", "starting") and self.session is not None:
                    # A new kernel process (a Jupyter server or gateway restarted a dead one):
                    # it has no comm of ours, so a request would go unanswered until timeout.
                    self._restarted = True
                    raise KernelDied(RESTARTED.format(what=what))
                self._status = state or self._status
                continue
            sender = (msg.get("header") or {}).get("session")
            if msg_type == "iopub_welcome" and self._kernel_session and sender \
                    and sender != self._kernel_session:
                # Every kernel process has its own session id: a welcome from another one
                # means the kernel was restarted behind the same ports (connection file).
                self._restarted = True
                raise KernelDied(RESTARTED.format(what=what))
            if msg_type == "comm_close" and content.get("comm_id") == self.comm_id:
                raise ProtocolError(
                    "the kernel closed the kli.agent comm — it is not a kli kernel, or its "
                    "comm target failed. Start the kernel with kernel_name='kli'.", "closed")
            if msg_type != "comm_msg" or content.get("comm_id") != self.comm_id:
                continue
            self._kernel_session = self._kernel_session or sender
            data = content.get("data")
            if isinstance(data, dict) and (match(data) or (data.get("op") == "error"
                                                          and data.get("id") is None)):
                return data
