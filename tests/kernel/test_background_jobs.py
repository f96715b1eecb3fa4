"""Background shell jobs in a real kernel: they outlive calls, read incrementally, die with
their process group, with their session, and with the kernel (checked with psutil)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.kernel.conftest import start_harness
from tests.processes import alive as _alive

pytestmark = pytest.mark.kernel


def _pids_of_marker(marker: str) -> list[int]:
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmd = " ".join(proc.info.get("cmdline") or [])
        if marker in cmd and "pytest" not in cmd:
            found.append(proc.info["pid"])
    return [p for p in found if _alive(p)]


def _gone(marker: str, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _pids_of_marker(marker):
            return True
        time.sleep(0.1)
    return False


def test_a_background_job_outlives_three_calls_and_is_read_incrementally(kernel: Any) -> None:
    agent, _ = kernel.open_comm("kli.agent", {"label": "jobs"})
    started = kernel.call(agent, "bash", {
        "command": "for i in 1 2 3 4; do echo tick$i; sleep 0.6; done; echo bye >&2; exit 4",
        "run_in_background": True})
    assert started["ok"], started["text"]
    job = started["details"]["job_id"]
    assert "started background job" in started["text"]
    seen: list[str] = []
    for _ in range(3):  # three other calls while it runs
        kernel.call(agent, "bash", {"command": "true"})
        out = kernel.call(agent, "bash_output", {"job_id": job, "wait": 2})
        assert out["ok"], out["text"]
        seen.append(out["text"])
    first_ticks = [t for t in ("tick1", "tick2", "tick3", "tick4") if t in seen[0]]
    assert first_ticks and "tick4" not in seen[0], seen[0]
    # each read shows only what is new: no tick appears in two reads
    for tick in ("tick1", "tick2", "tick3"):
        assert sum(tick in s for s in seen) <= 1, seen
    final = kernel.call(agent, "bash_output", {"job_id": job, "wait": 5})
    seen.append(final["text"])
    while final["details"]["status"] == "running":
        final = kernel.call(agent, "bash_output", {"job_id": job, "wait": 5})
        seen.append(final["text"])
    everything = "".join(seen)
    for tick in ("tick1", "tick2", "tick3", "tick4", "bye"):
        assert everything.count(tick) == 1, everything
    assert final["details"]["exit_code"] == 4
    listed = kernel.call(agent, "bash_jobs", {})
    assert job in listed["text"] and "exited exit 4" in listed["text"], listed["text"]


def test_bash_kill_stops_the_job_and_its_children(kernel: Any) -> None:
    agent, _ = kernel.open_comm("kli.agent", {"label": "killer"})
    marker = "kli-kill-marker-7731"
    started = kernel.call(agent, "bash", {
        "command": f"sh -c 'sleep 300; : {marker}' & sh -c 'sleep 300; : {marker}' & wait",
        "run_in_background": True})
    job = started["details"]["job_id"]
    deadline = time.monotonic() + 5
    while len(_pids_of_marker(marker)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(_pids_of_marker(marker)) >= 2
    killed = kernel.call(agent, "bash_kill", {"job_id": job})
    assert killed["ok"] and killed["details"]["status"] == "killed", killed["text"]
    assert _gone(marker), _pids_of_marker(marker)
    assert not _alive(started["details"]["pid"])


def test_a_job_of_another_session_is_not_found(kernel: Any) -> None:
    a, _ = kernel.open_comm("kli.agent", {"label": "a"})
    b, _ = kernel.open_comm("kli.agent", {"label": "b"})
    job = kernel.call(a, "bash", {"command": "sleep 5", "run_in_background": True})
    other = kernel.call(b, "bash_output", {"job_id": job["details"]["job_id"]})
    assert not other["ok"] and other["details"]["error"] == "unknown_job"
    assert "bash_jobs" in other["text"]
    kernel.call(a, "bash_kill", {"job_id": job["details"]["job_id"]})


def test_closing_the_session_kills_its_jobs(kernel: Any) -> None:
    agent, _ = kernel.open_comm("kli.agent", {"label": "closing"})
    marker = "kli-close-marker-5512"
    kernel.call(agent, "bash", {"command": f"sh -c 'sleep 300; : {marker}'",
                                "run_in_background": True})
    deadline = time.monotonic() + 5
    while not _pids_of_marker(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _pids_of_marker(marker)
    kernel.close_comm(agent)
    assert _gone(marker), _pids_of_marker(marker)


def test_kernel_shutdown_leaves_no_process(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    h = start_harness(root)
    marker = "kli-shutdown-marker-9034"
    try:
        agent, _ = h.open_comm("kli.agent", {"label": "shutdown"})
        for _ in range(2):
            r = h.call(agent, "bash", {"command": f"sh -c 'sleep 300; : {marker}' & sleep 300",
                                       "run_in_background": True})
            assert r["ok"], r["text"]
        magic = h.execute(f"%kli bash --run_in_background sleep 300; : {marker}")
        assert magic[0]["status"] == "ok"
        deadline = time.monotonic() + 5
        while len(_pids_of_marker(marker)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_pids_of_marker(marker)) >= 3
        kernel_pid = h.km.provisioner.pid
    finally:
        h.kc.stop_channels()
        h.km.shutdown_kernel(now=False)  # the graceful path: shutdown_request
    assert _gone(marker), _pids_of_marker(marker)
    assert not _alive(kernel_pid)
