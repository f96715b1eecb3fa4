"""memguard: the cgroup headroom parser (fixture folders) and the eval memory guard, run in a
child interpreter so the test runner's own memory is never at stake."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kli.tools.process import memguard

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "cgroup"
CASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
on_linux = pytest.mark.skipif(memguard.rss_bytes() is None, reason="needs /proc (Linux)")

MB = 2**20
ALLOWANCE = 300 * MB

# The child: a Workspace whose evals get ALLOWANCE (available memory stands at ALLOWANCE /
# SHARE), runs the given codes in order (each on the main thread, or on a worker thread) and
# prints each result with the process's resident memory before and its peak (VmHWM) after.
CHILD = """
import json, sys, threading
from kli.tools import Workspace
from kli.tools.process import memguard

def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024

memguard.available_bytes = lambda: int(int(sys.argv[2]) / memguard.SHARE)
ws = Workspace(sys.argv[1])
out = []
for code, timeout, where in json.loads(sys.argv[3]):
    before = memguard.rss_bytes()
    box = {}
    def run():
        box["r"] = ws.call("eval", {"code": code, "timeout": timeout})
    if where == "thread":
        t = threading.Thread(target=run); t.start(); t.join()
    else:
        run()
    r = box["r"]
    out.append({"ok": r.ok, "text": r.text, "error": r.details.get("error"),
                "allowance": r.details.get("memory_allowance"), "before": before,
                "hwm": hwm(), "after": memguard.rss_bytes()})
print(json.dumps(out))
"""

HOG = "x = []\nwhile True:\n    x.append(' ' * 1_000_000)"


def run_child(tmp_path: Path, *codes: tuple[str, int, str]) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path), str(ALLOWANCE), json.dumps(codes)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    results: list[dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return results


@pytest.mark.parametrize("case", CASES)
def test_cgroup_headroom_fixtures(case: str) -> None:
    folder = FIXTURES / case
    expected = (folder / "expected").read_text().strip()
    got = memguard._cgroup_headroom(str(folder / "cgroup"), str(folder / "fs"))
    assert got == (None if expected == "none" else int(expected))


def test_available_memory_is_known_and_no_more_than_memavailable() -> None:
    available = memguard.available_bytes()
    if memguard.rss_bytes() is None:
        assert available is None or available > 0
        return
    assert available is not None and available > 0
    meminfo = Path("/proc/meminfo").read_text()
    line = next(ln for ln in meminfo.splitlines() if ln.startswith("MemAvailable:"))
    # MemAvailable moves between the two readings; allow a generous drift.
    assert available <= int(line.split()[1]) * 1024 * 1.5


@on_linux
@pytest.mark.parametrize("where", ["main", "thread"])
def test_a_runaway_eval_is_stopped_with_memory_error_and_the_image_goes_on(
    tmp_path: Path, where: str
) -> None:
    hog, after, freed = run_child(
        tmp_path, (HOG, 60, where), ("len(x) > 0", 10, where), ("del x\n'freed'", 10, where)
    )
    assert not hog["ok"] and hog["error"] == "memory", hog["text"]
    assert hog["allowance"] == ALLOWANCE
    assert hog["text"].startswith("stopped with MemoryError at line 2: the evaluation grew")
    assert "300 MB (75% of the memory available when it started)" in hog["text"]
    assert "del them (or restart the kernel) to free it" in hog["text"]
    # Stopped near the allowance: far below what the loop would reach in 60 s.
    assert hog["hwm"] - hog["before"] < ALLOWANCE + 250 * MB
    assert after["ok"] and "True" in after["text"]
    assert freed["ok"] and "'freed'" in freed["text"]


@on_linux
def test_code_that_swallows_the_memory_error_is_stopped_again(tmp_path: Path) -> None:
    code = (
        "x = []\n"
        "while True:\n"
        "    try:\n"
        "        x.append(' ' * 1_000_000)\n"
        "    except MemoryError:\n"
        "        pass"
    )
    (r,) = run_child(tmp_path, (code, 5, "main"))
    assert not r["ok"] and r["error"] in ("memory", "timeout"), r["text"]
    assert r["hwm"] - r["before"] < ALLOWANCE + 250 * MB


@on_linux
def test_an_eval_within_the_allowance_is_untouched(tmp_path: Path) -> None:
    code = "y = [' ' * 1_000_000 for _ in range(100)]\nlen(y)"
    (r,) = run_child(tmp_path, (code, 30, "main"))
    assert r["ok"] and "[line 2] 100" in r["text"] and r["allowance"] == ALLOWANCE


def test_without_proc_the_guard_stands_aside(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memguard, "rss_bytes", lambda: None)
    with memguard.guarded() as guard:
        assert guard.active is False
    assert guard.fired is False


@on_linux
def test_the_guard_never_raises_after_its_block() -> None:
    """Over its allowance from the start (a negative one), then left: whatever the watcher
    raised but had not delivered is cleared, so nothing lands in the code after the block."""
    import time

    for _ in range(20):
        with pytest.raises(MemoryError):
            with memguard.guarded(-(1 << 40)) as guard:
                deadline = time.monotonic() + 2
                while time.monotonic() < deadline:
                    pass
        assert guard.fired
    for _ in range(200_000):  # bytecode after the block: a stray MemoryError would land here
        pass


@pytest.mark.parametrize(
    ("env", "expected", "reason", "noted"),
    [
        (None, 750 * MB, "75% of the memory available when it started", False),
        ("", 750 * MB, "75% of the memory available when it started", False),
        ("0", None, "KLI_EVAL_MEMORY_MB=0", False),
        ("200", 200 * MB, "KLI_EVAL_MEMORY_MB=200", False),
        ("5000", 750 * MB, "75% of the memory available when it started (less than "
         "KLI_EVAL_MEMORY_MB=5000)", False),
        ("lots", 750 * MB, "75% of the memory available when it started", True),
        ("-5", 750 * MB, "75% of the memory available when it started", True),
    ],
)
def test_the_allowance_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, env: str | None, expected: int | None, reason: str,
    noted: bool,
) -> None:
    monkeypatch.setattr(memguard, "available_bytes", lambda: 1000 * MB)
    if env is None:
        monkeypatch.delenv(memguard.ENV, raising=False)
    else:
        monkeypatch.setenv(memguard.ENV, env)
    allowance, why, note = memguard.default_allowance()
    assert (allowance, why) == (expected, reason)
    if noted:
        assert note == (
            f"KLI_EVAL_MEMORY_MB={env!r} is not a whole number of megabytes (0 turns the guard "
            "off); the default, 75% of the memory available, applies"
        )
    else:
        assert note is None


def test_an_unusable_setting_is_noted_in_the_eval_result(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from kli.tools import Workspace

    monkeypatch.setenv(memguard.ENV, "2GB")
    r = Workspace(str(tmp_path)).call("eval", {"code": "1 + 1"})
    assert r.ok and r.text.endswith(
        "[KLI_EVAL_MEMORY_MB='2GB' is not a whole number of megabytes (0 turns the guard off); "
        "the default, 75% of the memory available, applies]"
    )


def test_zero_turns_the_guard_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(memguard.ENV, "0")
    with memguard.guarded() as guard:
        assert guard.active is False and guard.reason == "KLI_EVAL_MEMORY_MB=0"
