"""How a kli.client connection reads a kernel's ``starting`` status (kernel/client/base.py),
over a scripted transport: a new kernel process behind the same ports breaks the connection
("restarted"); the kernel the comm is open on, announcing its own start late (a client that
attached to a kernel just restarted, before its shell had started), does not. The second was
a flaky reattach after a restart in tests/mcp (the new client was told "restarted")."""

from __future__ import annotations

import queue
from typing import Any

import pytest

from kli.client import AgentClient, KernelDied


class ScriptedKernel:
    """A transport whose kernel (message session ``kernel``) answers the comm's hello and each
    call, sending a ``starting`` status from ``starting_from`` first."""

    def __init__(self, starting_from: str) -> None:
        self.kernel, self.starting_from = "kernel-session", starting_from
        self.iopub: queue.Queue[dict[str, Any]] = queue.Queue()

    def _publish(self, msg_type: str, content: dict[str, Any], session: str | None = None,
                 parent: str = "") -> None:
        self.iopub.put({"msg_type": msg_type, "header": {"msg_type": msg_type,
                                                         "session": session or self.kernel},
                        "parent_header": {"msg_id": parent} if parent else {},
                        "content": content})

    def send_shell(self, msg_type: str, content: dict[str, Any]) -> None:
        comm_id = content.get("comm_id")
        if msg_type == "comm_open":
            self._publish("comm_msg", {"comm_id": comm_id, "data": {
                "v": 1, "op": "hello", "session": "s1", "tools": ["eval"]}})
        elif msg_type == "comm_msg" and content["data"].get("op") == "call":
            self._publish("status", {"execution_state": "starting"}, self.starting_from)
            self._publish("comm_msg", {"comm_id": comm_id, "data": {
                "v": 1, "op": "result", "id": content["data"]["id"], "ok": True,
                "text": "answered", "details": {}}})

    def recv_iopub(self, timeout: float) -> dict[str, Any] | None:
        try:
            return self.iopub.get(timeout=timeout)
        except queue.Empty:
            return None

    def alive(self) -> bool:
        return True

    def interrupt(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_the_kernel_announcing_its_own_start_late_does_not_break_the_connection() -> None:
    transport = ScriptedKernel(starting_from="kernel-session")
    client = AgentClient(transport, timeout=10)  # type: ignore[arg-type]
    try:
        result = client.call("eval", {"code": "1"}, timeout=10)
        assert result.ok and result.text == "answered"
        assert client.call("eval", {"code": "2"}, timeout=10).ok
    finally:
        client.close()


def test_a_new_kernel_process_starting_behind_the_same_ports_is_a_restart() -> None:
    transport = ScriptedKernel(starting_from="another-kernel-process")
    client = AgentClient(transport, timeout=10)  # type: ignore[arg-type]
    try:
        with pytest.raises(KernelDied, match="restarted"):
            client.call("eval", {"code": "1"}, timeout=10)
    finally:
        client.close()
