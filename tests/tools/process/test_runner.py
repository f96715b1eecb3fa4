"""run_command and its bounded buffer (shared with slmcode's ws_shell)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kli.tools.process.runner import BoundedText, run_command
from tests.processes import alive as _alive


@given(
    chunks=st.lists(st.text(max_size=40), max_size=30),
    cap=st.integers(min_value=0, max_value=60),
    tail=st.integers(min_value=0, max_value=60),
)
def test_bounded_text_keeps_head_and_tail_of_the_stream(
    chunks: list[str], cap: int, tail: int
) -> None:
    sink = BoundedText(cap, tail)
    for chunk in chunks:
        sink.add(chunk)
    whole = "".join(chunks)
    head, kept_tail = sink.kept()
    assert sink.total == len(whole)
    assert len(head) + len(kept_tail) <= max(cap, 0)
    if len(whole) <= cap:
        assert head == whole and kept_tail == ""
    else:
        effective_tail = min(tail, cap)
        assert head == whole[: cap - effective_tail]
        assert kept_tail == (whole[len(whole) - effective_tail :] if effective_tail else "")


def test_head_only_by_default(tmp_path: Path) -> None:
    o = run_command(["sh", "-c", "seq 1 1000"], cwd=str(tmp_path), timeout=5, cap=10)
    assert o.stdout == "1\n2\n3\n4\n5\n" and o.stdout_tail == ""
    assert o.stdout_total == len("".join(f"{i}\n" for i in range(1, 1001)))
    assert o.stdout_dropped == o.stdout_total - 10


def test_exit_code_streams_cwd_env_and_input(tmp_path: Path) -> None:
    o = run_command(
        ["sh", "-c", 'cat; pwd; echo "$ONLY" >&2; exit 4'],
        cwd=str(tmp_path),
        input_text="fed\n",
        timeout=5,
        cap=1000,
        env={"ONLY": "this", "PATH": os.environ["PATH"]},
    )
    assert o.exit_code == 4 and not o.timed_out
    assert o.stdout == f"fed\n{tmp_path}\n" and o.stderr == "this\n"


@pytest.mark.serial  # asserts a wall-clock time
def test_timeout_returns_none_exit_code_promptly(tmp_path: Path) -> None:
    started = time.monotonic()
    o = run_command(["sh", "-c", "sleep 30"], cwd=str(tmp_path), timeout=0.3, cap=100)
    assert o.timed_out and o.exit_code is None
    assert time.monotonic() - started < 2


def test_leader_that_closes_its_output_still_meets_the_deadline(tmp_path: Path) -> None:
    o = run_command(
        ["sh", "-c", "exec >/dev/null 2>&1; sleep 30"], cwd=str(tmp_path), timeout=0.5, cap=100
    )
    assert o.timed_out and o.exit_code is None


def test_child_has_no_controlling_terminal(tmp_path: Path) -> None:
    o = run_command(["sh", "-c", "exec 3</dev/tty"], cwd=str(tmp_path), timeout=5, cap=1000)
    assert o.exit_code != 0


def test_multibyte_characters_split_across_reads_are_counted_as_characters(tmp_path: Path) -> None:
    o = run_command(
        ["python3", "-c", "import sys; sys.stdout.write('é' * 200000)"],
        cwd=str(tmp_path),
        timeout=10,
        cap=10**7,
    )
    assert o.stdout == "é" * 200000 and o.stdout_total == 200000


@pytest.mark.serial  # asserts a wall-clock time
def test_input_the_child_never_reads_does_not_block(tmp_path: Path) -> None:
    started = time.monotonic()
    o = run_command(
        ["sh", "-c", "exit 0"], cwd=str(tmp_path), input_text="x" * 5_000_000, timeout=5, cap=100
    )
    assert o.exit_code == 0 and not o.timed_out
    assert time.monotonic() - started < 2


def test_input_is_delivered_whole_to_a_slow_reader(tmp_path: Path) -> None:
    data = "".join(f"{i}\n" for i in range(200_000))
    o = run_command(
        ["sh", "-c", "while read -r line; do :; done; echo done"],
        cwd=str(tmp_path),
        input_text=data[:20_000],
        timeout=10,
        cap=100,
    )
    assert o.stdout == "done\n"
    o = run_command(["md5sum"], cwd=str(tmp_path), input_text=data, timeout=10, cap=100)
    import hashlib

    assert o.stdout.split()[0] == hashlib.md5(data.encode()).hexdigest()


def test_a_command_that_prints_nothing_has_empty_streams(tmp_path: Path) -> None:
    o = run_command(["sh", "-c", "true"], cwd=str(tmp_path), timeout=5, cap=100, tail=10)
    assert o.exit_code == 0 and not o.timed_out and not o.orphans_killed
    assert (o.stdout, o.stdout_tail, o.stdout_total) == ("", "", 0)
    assert (o.stderr, o.stderr_tail, o.stderr_total) == ("", "", 0)


@pytest.mark.serial  # asserts a wall-clock time
def test_without_pidfd_exit_orphans_and_deadline_still_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where pidfd_open is missing (macOS, old Linux) the leader's exit is polled instead."""
    monkeypatch.delattr(os, "pidfd_open", raising=False)
    o = run_command(
        ["sh", "-c", "echo out; echo err >&2; exit 3"], cwd=str(tmp_path), timeout=5, cap=100
    )
    assert (o.exit_code, o.stdout, o.stderr) == (3, "out\n", "err\n")

    started = time.monotonic()
    o = run_command(["sh", "-c", "sleep 30 & echo started"], cwd=str(tmp_path), timeout=10, cap=100)
    assert o.exit_code == 0 and o.orphans_killed and o.stdout == "started\n"
    assert time.monotonic() - started < 5

    o = run_command(
        ["sh", "-c", "exec >/dev/null 2>&1; sleep 30"], cwd=str(tmp_path), timeout=0.5, cap=100
    )
    assert o.timed_out and o.exit_code is None


