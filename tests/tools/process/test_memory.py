"""Memory stays bounded while capping huge output: peak RSS measured by the OS in a child."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# Peak resident memory allowed for the child interpreter (python + kli ≈ 20–30 MB at rest), and
# its growth during the call (the 1 MiB caps, decoding buffers, the capture file write).
LIMIT_KB = 100 * 1024
GROWTH_KB = 48 * 1024

_SCRIPT = """
import json, resource, sys
from kli.tools import Workspace

def hwm_kb():
    # This process's own peak RSS (VmHWM). ru_maxrss may carry the parent's high-water mark
    # into a child started by fork/vfork + exec.
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

ws = Workspace(sys.argv[1])
ws.call("bash", {"command": "echo warm"})
ws.call("eval", {"code": "print('warm')"})
idle = hwm_kb()
r = ws.call(sys.argv[2], json.loads(sys.argv[3]))
print(json.dumps({"ok": r.ok, "details": r.details,
                  "maxrss_kb": hwm_kb(), "idle_kb": idle}))
"""


def _run_child(root: Path, tool: str, args: str) -> dict:
    import json

    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(root), tool, args],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_bash_capping_two_gigabytes_keeps_memory_bounded(root: Path) -> None:
    report = _run_child(root, "bash", '{"command": "yes | head -c 2G", "timeout": 60}')
    assert report["ok"]
    assert report["details"]["stdout_total"] == 2 * 1024**3
    assert report["details"]["stdout_dropped"] == 2 * 1024**3 - 1_048_576
    assert report["maxrss_kb"] < LIMIT_KB, report
    assert report["maxrss_kb"] - report["idle_kb"] < GROWTH_KB, report


def test_eval_printing_loop_keeps_memory_bounded(root: Path) -> None:
    report = _run_child(
        root, "eval", '{"code": "while True:\\n    print(\'x\' * 1000)", "timeout": 2}'
    )
    assert not report["ok"] and report["details"]["error"] == "timeout"
    assert report["details"]["stdout_total"] > 50 * 1_048_576  # it really printed a lot
    assert report["maxrss_kb"] < LIMIT_KB, report
    assert report["maxrss_kb"] - report["idle_kb"] < GROWTH_KB, report
