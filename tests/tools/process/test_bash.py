"""The bash tool: every rule of spec/kli-tools.txt "bash" and issue 3, on real subprocesses."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.process import bash as bash_tool
from kli.tools.process.present import MODEL_STREAM_CHARS
from tests.processes import alive as _alive
from tests.processes import running_with_arg


def _wait_dead(pid: int, within: float = 3.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return not _alive(pid)


def test_runs_through_sh_and_labels_both_streams(ws: Workspace) -> None:
    r = ws.call("bash", {"command": "echo out-text; echo err-text >&2"})
    assert r.ok
    assert r.details["exit_code"] == 0
    assert r.details["shell"] == "sh"
    assert "stdout:\nout-text" in r.text
    assert "stderr:\nerr-text" in r.text


def test_streams_are_captured_separately(ws: Workspace) -> None:
    r = ws.call("bash", {"command": "echo A; echo B >&2; echo C"})
    out = r.text.split("stdout:\n", 1)[1].split("\nstderr:", 1)[0]
    assert out == "A\nC"
    assert r.details["stdout_total"] == 4 and r.details["stderr_total"] == 2


def test_empty_stream_is_labelled_empty(ws: Workspace) -> None:
    r = ws.call("bash", {"command": "true"})
    assert "stdout: (empty)" in r.text and "stderr: (empty)" in r.text


def test_default_directory_is_the_workspace_root(ws: Workspace, root: Path) -> None:
    r = ws.call("bash", {"command": "pwd"})
    assert r.text.split("stdout:\n")[1].splitlines()[0] == os.path.realpath(root)


def test_relative_directory_resolves_against_root(ws: Workspace, root: Path) -> None:
    (root / "sub" / "deeper").mkdir(parents=True)
    r = ws.call("bash", {"command": "pwd", "directory": "sub/deeper"})
    assert r.ok
    assert os.path.realpath(root / "sub" / "deeper") in r.text


def test_absolute_directory_outside_root_is_allowed(ws: Workspace, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    r = ws.call("bash", {"command": "pwd", "directory": str(other)})
    assert r.ok and str(other) in r.text


def test_missing_directory_is_an_error_and_runs_nothing(ws: Workspace, root: Path) -> None:
    r = ws.call("bash", {"command": "touch ran", "directory": "nope"})
    assert not r.ok and r.details["error"] == "bad_directory"
    assert "does not exist" in r.text
    assert not (root / "ran").exists() and not (root / "nope").exists()


def test_input_is_fed_to_stdin(ws: Workspace) -> None:
    r = ws.call("bash", {"command": "tr a-z A-Z", "input": "hello\nworld\n"})
    assert "HELLO\nWORLD" in r.text


def test_stdin_is_empty_by_default(ws: Workspace) -> None:
    r = ws.call("bash", {"command": "wc -c", "timeout": 5})
    assert r.ok and r.text.split("stdout:\n")[1].split()[0] == "0"


def test_large_input_does_not_deadlock(ws: Workspace) -> None:
    data = "x" * 3_000_000
    r = ws.call("bash", {"command": "wc -c", "input": data, "timeout": 10})
    assert r.ok and "3000000" in r.text


def test_shell_parameter_selects_the_shell(ws: Workspace) -> None:
    r = ws.call("bash", {"command": "echo $0", "shell": "bash"})
    assert r.ok and r.details["shell"] == "bash"
    assert "stdout:\nbash" in r.text


def test_unknown_shell_is_an_error(ws: Workspace) -> None:
    r = ws.call("bash", {"command": "true", "shell": "no-such-shell-xyz"})
    assert not r.ok and r.details["error"] == "bad_shell"


def test_nonzero_exit_is_an_error_that_still_shows_output(ws: Workspace) -> None:
    r = ws.call("bash", {"command": "echo partial; echo why >&2; exit 7"})
    assert not r.ok
    assert r.details["exit_code"] == 7
    assert r.text.startswith("exit code 7")
    assert "partial" in r.text and "why" in r.text


def test_killed_by_signal_reports_the_signal(ws: Workspace) -> None:
    r = ws.call("bash", {"command": "kill -9 $$"})
    assert not r.ok and r.details["signal"] == 9 and r.details["exit_code"] == 137
    assert "SIGKILL" in r.text


@pytest.mark.serial  # asserts a wall-clock time
def test_timeout_is_an_error_naming_the_timeout(ws: Workspace) -> None:
    started = time.monotonic()
    r = ws.call("bash", {"command": "echo before; sleep 30", "timeout": 1})
    assert time.monotonic() - started < 5
    assert not r.ok
    assert r.details["timed_out"] is True and r.details["exit_code"] is None
    assert "timed out after 1 s" in r.text
    assert "before" in r.text  # output produced before the kill is kept


def test_timeout_kills_the_backgrounded_grandchild(ws: Workspace, root: Path) -> None:
    r = ws.call("bash", {"command": "sleep 100 & echo $! > pidfile; sleep 100", "timeout": 1})
    assert not r.ok and r.details["timed_out"]
    pid = int((root / "pidfile").read_text())
    assert _wait_dead(pid), f"background sleep {pid} survived the timeout"


def test_timeout_kills_a_child_that_ignores_sigterm(ws: Workspace, root: Path) -> None:
    command = "sh -c 'trap \"\" TERM; echo $$ > pidfile; while :; do sleep 0.1; done' & sleep 100"
    r = ws.call("bash", {"command": command, "timeout": 1})
    assert r.details["timed_out"]
    pid = int((root / "pidfile").read_text())
    assert _wait_dead(pid)


def test_timeout_is_clamped_to_the_maximum(ws: Workspace) -> None:
    r = ws.call("bash", {"command": "true", "timeout": 100000})
    assert r.ok and r.details["timeout"] == bash_tool.MAX_TIMEOUT == 300
    assert "clamped to the maximum 300 s" in r.text


def test_default_timeout_is_30(ws: Workspace) -> None:
    assert (
        ws.call("bash", {"command": "true"}).details["timeout"] == 30 == bash_tool.DEFAULT_TIMEOUT
    )


@pytest.mark.parametrize("bad", [0, -5])
def test_non_positive_timeout_is_an_error(ws: Workspace, root: Path, bad: int) -> None:
    r = ws.call("bash", {"command": "touch ran", "timeout": bad})
    assert not r.ok and "positive" in r.text
    assert not (root / "ran").exists()


@pytest.mark.serial  # asserts a wall-clock time
def test_background_job_holding_the_pipes_cannot_hang_the_call(ws: Workspace, root: Path) -> None:
    started = time.monotonic()
    r = ws.call("bash", {"command": "sleep 60 & echo $! > pidfile; echo done", "timeout": 20})
    assert time.monotonic() - started < 5
    assert r.ok and "done" in r.text and r.details["orphans_killed"] is True
    assert _wait_dead(int((root / "pidfile").read_text()))


def test_background_job_with_redirected_output_keeps_running(ws: Workspace, root: Path) -> None:
    r = ws.call("bash", {"command": "nohup sleep 60 > /dev/null 2>&1 & echo $! > pidfile"})
    pid = int((root / "pidfile").read_text())
    try:
        assert r.ok and r.details["orphans_killed"] is False
        assert _alive(pid)
    finally:
        os.kill(pid, 9)


def test_long_output_shows_head_and_tail_with_elided_count(ws: Workspace, root: Path) -> None:
    r = ws.call("bash", {"command": "seq 1 100000"})
    assert r.ok
    total = r.details["stdout_total"]
    assert total == len("\n".join(str(i) for i in range(1, 100001)) + "\n")
    assert "\n1\n2\n3\n" in r.text and "99999\n100000" in r.text
    assert "50000\n" not in r.text
    assert len(r.text) < MODEL_STREAM_CHARS + 1000
    assert "characters elided of" in r.text
    capture = r.details["stdout_file"]
    assert capture.startswith(".kli/scratch/") and capture in r.text
    saved = (root / capture).read_text()
    assert saved == "".join(f"{i}\n" for i in range(1, 100001))


def test_short_output_writes_no_capture_file(ws: Workspace, root: Path) -> None:
    r = ws.call("bash", {"command": "echo small"})
    assert r.details["stdout_file"] is None
    assert not (root / ".kli" / "scratch").exists()


def test_output_past_one_mib_is_dropped_and_noted(ws: Workspace, root: Path) -> None:
    r = ws.call("bash", {"command": "yes | head -c 3000000; echo tail-marker", "timeout": 20})
    assert r.ok
    cap = bash_tool.OUTPUT_CAP
    assert cap == 1_048_576
    assert r.details["stdout_total"] == 3_000_000 + len("tail-marker\n")
    assert r.details["stdout_dropped"] == r.details["stdout_total"] - cap
    assert f"passed the {cap}-character cap" in r.text
    assert "tail-marker" in r.text  # the end of the stream is kept and shown
    saved = (root / r.details["stdout_file"]).read_text()
    assert saved.startswith("y\ny\n") and saved.endswith("tail-marker\n")
    assert f"{r.details['stdout_dropped']} characters dropped while running" in saved
    assert len(saved) < cap + 200


def test_stderr_is_capped_independently(ws: Workspace) -> None:
    r = ws.call("bash", {"command": "yes e | head -c 2000000 >&2; echo ok"})
    assert r.details["stderr_dropped"] == 2_000_000 - bash_tool.OUTPUT_CAP
    assert r.details["stdout_dropped"] == 0 and "stdout:\nok" in r.text


def test_capture_files_are_pruned(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kli.tools.process import present

    monkeypatch.setattr(present, "SCRATCH_KEEP", 3)
    for _ in range(5):
        ws.call("bash", {"command": "seq 1 20000"})
    names = os.listdir(root / ".kli" / "scratch")
    assert len([n for n in names if n.startswith("bash-")]) == 3


def test_interactive_program_is_refused_before_running(ws: Workspace, root: Path) -> None:
    r = ws.call("bash", {"command": "touch ran; less README"})
    assert not r.ok and r.details["error"] == "interactive"
    assert "Nothing was run" in r.text and "cat" in r.text
    assert not (root / "ran").exists()


def test_echo_of_an_interactive_name_runs(ws: Workspace) -> None:
    r = ws.call("bash", {"command": "echo vim"})
    assert r.ok and "stdout:\nvim" in r.text


def test_gate_process_exec_denies_when_not_granted(root: Path) -> None:
    ws = Workspace(str(root), settings={"capabilities": ["image/eval"]})
    r = ws.call("bash", {"command": "touch ran"})
    assert not r.ok and r.details["error"] == "denied" and r.details["gate"] == "process/exec"
    assert not (root / "ran").exists()


def test_bad_arguments_are_rejected(ws: Workspace) -> None:
    r = ws.call("bash", {"command": "true", "cwd": "/"})
    assert not r.ok and r.details["error"] == "bad_arguments"


def test_non_utf8_output_is_replaced_not_fatal(ws: Workspace) -> None:
    r = ws.call("bash", {"command": "printf 'a\\377b'"})
    assert r.ok and "a\ufffdb" in r.text


def test_keyboard_interrupt_kills_the_command_and_returns_an_error(
    ws: Workspace, root: Path
) -> None:
    import signal
    import threading

    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        r = ws.call("bash", {"command": "echo $$ > pidfile; sleep 10", "timeout": 20})
    finally:
        timer.cancel()
    assert not r.ok and r.details["error"] == "interrupted"
    assert _wait_dead(int((root / "pidfile").read_text()))


def _none_left(arg: str, within: float = 3.0) -> list[int]:
    end = time.monotonic() + within
    while (left := running_with_arg(arg)) and time.monotonic() < end:
        time.sleep(0.05)
    return left


DAEMON = ("python3 -c \"import os, time\nif os.fork(): os._exit(0)\nos.setsid()\n"
          "if os.fork(): os._exit(0)\nopen('esc-{arg}', 'w').close()\ntime.sleep({arg})\"")
# An escaping command ends only once its process has left the group (it writes esc-ARG after
# setsid): on a loaded machine the shell could end first, and the process would still be in
# the group, killed with it — not the case under test.
ESCAPED = " until [ -e esc-{arg} ]; do sleep 0.01; done; echo started"


@pytest.mark.parametrize(
    ("command", "arg", "escaped"),
    [
        ("setsid sh -c 'touch esc-{arg}; exec sleep {arg}' &" + ESCAPED, "101.1", True),
        ("nohup setsid sh -c 'touch esc-{arg}; exec sleep {arg}' &" + ESCAPED, "101.2", True),
        ("(setsid sh -c 'touch esc-{arg}; sleep {arg} & sleep {arg}' &) ;" + ESCAPED, "101.3", True),
        ("(sleep {arg} &) ; echo started", "101.4", False),  # double fork, same group
        ("nohup sleep {arg} & echo started", "101.5", False),  # the pipe is not a terminal
        (DAEMON + " &" + ESCAPED, "101.6", True),  # a daemon's double fork and setsid
    ],
)
def test_no_process_holding_the_output_outlives_the_call(
    ws: Workspace, command: str, arg: str, escaped: bool
) -> None:
    """Before, a ``setsid`` daemon escaped the group kill while the result said background
    processes "were killed". Now everything the command started is killed (found by the run's
    mark in its environment), and the text says which had left the group."""
    r = ws.call("bash", {"command": command.format(arg=arg), "timeout": 20})
    try:
        assert r.ok and "started" in r.text, r.text
        assert r.details["orphans_killed"] is True
        assert _none_left(arg) == []
        assert ("left the process group" in r.text) is escaped, r.text
        assert (r.details["escaped_killed"] > 0) is escaped
        assert r.details["survivors"] == []
    finally:
        for pid in running_with_arg(arg):
            os.kill(pid, 9)


def test_a_timeout_kills_what_left_the_group_even_with_its_output_redirected(ws: Workspace) -> None:
    arg = "101.7"
    r = ws.call("bash", {"command": f"setsid sleep {arg} > /dev/null 2>&1 & sleep 30",
                         "timeout": 1})
    try:
        assert not r.ok and r.details["timed_out"] is True
        assert _none_left(arg) == []
        assert r.details["escaped_killed"] == 1, r.text
    finally:
        for pid in running_with_arg(arg):
            os.kill(pid, 9)


def test_a_redirected_background_job_that_left_the_group_keeps_running_as_documented(
    ws: Workspace,
) -> None:
    """The documented exception: a job whose output is redirected away from the pipes is left
    running when the command ends normally — in a new session or not."""
    arg = "101.8"
    r = ws.call("bash", {"command": f"setsid sleep {arg} > /dev/null 2>&1 < /dev/null &"})
    try:
        assert r.ok and r.details["orphans_killed"] is False, r.text
        time.sleep(0.2)
        assert len(running_with_arg(arg)) == 1
    finally:
        for pid in running_with_arg(arg):
            os.kill(pid, 9)
