"""ws_shell with real shells: output, exit codes, empty output, timeouts that kill the whole
process group, bounded output, the policy setting, redirection to scratch."""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest

from kli.tools import Workspace


def test_runs_one_command_and_reports_exit_code(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("alpha\nbeta\n")
    r = ws.call("ws_shell", {"command": "grep -n beta a.txt"})
    assert r.ok and r.text.startswith("2:beta\n[exit code 0 · ")
    assert r.details["exit_code"] == 0


def test_failure_is_an_error_result_with_stderr(ws: Workspace) -> None:
    r = ws.call("ws_shell", {"command": "ls no-such-file"})
    assert not r.ok and r.details["exit_code"] == 2
    assert "[stderr]\n" in r.text and "no-such-file" in r.text and "[exit code 2" in r.text


def test_empty_output_is_reported_explicitly(ws: Workspace) -> None:
    r = ws.call("ws_shell", {"command": "true"})
    assert r.ok and r.text == "(command succeeded with no output: true)"
    r = ws.call("ws_shell", {"command": "false"})
    assert not r.ok and r.text == "(command failed with exit code 1 and no output: false)"


def test_stdin_is_empty(ws: Workspace) -> None:
    r = ws.call("ws_shell", {"command": "cat"})
    assert r.ok and r.text == "(command succeeded with no output: cat)"


def test_refusal_runs_nothing(ws: Workspace, root: Path) -> None:
    r = ws.call("ws_shell", {"command": "echo hi > made.txt"})
    assert not r.ok and r.details["rule"] == "write_redirect"
    assert not (root / "made.txt").exists()
    r = ws.call("ws_shell", {"command": "touch made.txt"})
    assert not r.ok and r.details["rule"] == "policy" and not (root / "made.txt").exists()


def test_redirect_into_scratch_works(ws: Workspace, root: Path) -> None:
    r = ws.call("ws_shell", {"command": "echo kept > .kli/scratch/out.txt"})
    assert r.ok, r.text
    assert (root / ".kli/scratch/out.txt").read_text() == "kept\n"


def test_policy_any_allows_other_commands(root: Path) -> None:
    ws = Workspace(str(root), {"shell_policy": "any"})
    assert ws.call("ws_shell", {"command": "touch made.txt"}).ok
    assert (root / "made.txt").exists()


def test_policy_readonly_refuses_build_commands(root: Path) -> None:
    ws = Workspace(str(root), {"shell_policy": "readonly"})
    r = ws.call("ws_shell", {"command": "python3 -m this"})
    assert not r.ok and "shell_policy setting is 'readonly'" in r.text
    assert ws.call("ws_shell", {"command": "ls"}).ok


def test_bad_policy_setting_is_named(root: Path) -> None:
    ws = Workspace(str(root), {"shell_policy": "yolo"})
    r = ws.call("ws_shell", {"command": "ls"})
    assert not r.ok and "setting 'shell_policy' must be one of readonly, build, any" in r.text


def test_timeout_kills_the_whole_process_group(root: Path) -> None:
    ws = Workspace(str(root), {"shell_policy": "any"})
    started = time.monotonic()
    r = ws.call(
        "ws_shell",
        {"command": "sh -c 'sleep 30 & echo $! > .kli/scratch/child.pid; wait'", "timeout": 1},
    )
    assert time.monotonic() - started < 10
    assert not r.ok and r.details["timed_out"]
    assert "[timed out after 1s — the whole process group was killed." in r.text
    pid = int((root / ".kli/scratch/child.pid").read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"background child {pid} survived the timeout")


def test_default_timeout_is_shell_timeout_and_override_is_capped(root: Path) -> None:
    ws = Workspace(str(root), {"shell_timeout": 1, "shell_timeout_max": 1})
    r = ws.call("ws_shell", {"command": "sleep 5"})
    assert r.details["timed_out"] and "timed out after 1s" in r.text
    r = ws.call("ws_shell", {"command": "sleep 4", "timeout": 60})
    assert r.details["timed_out"]
    assert "[timeout 60s capped at 1s by the harness (shell_timeout_max)]" in r.text


def test_output_is_bounded_while_running(ws: Workspace) -> None:
    r = ws.call("ws_shell", {"command": "yes | head -c 5000000"})
    assert r.ok
    assert r.details["stdout_chars"] == 5_000_000
    assert len(r.text) <= 8000
    assert "[exit code 0" in r.text


def test_runs_in_path_and_path_is_jailed(ws: Workspace, root: Path) -> None:
    (root / "sub").mkdir()
    assert ws.call("ws_shell", {"command": "pwd", "path": "sub"}).text.startswith(str((root / "sub").resolve()))
    assert not ws.call("ws_shell", {"command": "pwd", "path": "../"}).ok


def test_exec_gate_applies(root: Path) -> None:
    ws = Workspace(str(root), {"capabilities": ["file/read"]})
    r = ws.call("ws_shell", {"command": "ls"})
    assert not r.ok and r.details["error"] == "denied"