def test_a_process_that_cannot_be_killed_is_reported_as_running_never_as_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root every process can be killed, so a process of another user that this one may
    not signal cannot exist here: ``os.kill`` refusing (PermissionError) stands in for it
    (labelled stand-in, the only one in this file)."""
    from kli.tools.process import runner

    real_kill = os.kill
    refused: set[int] = set()

    def kill(pid: int, sig: int) -> None:  # the processes of "another user": 102.1's
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                theirs = b"102.1" in fh.read()
        except OSError:
            theirs = False
        if theirs:
            refused.add(pid)
            raise PermissionError(1, "Operation not permitted")
        real_kill(pid, sig)

    o = None
    try:
        monkeypatch.setattr(runner.os, "kill", kill)
        monkeypatch.setattr(runner, "TREE_KILL_ROUNDS", 3)
        o = run_command(["sh", "-c", "setsid sleep 102.1 & echo started"], cwd=str(tmp_path),
                        timeout=10, cap=100)
    finally:
        monkeypatch.setattr(runner.os, "kill", real_kill)
        for pid in refused:
            with contextlib.suppress(ProcessLookupError):
                real_kill(pid, signal.SIGKILL)
    assert o is not None and o.orphans_killed
    assert o.survivors and set(o.survivors) <= refused
    note = o.kill_note() or ""
    assert "could NOT be killed and are still running" in note


def test_a_tree_whose_group_is_not_known_yet_never_signals_this_process_group() -> None:
    """``killpg(0, …)`` signals the caller's own group: a tree not yet given its leader's pid
    must send nothing there. Checked in a forked child in a group of its own."""
    from kli.tools.process.runner import Tree

    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setpgid(0, 0)
            tree = Tree(b"never-used-token")
            tree.signal(signal.SIGTERM)
            tree.finish()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


@pytest.mark.serial  # asserts a wall-clock time
def test_a_cancel_from_another_thread_kills_the_whole_tree_and_reports_cancelled(
        tmp_path: Path) -> None:
    import threading

    cancel = threading.Event()
    pids = tmp_path / "pids"
    # a child in the group and one that left it (setsid): both must go
    script = f"sleep 100 & echo $! > {pids}; setsid sleep 100 & echo $! >> {pids}; wait"
    threading.Timer(0.5, cancel.set).start()
    started = time.monotonic()
    o = run_command(["bash", "-c", script], cwd=str(tmp_path), timeout=60, cap=100,
                    cancel=cancel)
    assert o.cancelled and not o.timed_out and o.exit_code is None
    assert time.monotonic() - started < 5
    children = [int(p) for p in pids.read_text().split()]
    assert len(children) == 2 and not any(_alive(p) for p in children), children


def test_a_run_cancelled_before_it_starts_starts_nothing(tmp_path: Path) -> None:
    import threading

    cancel = threading.Event()
    cancel.set()
    o = run_command(["sh", "-c", f"touch {tmp_path / 'ran'}"], cwd=str(tmp_path), timeout=5,
                    cap=100, cancel=cancel)
    assert o.cancelled and o.exit_code is None and not (tmp_path / "ran").exists()


def test_the_cancel_of_the_calling_context_is_the_default(tmp_path: Path) -> None:
    import threading

    from kli.tools.process.runner import CANCEL

    cancel = threading.Event()
    token = CANCEL.set(cancel)
    try:
        threading.Timer(0.3, cancel.set).start()
        o = run_command(["sh", "-c", "sleep 30"], cwd=str(tmp_path), timeout=60, cap=100)
    finally:
        CANCEL.reset(token)
    assert o.cancelled
    plain = run_command(["sh", "-c", "echo ok"], cwd=str(tmp_path), timeout=5, cap=100)
    assert not plain.cancelled and plain.stdout == "ok\n"
