"""bash and eval under abuse: a (bounded) fork bomb ended by the timeout's group kill, huge
output read with bounded memory, deep recursion and impossible allocations in eval reported
with the kernel alive.

Nothing here can exhaust the shared machine: the fork bomb is a counted tree (at most 127
processes), the output goes through a pipe and is dropped past the cap, and the allocations
fail at once. ``KLI_HARDENING_LONG=1`` runs the 10 GB output; CI runs 2 GB.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from kli.tools import Workspace

from .conftest import LONG, kernel_harness

CHILD = str(Path(__file__).with_name("_child.py"))
MARK = "61.4321"  # the sleeps of the fork bomb, found by this argument
OUTPUT_BYTES = 10 * 1024**3 if LONG else 2 * 1024**3
MEMORY_BOUND_KIB = 64 * 1024  # the capture may add at most this much to the process's peak


def _marked() -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if MARK in (p.info["cmdline"] or []):
                found.append(p)
        except psutil.Error:
            continue
    return found


@pytest.mark.timeout(60)
def test_bounded_fork_bomb_is_ended_by_the_timeout_group_kill(ws: Workspace) -> None:
    # Each process starts two more until depth 6: 127 processes, all sleeping.
    bomb = (f"f() {{ if [ $1 -gt 0 ]; then f $(($1-1)) & f $(($1-1)) & fi; exec sleep {MARK}; }};"
            " f 6")
    started = time.monotonic()
    r = ws.call("bash", {"command": bomb, "timeout": 2})
    assert time.monotonic() - started < 20
    assert not r.ok and r.details["timed_out"] is True
    assert "timed out" in r.text or "timeout" in r.text
    deadline = time.monotonic() + 5
    while _marked() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _marked() == [], "fork bomb processes survived the group kill"


@pytest.mark.timeout(600)
def test_huge_output_is_read_with_bounded_memory(root: Path) -> None:
    out = subprocess.run([sys.executable, CHILD, "bash_output",
                          json.dumps({"root": str(root), "nbytes": OUTPUT_BYTES})],
                         capture_output=True, text=True, timeout=580)
    assert out.returncode == 0, out.stderr[-2000:]
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["ok"]
    assert result["details"]["stdout_total"] == OUTPUT_BYTES
    assert "1048576-character cap" in result["tail"]
    assert result["text_len"] < 2 * 1024 * 1024
    grew = result["peak_kib"] - result["base_kib"]
    assert grew < MEMORY_BOUND_KIB, f"peak grew by {grew} KiB"
    print(f"\n{OUTPUT_BYTES / 1024**3:g} GiB of output in {result['seconds']:.1f} s; "
          f"peak memory +{grew / 1024:.1f} MiB")


def test_deep_recursion_in_eval_is_reported_and_the_image_keeps_working(ws: Workspace) -> None:
    r = ws.call("eval", {"code": "def f(n):\n    return f(n + 1)\nf(0)"})
    assert not r.ok and "RecursionError" in r.text
    r = ws.call("eval", {"code": "sum(range(10))"})
    assert r.ok and "45" in r.text


@pytest.mark.parametrize("code", ["bytearray(10**13)", "[0] * (10**13)", "'x' * (10**14)",
                                  "bytes(2**62)"])
def test_impossible_allocation_in_eval_is_a_memory_error_result(ws: Workspace, code: str) -> None:
    r = ws.call("eval", {"code": code})
    assert not r.ok
    assert "MemoryError" in r.text or "OverflowError" in r.text, r.text
    assert ws.call("eval", {"code": "1 + 1"}).ok


@pytest.fixture(scope="module")
def abuse_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("abusek") / "root"
    root.mkdir()
    h = kernel_harness.start_harness(root)
    yield h
    kernel_harness.stop_harness(h)


@pytest.mark.kernel
@pytest.mark.parametrize("code,named", [
    ("def f(n):\n    return f(n + 1)\nf(0)", "RecursionError"),
    ("bytearray(10**13)", "MemoryError"),
    ("import sys\nsys.setrecursionlimit(50)\ndef g(n):\n    return g(n + 1)\ng(0)", "RecursionError"),
])
def test_eval_abuse_through_the_kernel_is_reported_and_the_kernel_stays_up(
    abuse_kernel: Any, code: str, named: str
) -> None:
    h = abuse_kernel
    comm_id, _ = h.open_comm("kli.agent", {"label": "abuse"})
    reply = h.call(comm_id, "eval", {"code": code})
    assert reply["ok"] is False and named in reply["text"]
    h.alive_check()
    # The image keeps what the code did (a lowered recursion limit too); it still serves calls.
    again = h.call(comm_id, "eval", {"code": "import sys\nsys.setrecursionlimit(3000)\n6 * 7"})
    assert again["ok"] and "42" in again["text"]
