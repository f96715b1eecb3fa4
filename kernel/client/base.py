"""What every agent connection does, whatever carries the Jupyter messages.

A transport sends shell messages and yields iopub messages; ``AgentClient`` opens the
``kli.agent`` comm on it and turns requests into ``ToolResult``s (docs/protocol.md).

One connection can be shared by threads and by asyncio tasks: one reader thread owns the
transport's receiving side (a jupyter_client ZMQ socket read from several threads can abort the
process inside libzmq), and hands each reply to the request whose id it names; sends are
serialised by a lock (a ZMQ socket may move between threads across a full memory barrier).
While requests wait, the reader checks that the kernel is alive, so a dead kernel is reported
within seconds and a busy one within the call's timeout — never waited on forever.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any

from kli.tools.core.request import AGENT_TARGET, PROTOCOL_VERSION
from kli.tools.core.result import ToolResult
from kli.tools.roles import Host, Transport

_log = logging.getLogger("kli.client")

# Longer than the longest tool deadline (300 s), so the tool's own timeout answers first.
DEFAULT_TIMEOUT = 330.0
# How often, while requests wait, the kernel's liveness is checked.
ALIVE_EVERY = 1.0
# The reader's longest single wait for a message: how soon it sees that the client closed.
READ_SLICE = 0.2
RESTARTED = ("the kernel restarted while waiting for {what}: its image and this connection's "
             "session (read anchors, pending previews) are gone; connect again.")


class KernelError(RuntimeError):
    """The kernel cannot answer: it died, or the connection broke."""


class KernelDied(KernelError):
    """The kernel process is gone (or its heartbeat stopped)."""


class KernelTimeout(KernelError, TimeoutError):
    """No reply within the timeout (the kernel is busy, e.g. running a long cell)."""


class KernelBusy(KernelTimeout):
    """No reply within the timeout, and the kernel is alive and busy running something else (a
    person's cell, another call): wait, or ask the person at the notebook. It is not dead."""


# How long a timed-out request waits for ``ping`` to say what keeps the kernel busy.
PROBE_TIMEOUT = 3.0
BUSY = ("the kernel is alive but busy (running a cell or another call) and did not take {what} "
        "within {timeout:g} s. Nothing is lost: wait for it to finish and retry (with a longer "
        "timeout), or ask the person at the notebook to let the cell finish or interrupt it; "
        "interrupt the kernel yourself only if the running work is yours.")


class ProtocolError(KernelError):
    """The kernel answered with an ``error`` reply (malformed request) or is not a kli kernel."""

    def __init__(self, text: str, code: str = "error") -> None:
        super().__init__(text)
        self.code = code


def busy_with(running: dict[str, Any]) -> str:
    """`` Running: …`` — what a ``ping`` status says the image runs, for an error text."""
    seconds = running.get("seconds")
    since = f" for {float(seconds):.0f} s" if isinstance(seconds, (int, float)) else ""
    if running.get("kind") == "cell":
        code = str(running.get("code") or "").strip().splitlines()
        first = f": {code[0][:80]}" if code else ""
        return f" Running: a notebook cell{since}{first}."
    tool = f" ({running['tool']})" if running.get("tool") else ""
    return f" Running: a tool call{tool}{since}."


class _Waiter:
    """One request waiting for its reply."""

    __slots__ = ("future", "msg_id", "rid", "tool", "what")

    def __init__(self, what: str, tool: str | None = None, rid: Any = None) -> None:
        self.future: Future[dict[str, Any]] = Future()
        self.what = what
        self.tool = tool
        self.rid = rid  # the request's id (None: the hello)
        self.msg_id: str | None = None  # the shell message that carried the request


class AgentClient:
    """One ``kli.agent`` comm (one tool session) over a transport.

    ``call`` returns the tool's ``ToolResult`` (tool-level failures are results with
    ``ok=False``); it raises ``KernelTimeout`` (``KernelBusy`` when the kernel is known to be
    busy), ``KernelDied`` or ``ProtocolError`` when the kernel does not give a result.
    ``call``/``request`` may be used from several threads at once; ``acall``/``arequest`` are
    their asyncio forms. ``hello`` is the kernel's greeting (its ``cwd`` and ``notebook`` when
    the kernel reports them).
    """

    def __init__(self, transport: Transport, *, label: str = "agent",
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        self.transport = transport
        self.timeout = timeout
        self.comm_id = uuid.uuid4().hex
        self._ids = itertools.count(1)
        self._status = "unknown"
        # msg_ids the kernel said it is busy with and not yet idle: with subshells (a read
        # answered during a cell) several are busy at once, so "the last status" is not enough.
        self._busy: dict[str, None] = {}
        self._closed = False
        self._kernel_session: str | None = None  # the kernel process's message session id
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._waiting: dict[Any, _Waiter] = {}
        # Once set, every waiting and later request raises what it makes (dead, restarted...).
        self._broken: Callable[[str], KernelError] | None = None
        self.session: str | None = None
        self.tools: list[str] = []
        self.hello: dict[str, Any] = {}
        greeting = self._register("hello", "opening the kli.agent comm")
        self._reader = threading.Thread(target=self._read, name=f"kli-agent-reader {label}",
                                        daemon=True)
        self._reader.start()
        try:
            self._send("comm_open", {"comm_id": self.comm_id, "target_name": AGENT_TARGET,
                                     "data": {"v": PROTOCOL_VERSION, "label": label}}, greeting)
            hello = self._result(greeting, "hello", timeout)
        except BaseException:
            self.close()
            raise
        self.hello = hello
        self.session = hello.get("session")
        self.tools = list(hello.get("tools") or [])
        _log.info("kli.client: %s", self.where)

    # -- where this client landed ---------------------------------------------------------------
    @property
    def notebook(self) -> str | None:
        """The notebook the kernel was started for (its ``JPY_SESSION_NAME``), if any."""
        value = self.hello.get("notebook")
        return value if isinstance(value, str) and value else None

    @property
    def cwd(self) -> str | None:
        """The kernel process's working directory when this client attached."""
        value = self.hello.get("cwd")
        return value if isinstance(value, str) else None

    @property
    def root(self) -> str | None:
        """The tools' root (the jail) of the kernel's workspace."""
        value = self.hello.get("root")
        return value if isinstance(value, str) else None

    @property
    def where(self) -> str:
        """One line naming the kernel, its notebook and its working directory."""
        kernel = getattr(self.transport, "description", "") or "a kli kernel"
        notebook = self.notebook or "none (not started for a notebook)"
        return (f"session {self.session} on {kernel}; notebook: {notebook}; working "
                f"directory: {self.cwd or '?'}")

    def __repr__(self) -> str:
        return f"<AgentClient {self.where}>"

    # -- requests -----------------------------------------------------------------------------
    def _begin(self, data: dict[str, Any]) -> tuple[int, _Waiter]:
        if self._closed:
            raise KernelError("this client is closed; connect again.")
        broken = self._broken
        if broken is not None:
            raise broken("this request")
        rid = next(self._ids)
        tool = data.get("tool") if data.get("op", "call") == "call" else None
        waiter = self._register(rid, f"the {tool or data.get('op')} request", tool)
        waiter.rid = rid
        try:
            self._send("comm_msg", {"comm_id": self.comm_id,
                                    "data": {"v": PROTOCOL_VERSION, "id": rid, **data}}, waiter)
        except BaseException:
            self._forget(rid)
            raise
        return rid, waiter

    @staticmethod
    def _checked(reply: dict[str, Any]) -> dict[str, Any]:
        if reply.get("op") == "error":
            raise ProtocolError(str(reply.get("text")), str(reply.get("error")))
        return reply

    def request(self, data: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send one request (an id is added) and return the reply naming it."""
        rid, waiter = self._begin(data)
        probe = data.get("op") != "ping"  # a ping that times out is not probed with a ping
        return self._checked(self._result(waiter, rid, timeout or self.timeout, probe))

    async def arequest(self, data: dict[str, Any],
                       timeout: float | None = None) -> dict[str, Any]:
        """``request`` for asyncio: awaits the reply without blocking the event loop. A
        cancelled task also stops the request in the kernel when the kernel is running it
        (``stop``)."""
        rid, waiter = self._begin(data)
        limit = timeout or self.timeout
        try:
            reply = await asyncio.wait_for(asyncio.wrap_future(waiter.future), limit)
        except asyncio.TimeoutError:
            status = await self._aprobe() if data.get("op") != "ping" else None
            error = self._timed_out(waiter, limit, status)
            raise self._abandoned(waiter, error) from None
        except asyncio.CancelledError:
            self.stop(waiter)
            raise
        finally:
            self._forget(rid)
        return self._checked(reply)

    def stop(self, waiter: _Waiter) -> bool:
        """Stop the request of ``waiter`` in the kernel: a tool call gets a ``cancel`` request
        (docs/protocol.md). A running ``bash`` / ``ws_shell`` command is killed with its process
        tree, a call running in the image (an eval) is stopped by the kernel itself, that call
        alone (``interrupts.stop_main_call``), and a call still queued behind other work answers
        'cancelled' without running. The kernel is never interrupted from here: an interrupt
        stops whatever the main thread runs, and what this client saw of the kernel's busy
        status cannot tell (a person's cell that began before it attached was never seen, and
        was interrupted). True when it sent a cancel."""
        answered = waiter.future.done() and not waiter.future.cancelled()
        if answered or self._broken is not None or self._closed or waiter.tool is None:
            return False
        return self._send_cancel(waiter.rid)

    def _abandoned(self, waiter: _Waiter, error: KernelTimeout) -> KernelTimeout:
        """A tool call nobody waits for any more is cancelled in the kernel (its reply would be
        dropped), as ``stop`` cancels it. ``error`` says so."""
        if waiter.tool is None or self._broken is not None or self._closed:
            return error
        if not self._send_cancel(waiter.rid):
            return error
        note = (" This client gave up on the call and cancelled it in the kernel: a command it "
                "ran is killed, an eval it ran is stopped, and a call still queued will not "
                "run.")
        return type(error)(str(error) + note)

    def _send_cancel(self, rid: Any) -> bool:
        """Send ``cancel`` naming request ``rid``, not waiting for its answer (it is dropped:
        no request waits under its id). False when it could not be sent."""
        if rid is None:
            return False
        data = {"v": PROTOCOL_VERSION, "id": f"cancel-{next(self._ids)}", "op": "cancel",
                "request": rid}
        try:
            with self._send_lock:
                self.transport.send_shell("comm_msg", {"comm_id": self.comm_id, "data": data})
        except Exception:
            return False
        return True

    def stop_running(self) -> int:
        """Stop in the kernel every request of this client it is running (``stop``); how many
        were stopped. For a caller whose own wait was cancelled in another way (a thread)."""
        with self._lock:
            waiting = [w for k, w in self._waiting.items() if k != "hello"]
        return sum(self.stop(w) for w in waiting)

    def call(self, tool: str, args: dict[str, Any] | None = None, *,
             timeout: float | None = None,
             review: dict[str, list[str]] | None = None) -> ToolResult:
        """Run ``tool``; ``review``: kinds held for review whatever the kernel's mode says, each
        with the notebooks under review the call can change (a host reaching several kernels:
        ``kli.kernel.ai.reach``)."""
        reply = self.request(_call_request(tool, args, review), timeout)
        return ToolResult.from_json(reply)

    async def acall(self, tool: str, args: dict[str, Any] | None = None, *,
                    timeout: float | None = None,
                    review: dict[str, list[str]] | None = None) -> ToolResult:
        """``call`` for asyncio tasks (many may share one client)."""
        reply = await self.arequest(_call_request(tool, args, review), timeout)
        return ToolResult.from_json(reply)

    def reach(self, timeout: float | None = None) -> dict[str, Any]:
        """What the kernel's agent calls can change: ``{approval, root, boxed}`` (docs/protocol.md,
        ``reach``)."""
        return {k: v for k, v in self.request({"op": "reach"}, timeout).items()
                if k in ("approval", "root", "boxed")}

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
        with self._send_lock:
            self.transport.interrupt()

    @property
    def status(self) -> str:
        """The kernel's last reported execution state (busy, idle, unknown...)."""
        return self._status

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._reader.is_alive() and self._reader is not threading.current_thread():
            self._reader.join(READ_SLICE * 10 + ALIVE_EVERY)
        self._fail_all(lambda what: KernelError(f"the client was closed while waiting for "
                                                f"{what}."))
        try:
            if self._broken is None and self.transport.alive():
                with self._send_lock:
                    self.transport.send_shell("comm_close", {"comm_id": self.comm_id,
                                                             "data": {}})
        except Exception:
            pass
        self.transport.close()

    def __enter__(self) -> AgentClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- waiting ------------------------------------------------------------------------------
    def _register(self, key: Any, what: str, tool: str | None = None) -> _Waiter:
        waiter = _Waiter(what, tool)
        with self._lock:
            self._waiting[key] = waiter
        return waiter

    def _forget(self, key: Any) -> None:
        with self._lock:
            self._waiting.pop(key, None)

    def _send(self, msg_type: str, content: dict[str, Any], waiter: _Waiter) -> None:
        with self._send_lock:
            waiter.msg_id = self.transport.send_shell(msg_type, content)

    def _result(self, waiter: _Waiter, key: Any, timeout: float,
                probe: bool = True) -> dict[str, Any]:
        try:
            return waiter.future.result(timeout)
        except FutureTimeout:
            status = self._probe() if probe and key != "hello" else None
            raise self._abandoned(waiter, self._timed_out(waiter, timeout, status)) from None
        finally:
            self._forget(key)

    def _probe(self) -> dict[str, Any] | None:
        """What the kernel says it is busy with (``ping``'s ``status``), or None."""
        try:
            status = self.request({"op": "ping"}, PROBE_TIMEOUT).get("status")
        except Exception:
            return None
        return status if isinstance(status, dict) else None

    async def _aprobe(self) -> dict[str, Any] | None:
        try:
            status = (await self.arequest({"op": "ping"}, PROBE_TIMEOUT)).get("status")
        except Exception:
            return None
        return status if isinstance(status, dict) else None

    def _timed_out(self, waiter: _Waiter, timeout: float,
                   status: dict[str, Any] | None = None) -> KernelTimeout:
        broken = self._broken
        if broken is not None:  # broke just as the wait ended
            return KernelTimeout(str(broken(waiter.what)))
        still = KernelTimeout(f"no reply to {waiter.what} within {timeout:g} s. The kernel may "
                              "still be running it: interrupt it (if the work is yours) or "
                              "retry with a longer timeout.")
        running = status.get("running") if status and status.get("busy") else None
        if status is not None and isinstance(running, dict):  # the kernel says what runs
            ours = (running.get("kind") == "tool call" and running.get("tool") == waiter.tool
                    and not status.get("waiting_calls") and waiter.tool is not None)
            if ours:
                return still
            return KernelBusy(BUSY.format(what=waiter.what, timeout=timeout) +
                              busy_with(running))
        if status is None and any(m != waiter.msg_id for m in list(self._busy)):
            return KernelBusy(BUSY.format(what=waiter.what, timeout=timeout))
        return still

    def _fail_all(self, make: Callable[[str], KernelError]) -> None:
        with self._lock:
            waiting = list(self._waiting.values())
            self._waiting.clear()
        for waiter in waiting:
            if not waiter.future.done():
                waiter.future.set_exception(make(waiter.what))

    def _break(self, make: Callable[[str], KernelError]) -> None:
        self._broken = make
        self._fail_all(make)

    def _deliver(self, key: Any, data: dict[str, Any]) -> None:
        with self._lock:
            waiter = self._waiting.pop(key, None)
        if waiter is not None and not waiter.future.done():
            waiter.future.set_result(data)

    def _read(self) -> None:
        """The reader thread: the only one that receives from the transport."""
        next_check = time.monotonic() + ALIVE_EVERY
        while not self._closed:
            try:
                msg = self.transport.recv_iopub(READ_SLICE)
            except KernelDied as exc:
                self._break(_failure(KernelDied, str(exc).rstrip(".") +
                                     " (while waiting for {what})."))
                return
            except Exception as exc:
                self._break(_failure(KernelError, "the connection to the kernel broke while "
                                     "waiting for {what}: " + f"{type(exc).__name__}: {exc}"))
                return
            now = time.monotonic()
            if now >= next_check:
                next_check = now + ALIVE_EVERY
                if self._waiting and not self.transport.alive():
                    self._break(lambda what: KernelDied(
                        f"the kernel died while waiting for {what}; restart it and connect "
                        "again (the image's state is lost)."))
                    return
            if msg is not None and not self._handle(msg):
                return

    def _handle(self, msg: dict[str, Any]) -> bool:
        """Route one iopub message; False when the connection is over."""
        msg_type = msg.get("msg_type") or msg.get("header", {}).get("msg_type")
        content = msg.get("content") or {}
        if msg_type == "status":
            state = content.get("execution_state")
            if state == "dead":
                self._break(lambda what: KernelDied(f"the kernel died while waiting for {what}."))
                return False
            sender = (msg.get("header") or {}).get("session")
            if state == "starting" and sender and sender == self._kernel_session:
                # The kernel this comm is open on, announcing its own start late (a client
                # that attached to a kernel just restarted, before its shell had started).
                return True
            if state in ("restarting", "starting") and self.session is not None:
                # A new kernel process (a Jupyter server or gateway restarted a dead one): it
                # has no comm of ours, so a request would go unanswered until timeout.
                self._break(lambda what: KernelDied(RESTARTED.format(what=what)))
                return False
            parent = (msg.get("parent_header") or {}).get("msg_id")
            if state == "busy" and parent:
                self._busy[parent] = None
            elif state == "idle" and parent:
                self._busy.pop(parent, None)
            self._status = ("busy" if self._busy else "idle") if state in ("busy", "idle") \
                else (state or self._status)
            return True
        sender = (msg.get("header") or {}).get("session")
        if msg_type == "iopub_welcome" and self._kernel_session and sender \
                and sender != self._kernel_session:
            # Every kernel process has its own session id: a welcome from another one means
            # the kernel was restarted behind the same ports (connection file).
            self._break(lambda what: KernelDied(RESTARTED.format(what=what)))
            return False
        if msg_type == "comm_close" and content.get("comm_id") == self.comm_id:
            self._break(lambda what: ProtocolError(
                "the kernel closed the kli.agent comm — it is not a kli kernel, or its comm "
                "target failed. Start the kernel with kernel_name='kli'.", "closed"))
            return False
        if msg_type != "comm_msg" or content.get("comm_id") != self.comm_id:
            return True
        self._kernel_session = self._kernel_session or sender
        data = content.get("data")
        if not isinstance(data, dict):
            return True
        rid = data.get("id")
        if data.get("op") == "hello" and rid is None:
            self._deliver("hello", data)
        elif rid is not None:
            self._deliver(rid, data)
        elif data.get("op") == "error":
            # An error naming no request (the kernel could not read its id): the oldest
            # waiting request is the likeliest sender.
            with self._lock:
                oldest = next(iter(self._waiting), None)
            if oldest is not None:
                self._deliver(oldest, data)
        return True


def _failure(kind: type[KernelError], text: str) -> Callable[[str], KernelError]:
    """A maker of ``kind`` errors whose ``text`` names the waiting request at ``{what}``."""
    return lambda what: kind(text.replace("{what}", what))


if TYPE_CHECKING:  # the client is a Host (kli.tools.roles): mypy checks it conforms

    def _is_host(client: AgentClient) -> Host:
        return client


def _call_request(tool: str, args: dict[str, Any] | None,
                  review: dict[str, list[str]] | None) -> dict[str, Any]:
    request: dict[str, Any] = {"op": "call", "tool": tool, "args": args or {}}
    if review:
        request["review"] = review
    return request
