"""Kernel faults seen by an agent (kli.client): a call while a long cell runs, a kernel restart
while attached, an agent killed mid-call; and no process leaked by the tools (the kernel's
descendants are counted with psutil before and after)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from kli import client
from kli.kernel.client import KernelError, KernelTimeout

from .conftest import kernel_harness

pytestmark = pytest.mark.kernel


@pytest.fixture
def hk(tmp_path: Path) -> Iterator[Any]:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    h = kernel_harness.start_harness(root)
    yield h
    kernel_harness.stop_harness(h)


def _kernel_process(h: Any) -> psutil.Process:
    return psutil.Process(h.km.provisioner.pid)


def _descendants(h: Any) -> list[psutil.Process]:
    return [p for p in _kernel_process(h).children(recursive=True) if p.is_running()
            and p.status() != psutil.STATUS_ZOMBIE]


def test_call_while_a_long_cell_runs_times_out_clearly_then_the_next_call_gets_its_own_reply(
    hk: Any,
) -> None:
    agent = client.connect(hk.km.connection_file, label="busy", timeout=30)
    try:
        msg_id = hk.kc.execute("import time; time.sleep(4)")
        time.sleep(0.3)
        # A call that does not touch the image is answered while the cell runs (issue 15) ...
        assert agent.call("read", {"path": "a.txt"}, timeout=1.0).ok
        started = time.monotonic()
        # ... one that does waits for the cell, and a short timeout says why.
        with pytest.raises(KernelTimeout) as info:
            agent.call("eval", {"code": "1"}, timeout=1.0)
        assert time.monotonic() - started < 8  # the timeout, then a ping asks what runs
        assert "within 1 s" in str(info.value) and "busy" in str(info.value)
        assert "Running: a notebook cell" in str(info.value) and "time.sleep(4)" in str(info.value)
        # A person's cell: wait or ask them, never a blind interrupt or "restart".
        assert "wait for it to finish" in str(info.value) and "ask the person" in str(info.value)
        assert "restart" not in str(info.value)
        hk.wait_for(lambda m: m["parent_header"].get("msg_id") == msg_id
                    and m["msg_type"] == "status" and m["content"]["execution_state"] == "idle",
                    timeout=30)
        # The late reply to the timed-out call is not taken for the next one (ids differ).
        r = agent.call("search", {"pattern": "alpha", "path": "."}, timeout=30)
        assert r.ok and "a.txt (1 matching line)" in r.text
    finally:
        agent.close()


@pytest.mark.timeout(120)
def test_kernel_restart_while_an_agent_is_attached_is_reported_not_waited_out(hk: Any) -> None:
    agent = client.connect(hk.km.connection_file, label="restart", timeout=60)
    try:
        assert agent.call("read", {"path": "a.txt"}).ok
        hk.km.restart_kernel(now=True)
        started = time.monotonic()
        with pytest.raises(KernelError) as info:
            agent.call("read", {"path": "a.txt"}, timeout=60)
        waited = time.monotonic() - started
        assert waited < 30, f"the restart was noticed only after {waited:.0f} s"
        assert "restart" in str(info.value)
        # A new connection works with the new kernel.
        again = client.connect(hk.km.connection_file, label="after restart", timeout=60)
        try:
            assert again.call("read", {"path": "a.txt"}).ok
        finally:
            again.close()
    finally:
        agent.close()


AGENT_SCRIPT = textwrap.dedent("""
    import sys
    from kli import client
    k = client.connect(sys.argv[1], label="doomed", timeout=60)
    print("attached", flush=True)
    k.call("eval", {"code": "import time\\nfor _ in range(40): time.sleep(0.1)"})
    print("finished", flush=True)
""")


def test_agent_killed_mid_call_leaves_the_kernel_healthy_for_the_next_agent(hk: Any) -> None:
    proc = subprocess.Popen([sys.executable, "-c", AGENT_SCRIPT, hk.km.connection_file],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "attached"
    time.sleep(0.8)  # the eval is running
    proc.kill()
    proc.wait(10)
    nxt = client.connect(hk.km.connection_file, label="next", timeout=30)
    try:
        r = nxt.call("eval", {"code": "6 * 7"})
        assert r.ok and "42" in r.text
        assert nxt.call("read", {"path": "a.txt"}).ok
        assert nxt.ping() < 5
    finally:
        nxt.close()
    hk.alive_check()


def test_tools_leak_no_processes(hk: Any) -> None:
    agent = client.connect(hk.km.connection_file, label="leaks", timeout=60)
    try:
        assert agent.call("bash", {"command": "true"}).ok
        before = {p.pid for p in _descendants(hk)}
        calls = [
            ("bash", {"command": "sleep 30 & sleep 30 & echo started", "timeout": 1}),
            ("bash", {"command": "(sleep 31 &) ; sleep 31", "timeout": 1}),
            ("bash", {"command": "yes > /dev/null", "timeout": 1}),
            ("bash", {"command": "exit 3"}),
            ("ws_shell", {"command": "ls"}),
            ("ws_shell", {"command": "sleep 5", "timeout": 1}),
            ("eval", {"code": "import subprocess\nsubprocess.run(['sleep', '0.1'])"}),
        ]
        for tool, args in calls:
            agent.call(tool, args, timeout=60)
        deadline = time.monotonic() + 10
        while True:
            extra = [p for p in _descendants(hk) if p.pid not in before]
            if not extra or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert extra == [], [(p.pid, p.cmdline()) for p in extra]
    finally:
        agent.close()
