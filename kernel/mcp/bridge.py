"""The bridge of a ``kli mcp`` server: MCP client sessions onto agent connections.

Each MCP client session gets its own agent connection (its own kernel tool session: anchors,
pending previews), made on first use and remade after the kernel died; every way a call can
fail to get a result becomes an error result saying what happened and how to recover.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kli.kernel.client import (
    AgentClient,
    KernelBusy,
    KernelDied,
    KernelError,
    KernelTimeout,
    ProtocolError,
)
from kli.kernel.mcp.targets import Target
from kli.tools.core.result import ToolResult
from kli.tools.registry import ALL, PROFILE_CHOICES

PROFILES = PROFILE_CHOICES
_SURROGATE = re.compile("[\ud800-\udfff]")  # a str holding one cannot be encoded as UTF-8
# Agent connections kept at once (one per MCP client session); the least recently used closes.
MAX_SESSIONS = 32


@dataclass
class _Conn:
    label: str
    client: AgentClient | None = None
    generation: int = -1
    lock: threading.Lock = field(default_factory=threading.Lock)


class Bridge:
    """One agent connection (one kernel tool session) per MCP client session, made on first
    use and remade after the kernel died. Blocking: the MCP handlers call it from threads."""

    def __init__(self, target: Target, profile: str = "kli",
                 keep: Callable[[str], bool] | None = None) -> None:
        """``keep(key)``: True for a session that must never be closed to make room for
        others (a live chat's: its anchors and pending calls stay); the least recently used
        of the others is closed past ``MAX_SESSIONS``."""
        if profile not in PROFILES:
            raise ValueError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r}")
        self.target = target
        self.profile = profile
        self.keep = keep
        self._conns: OrderedDict[str, _Conn] = OrderedDict()
        self._lock = threading.Lock()

    def _conn(self, key: str, label: str) -> _Conn:
        with self._lock:
            conn = self._conns.get(key)
            if conn is None:
                conn = self._conns[key] = _Conn(label)
            self._conns.move_to_end(key)
            old = []
            if len(self._conns) > MAX_SESSIONS:
                spare = [k for k in self._conns if k != key
                         and (self.keep is None or not self.keep(k))]
                for k in spare[:len(self._conns) - MAX_SESSIONS]:
                    old.append(self._conns.pop(k))
        for stale in old:
            with stale.lock:
                _close_quietly(stale.client)
                stale.client = None
        return conn

    def _attached(self, conn: _Conn) -> AgentClient:
        """The connection's client, (re)connected if it is missing or from a dead kernel."""
        if conn.client is not None and conn.generation == self.target.generation:
            return conn.client
        _close_quietly(conn.client)
        conn.client = None
        generation = self.target.generation
        conn.client = self.target.connect(conn.label)
        conn.generation = generation
        return conn.client

    def specs(self, key: str, label: str) -> list[dict[str, Any]]:
        """The profile's tool specs as the kernel's registry has them; the local registry's
        when no kernel answers (calls then report the kernel's state)."""
        conn = self._conn(key, label)
        with conn.lock:
            try:
                return self._attached(conn).specs(self.profile)
            except Exception:  # whatever failed, never an MCP "Internal server error"
                from kli.tools.registry import REGISTRY

                profile = None if self.profile == ALL else self.profile
                return [t.spec() for t in REGISTRY.tools.values()
                        if profile is None or t.profile == profile]

    def call(self, key: str, label: str, tool: str, args: dict[str, Any],
             review: dict[str, list[str]] | None = None) -> ToolResult:
        """Run ``tool`` in the kernel with ``review`` (the call request's, ``AgentClient.call``;
        None: the one this machine's other kli notebooks ask, ``kli.kernel.client.reach``);
        failures to get a result become error results whose text says what happened and how to
        recover. Arguments the kernel's messages cannot carry are refused before anything is
        sent (``unsendable``)."""
        problem = unsendable(args)
        if problem is not None:
            return ToolResult.error(f"kli mcp: {problem}; the call was not sent to the kernel, "
                                    "so nothing ran. Call again without it.",
                                    error="bad_arguments")
        conn = self._conn(key, label)
        with conn.lock:
            generation = self.target.generation
            try:
                client = self._attached(conn)
            except KernelDied as exc:
                return self._death_result(conn, generation, tool, str(exc))
            except KernelTimeout as exc:  # it answered, but not in time: alive, busy
                return ToolResult.error(f"kli mcp: {exc}", error="kernel_busy")
            except KernelError as exc:
                return ToolResult.error(
                    f"kli mcp: cannot reach {self.target.description}: {exc}. "
                    f"{self.target.advice()}", error="kernel_unreachable")
            except Exception as exc:
                return ToolResult.error(
                    f"kli mcp: cannot reach {self.target.description}: {type(exc).__name__}: "
                    f"{exc}. {self.target.advice()}", error="kernel_unreachable")
            generation = conn.generation
            try:
                if review is None:  # kli mcp: the notebooks of this machine's servers
                    review = _machine_review(client)
                return client.call(tool, args, review=review)
            except KernelDied as exc:
                return self._death_result(conn, generation, tool, str(exc))
            except KernelBusy as exc:  # a person's cell or another call holds the image
                return ToolResult.error(f"kli mcp: {exc}", error="kernel_busy")
            except KernelTimeout as exc:
                return ToolResult.error(f"kli mcp: {exc}", error="kernel_timeout")
            except ProtocolError as exc:
                return ToolResult.error(f"kli mcp: the kernel refused the {tool} request "
                                        f"({exc.code}): {exc}", error="protocol")
            except KernelError as exc:  # the connection broke: reconnect as after a death
                return self._death_result(conn, generation, tool, str(exc), "lost its connection")
            except Exception as exc:  # never an MCP "Internal server error": a result saying so
                return ToolResult.error(
                    f"kli mcp: {tool} failed in the server: {type(exc).__name__}: {exc}. The "
                    "kernel may have run it: check its effect (read the file, or eval a probe) "
                    "before calling it again.", error="internal")

    def _death_result(self, conn: _Conn, generation: int, tool: str, why: str,
                      what: str = "died") -> ToolResult:
        """The error result of a call that lost its kernel; the target hears of the death."""
        _close_quietly(conn.client)
        conn.client = None
        after = self.target.note_death(generation)
        return ToolResult.error(
            f"kli mcp: the kernel {what} while running {tool} ({self.target.description}; "
            f"{why.rstrip('.')}). The call's outcome is unknown. Recovery: {after}",
            error="kernel_died")

    def busy_note(self, key: str) -> str:
        """What holds the kernel's image, as the kernel says (``ping``), for a progress
        message: "" when nothing does or the kernel does not say."""
        from kli.kernel.client.base import PROBE_TIMEOUT, busy_with

        with self._lock:
            conn = self._conns.get(key)
        client = conn.client if conn is not None else None
        if client is None:
            return ""
        try:
            status = client.request({"op": "ping"}, PROBE_TIMEOUT).get("status") or {}
        except Exception:
            return ""
        running = status.get("running") if status.get("busy") else None
        return busy_with(running).strip() if isinstance(running, dict) else ""

    def stop(self, key: str) -> int:
        """Stop in the kernel what the connection of ``key`` is running (its MCP request was
        cancelled, or its client went away): see ``AgentClient.stop_running``."""
        with self._lock:
            conn = self._conns.get(key)
        client = conn.client if conn is not None else None
        if client is None:
            return 0
        try:
            return client.stop_running()
        except Exception:
            return 0

    def close(self) -> None:
        with self._lock:
            conns = list(self._conns.values())
            self._conns.clear()
        for conn in conns:
            if conn.client is not None:  # the server stops: stop its calls' work too
                try:
                    conn.client.stop_running()
                except Exception:
                    pass
            _close_quietly(conn.client)
            conn.client = None
        self.target.close()


def unsendable(args: Any, name: str = "") -> str | None:
    """What in ``args`` a kernel message cannot carry, or None: a lone surrogate in a string
    (no UTF-8 text holds one; the message's encoding would fail) or a number that is not
    finite (NaN, infinity: JSON carries neither, and jupyter_client would send null — a
    timeout of NaN became "no timeout"). ``name``: where in the arguments we are."""
    import math

    if isinstance(args, str):
        found = None if args.isascii() else _SURROGATE.search(args)
        if found is not None:
            return (f"argument '{name}' holds a lone surrogate ({found.group()!a} at character "
                    f"{found.start()}), which no UTF-8 text can carry")
        return None
    if isinstance(args, float) and not math.isfinite(args):
        return f"argument '{name}' is {args!r}, not a finite number"
    if isinstance(args, dict):
        for key, value in args.items():
            problem = unsendable(key, name) or unsendable(value, f"{name}.{key}" if name else
                                                           str(key))
            if problem is not None:
                return problem
    if isinstance(args, (list, tuple)):
        for i, value in enumerate(args):
            problem = unsendable(value, f"{name}[{i}]")
            if problem is not None:
                return problem
    return None


def _close_quietly(client: AgentClient | None) -> None:
    if client is None:
        return
    try:
        client.close()
    except Exception:
        pass


def _machine_review(client: AgentClient) -> dict[str, list[str]]:
    """The review the kli notebooks of this machine's Jupyter servers ask of a call to
    ``client``'s kernel (``kli.kernel.client.reach``); its kernel's own answer is asked only
    when another kli notebook is open."""
    from kli.kernel.client.reach import REACH_TIMEOUT, kernel_id_of, notebook_kernels, review_among

    kernels = notebook_kernels()
    if not kernels:
        return {}
    try:
        here = client.reach(REACH_TIMEOUT)
    except Exception:
        here = {}  # an older kernel, or a busy one: its reach is taken as everything
    transport = getattr(client, "transport", None)
    file = getattr(getattr(transport, "client", None), "connection_file", "") or ""
    return review_among(here, kernel_id_of(str(file)), kernels)
