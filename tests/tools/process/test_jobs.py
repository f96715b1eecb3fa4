"""Background jobs (tools/process/jobs.py and the bash_output / bash_kill / bash_jobs tools):
incremental reads under the capture caps, limits, errors that say how to retry."""

from __future__ import annotations

import time
from typing import Any

import psutil
import pytest

from kli.tools import Workspace
from kli.tools.process import jobs
from kli.tools.process.jobs import JobStream


def test_take_new_returns_only_what_is_new_and_counts_the_dropped_middle() -> None:
    s = JobStream(10, 4)  # head 6, tail 4
    s.add("abc")
    assert s.take_new() == ("abc", "", 3)
    s.add("defghij")
    assert s.take_new() == ("defghij", "", 7)  # fits head + tail: nothing dropped
    s.add("klmnopqrstuvwxyz")
    assert s.take_new() == ("", "wxyz", 16)  # 12 of the 16 were dropped, the last 4 kept
    s.add("12")
    assert s.take_new() == ("12", "", 2)
    assert s.take_new() == ("", "", 0)


def test_take_new_from_the_start_of_an_overflowed_stream_gives_head_and_tail() -> None:
    s = JobStream(10, 4)
    s.add("0123456789abcdefgh")
    assert s.take_new() == ("012345", "efgh", 18)


def _wait_exit(ws: Workspace, job: str) -> str:
    texts = []
    for _ in range(50):
        r = ws.call("bash_output", {"job_id": job, "wait": 1})
        texts.append(r.text)
        if r.details["status"] != "running":
            return "\n".join(texts)
    raise AssertionError("job did not exit")


def test_background_output_past_the_cap_is_counted_not_kept(ws: Workspace) -> None:
    r = ws.call("bash", {"command": "yes x | head -c 3000000", "run_in_background": True})
    text = _wait_exit(ws, r.details["job_id"])
    listed = ws.call("bash_jobs", {})
    facts = listed.details["jobs"][0]
    assert facts["stdout_chars"] == 3_000_000
    assert "dropped while running" in text
    assert "shown head and tail" in text


def test_a_job_with_a_timeout_is_killed_and_says_so(ws: Workspace) -> None:
    r = ws.call("bash", {"command": "sleep 30", "run_in_background": True, "timeout": 1})
    assert "killed after 1 s" in r.text
    text = _wait_exit(ws, r.details["job_id"])
    assert "timed out after 1 s" in text


def test_input_reaches_a_background_job(ws: Workspace) -> None:
    r = ws.call("bash", {"command": "cat", "input": "fed\n", "run_in_background": True})
    assert "fed" in _wait_exit(ws, r.details["job_id"])


def test_too_many_running_jobs_is_an_error_naming_bash_kill(ws: Workspace) -> None:
    started = [ws.call("bash", {"command": "sleep 30", "run_in_background": True})
               for _ in range(jobs.MAX_RUNNING_JOBS)]
    assert all(r.ok for r in started)
    extra = ws.call("bash", {"command": "sleep 30", "run_in_background": True})
    assert not extra.ok and extra.details["error"] == "too_many_jobs"
    assert "bash_kill" in extra.text and "Nothing was run" in extra.text
    ws.close()
    for r in started:
        assert not psutil.pid_exists(r.details["pid"]) or \
            psutil.Process(r.details["pid"]).status() == psutil.STATUS_ZOMBIE


def test_killing_an_exited_job_is_not_an_error(ws: Workspace) -> None:
    r = ws.call("bash", {"command": "true", "run_in_background": True})
    _wait_exit(ws, r.details["job_id"])
    killed = ws.call("bash_kill", {"job_id": r.details["job_id"]})
    assert killed.ok and "nothing left to stop" in killed.text


def test_closing_a_session_kills_its_jobs_and_not_others(ws: Workspace) -> None:
    mine, other = ws.open_session("mine"), ws.open_session("other")
    a = ws.call("bash", {"command": "sleep 30", "run_in_background": True}, mine)
    b = ws.call("bash", {"command": "sleep 30", "run_in_background": True}, other)
    ws.close_session(mine.id)
    deadline = time.monotonic() + 3
    while psutil.pid_exists(a.details["pid"]) and time.monotonic() < deadline:
        try:
            if psutil.Process(a.details["pid"]).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.05)
    assert psutil.Process(b.details["pid"]).is_running()
    ws.close_session(other.id)


def _running_with_arg(arg: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        if arg in (proc.info["cmdline"] or []) and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(proc)
    return found


def test_bash_kill_reaches_what_left_the_jobs_process_group(ws: Workspace) -> None:
    """Before, a ``setsid`` child of a job escaped bash_kill (and the session's end)."""
    arg = "103.1"
    r = ws.call("bash", {"command": f"setsid sleep {arg} & sleep {arg}", "run_in_background": True})
    try:
        deadline = time.monotonic() + 3
        while len(_running_with_arg(arg)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_running_with_arg(arg)) == 2
        assert ws.call("bash_kill", {"job_id": r.details["job_id"]}).ok
        deadline = time.monotonic() + 3
        while _running_with_arg(arg) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _running_with_arg(arg) == []
    finally:
        for proc in _running_with_arg(arg):
            proc.kill()


def test_a_job_ending_while_its_output_is_read_is_answered_running_and_the_next_read_ends_it(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """One moment for the whole answer: the status and the text agree. Before, a job that
    ended while its output was read got a text saying running and details saying exited, so a
    reader that stops at the exit never read the rest (a clean-clone run met it)."""
    r = ws.call("bash", {"command": "echo first; sleep 0.5; echo last", "run_in_background": True})
    job = jobs.session_jobs(ws.default_session)[r.details["job_id"]]
    deadline = time.monotonic() + 10
    while job.stdout.total == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    real = JobStream.take_new

    def read_while_it_ends(self: JobStream) -> Any:
        got = real(self)
        job.done.wait(10)  # the job ends while this read takes its output
        return got

    monkeypatch.setattr(JobStream, "take_new", read_while_it_ends)
    first = ws.call("bash_output", {"job_id": job.id})
    monkeypatch.undo()
    assert first.details["status"] == "running" and "is running" in first.text, first.details
    assert "first" in first.text and "last" not in first.text
    rest = ws.call("bash_output", {"job_id": job.id})
    assert rest.details["status"] == "exited" and "exited" in rest.text
    assert "last" in rest.text
