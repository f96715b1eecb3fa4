"""Real kli kernels through jupyter_client, and a small harness speaking the comm protocol.

One kernel per test module (``kernel`` fixture, module scope): each start costs about a second.
Tests that must not share state (interrupts, dead kernels) start their own.
"""

from __future__ import annotations

import os
import queue
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.kernelspec import kli_kernelspec  # noqa: F401  (session, autouse: the spec installed)

TIMEOUT = 30.0


def kernel_env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(tmp / "xdg")
    env.pop("PYTEST_CURRENT_TEST", None)
    return env


class Harness:
    """One running kernel, its blocking client, and every iopub message seen so far."""

    def __init__(self, km: Any, kc: Any, root: Path) -> None:
        self.km, self.kc, self.root = km, kc, root
        self.seen: list[dict[str, Any]] = []
        self._read = 0

    # -- iopub ------------------------------------------------------------------------------
    def _pump(self, timeout: float) -> bool:
        try:
            self.seen.append(self.kc.get_iopub_msg(timeout=timeout))
            return True
        except queue.Empty:
            return False

    def wait_for(self, pred: Callable[[dict[str, Any]], bool], timeout: float = TIMEOUT,
                 *, since: int = 0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        i = since
        while True:
            while i < len(self.seen):
                if pred(self.seen[i]):
                    return self.seen[i]
                i += 1
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("expected iopub message did not arrive")
            self._pump(min(left, 0.2))

    def settle(self, quiet: float = 0.3) -> None:
        """Read iopub until nothing arrives for ``quiet`` seconds."""
        while self._pump(quiet):
            pass

    def comm_data(self, comm_id: str, since: int = 0) -> list[dict[str, Any]]:
        return [m["content"]["data"] for m in self.seen[since:]
                if m["msg_type"] == "comm_msg" and m["content"].get("comm_id") == comm_id]

    # -- shell --------------------------------------------------------------------------------
    def execute(self, code: str, timeout: float = TIMEOUT) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Run a cell; its reply content and its iopub outputs."""
        start = len(self.seen)
        msg_id = self.kc.execute(code)
        self.wait_for(lambda m: m["parent_header"].get("msg_id") == msg_id
                      and m["msg_type"] == "status"
                      and m["content"]["execution_state"] == "idle", timeout, since=start)
        reply = self.kc.get_shell_msg(timeout=timeout)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.kc.get_shell_msg(timeout=timeout)
        outputs = [m for m in self.seen[start:] if m["parent_header"].get("msg_id") == msg_id
                   and m["msg_type"] in ("stream", "display_data", "execute_result", "error")]
        return reply["content"], outputs

    def send_shell(self, msg_type: str, content: dict[str, Any]) -> str:
        msg = self.kc.session.msg(msg_type, content)
        self.kc.shell_channel.send(msg)
        return str(msg["header"]["msg_id"])

    def open_comm(self, target: str, data: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Open a comm to ``target``; its id and the kernel's first message on it."""
        comm_id = uuid.uuid4().hex
        start = len(self.seen)
        self.send_shell("comm_open", {"comm_id": comm_id, "target_name": target, "data": data or {}})
        first = self.wait_for(lambda m: m["msg_type"] == "comm_msg"
                              and m["content"].get("comm_id") == comm_id, since=start)
        return comm_id, first["content"]["data"]

    def close_comm(self, comm_id: str) -> None:
        self.send_shell("comm_close", {"comm_id": comm_id, "data": {}})

    def send(self, comm_id: str, data: Any) -> str:
        """Send ``data`` on the comm; the comm_msg's msg_id (the parent of its statuses)."""
        return self.send_shell("comm_msg", {"comm_id": comm_id, "data": data})

    def request(self, comm_id: str, data: dict[str, Any], timeout: float = TIMEOUT) -> dict[str, Any]:
        """Send a request with a fresh id and return the reply naming it."""
        rid = uuid.uuid4().hex[:8]
        start = len(self.seen)
        self.send(comm_id, {"v": 1, "id": rid, **data})
        return self.reply(comm_id, rid, start, timeout)

    def reply(self, comm_id: str, rid: Any, since: int, timeout: float = TIMEOUT
              ) -> dict[str, Any]:
        """The kernel's reply on ``comm_id`` naming request ``rid``, seen after ``since``."""
        msg = self.wait_for(lambda m: m["msg_type"] == "comm_msg"
                            and m["content"].get("comm_id") == comm_id
                            and m["content"]["data"].get("id") == rid, timeout, since=since)
        reply: dict[str, Any] = msg["content"]["data"]
        return reply

    def call(self, comm_id: str, tool: str, args: dict[str, Any], timeout: float = TIMEOUT) -> dict[str, Any]:
        return self.request(comm_id, {"op": "call", "tool": tool, "args": args}, timeout)

    def alive_check(self) -> None:
        """kernel_info still answers."""
        msg_id = self.kc.kernel_info()
        msg = self.kc.get_shell_msg(timeout=TIMEOUT)
        while msg["parent_header"].get("msg_id") != msg_id:
            msg = self.kc.get_shell_msg(timeout=TIMEOUT)
        assert msg["content"]["status"] == "ok"
        assert msg["content"]["implementation"] == "kli"


def start_harness(root: Path) -> Harness:
    from jupyter_client.manager import KernelManager

    km = KernelManager(kernel_name="kli")
    km.start_kernel(cwd=str(root), env=kernel_env(root.parent))
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    h = Harness(km, kc, root)
    # make sure iopub is subscribed before the tests rely on it
    h.execute("pass")
    h.settle(0.1)
    return h


def stop_harness(h: Harness) -> None:
    h.kc.stop_channels()
    h.km.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def kroot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kernel") / "root"
    root.mkdir()
    return root


@pytest.fixture(scope="module")
def kernel(kroot: Path) -> Iterator[Harness]:
    h = start_harness(kroot)
    yield h
    stop_harness(h)


@pytest.fixture
def fresh_kernel(tmp_path: Path) -> Iterator[Harness]:
    root = tmp_path / "root"
    root.mkdir()
    h = start_harness(root)
    yield h
    stop_harness(h)
