"""Whole-or-nothing under an interrupt (in process): a SIGINT at a random moment of a two-file
edit leaves both files old or both new, and the result says which (issue 18; the kernel-level
run is tests/kernel/test_commit_interrupt.py)."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kli.tools import Workspace
from kli.tools.core import interrupts
from kli.tools.file.anchors import line_hash
from kli.tools.file.firstpass import binaries


@pytest.fixture(autouse=True)
def _no_section_left_open_on_this_thread() -> None:
    """A critical section an earlier test on this worker left open on this thread makes every
    later ``deferred()`` here a nested one, which defers nothing (seen once on an xdist worker,
    never alone): it is closed first, and named in a warning so it can be found."""
    ident = threading.get_ident()
    with interrupts._lock:
        left = interrupts._held.pop(ident, None)
    if left is not None:
        warnings.warn(f"an earlier test left interrupts.deferred() open on this thread "
                      f"(holding {left!r})", stacklevel=1)


BODY = "".join(f"line {i} of a file big enough that its commit takes a while\n" for i in range(4000))


def _interrupt_after(delay: float) -> threading.Thread:
    main = threading.main_thread().ident
    assert main is not None

    def fire() -> None:
        end = time.perf_counter() + delay
        while time.perf_counter() < end:
            pass
        signal.pthread_kill(main, signal.SIGINT)

    t = threading.Thread(target=fire, daemon=True)
    t.start()
    return t


def _edit_once(ws: Workspace, root: Path, i: int) -> tuple[bool, str | None, list[str]]:
    for name in ("a.txt", "b.txt"):
        (root / name).write_text(f"old {i}\n" + BODY)
        ws.call("read", {"path": name, "start": 1, "end": 1})
    patch = "".join(
        f"@@ {name}\n= 1:{line_hash(f'old {i}')}\n~new {i}\n" for name in ("a.txt", "b.txt")
    )
    r = ws.call("edit", {"input": patch})
    return r.ok, r.details.get("error"), list(r.details.get("written") or [])


@pytest.mark.timeout(300)
def test_an_interrupt_at_any_moment_of_a_two_file_edit_leaves_no_partial_state(
    ws: Workspace, root: Path
) -> None:
    # How long one edit takes here, to spread the interrupts over it.
    began = time.perf_counter()
    for i in range(5):
        assert _edit_once(ws, root, i)[0]
    span = (time.perf_counter() - began) / 5
    rng = random.Random(18)
    partial = unexplained = interrupted = 0
    for i in range(300):
        delay = rng.uniform(0, span * 1.2)
        firing = None
        try:
            firing = _interrupt_after(delay)
            ok, error, written = _edit_once(ws, root, i)
            firing.join()
            time.sleep(0.0005)  # a late signal lands here, outside the call
        except KeyboardInterrupt:  # landed outside the call (writing the test files)
            if firing is not None:
                firing.join()
            continue
        states = {(root / n).read_text().split("\n", 1)[0] for n in ("a.txt", "b.txt")}
        if len(states) != 1:
            partial += 1
            continue
        (state,) = states
        if error == "interrupted":
            interrupted += 1
        # The result says what is on disk: written (ok, or interrupted after the commit) → new.
        says_new = ok or sorted(written) == ["a.txt", "b.txt"]
        if says_new != (state == f"new {i}"):
            unexplained += 1
    assert partial == 0
    assert unexplained == 0
    assert interrupted > 0, "no interrupt landed inside a call: the test did not test"
    assert not [n for n in os.listdir(root) if n.endswith(".kli-tmp")]


def test_a_signal_in_a_critical_section_is_delivered_when_it_ends() -> None:
    seen: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts.deferred():
            signal.raise_signal(signal.SIGINT)
            seen.append("section ran to its end")
    assert seen == ["section ran to its end"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _signal_landing_at(monkeypatch: pytest.MonkeyPatch, nth: int) -> None:
    """The ``nth`` handler swap of a section from now finds a SIGINT waiting (as the real
    ``signal.signal`` would: it runs pending handlers before it changes anything) and raises
    as it would."""
    real = interrupts._set_handler
    calls = [0]

    def landing(sig: int, handler: Any) -> Any:
        calls[0] += 1
        if calls[0] == nth:
            raise KeyboardInterrupt
        return real(sig, handler)

    monkeypatch.setattr(interrupts, "_set_handler", landing)


def test_an_interrupt_as_a_section_begins_leaves_no_section_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = {s: signal.getsignal(s) for s in interrupts.DEFERRED_SIGNALS}
    _signal_landing_at(monkeypatch, 2)  # after SIGINT's handler was swapped, before the next
    with pytest.raises(KeyboardInterrupt):
        with interrupts.deferred():
            pytest.fail("the section's body ran although its entry was interrupted")
    monkeypatch.undo()
    assert threading.get_ident() not in interrupts._held
    assert {s: signal.getsignal(s) for s in interrupts.DEFERRED_SIGNALS} == before
    # The next section defers again.
    seen: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts.deferred():
            signal.raise_signal(signal.SIGINT)
            seen.append("deferred")
    assert seen == ["deferred"]


def test_an_interrupt_as_a_section_ends_leaves_no_section_open_nor_a_signal_swallowed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(KeyboardInterrupt):
        with interrupts.deferred():
            _signal_landing_at(monkeypatch, 1)  # the first handler put back: SIGINT's
    monkeypatch.undo()
    assert threading.get_ident() not in interrupts._held
    # SIGINT's handler is still the section's recorder: it passes the signal on, as it was.
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
        for _ in range(1000):  # the handler runs at a bytecode boundary
            pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    seen: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts.deferred():
            signal.raise_signal(signal.SIGINT)
            seen.append("deferred")
    assert seen == ["deferred"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_async_exception_sent_to_a_thread_in_a_section_waits_for_its_end() -> None:
    class Stop(Exception):
        pass

    ready, sent = threading.Event(), threading.Event()
    log: list[str] = []

    def worker() -> None:
        try:
            with interrupts.deferred():
                ready.set()
                sent.wait(5)
                for _ in range(200_000):  # bytecodes: an undeferred exception lands here
                    pass
                log.append("section finished")
        except Stop:
            log.append("stopped after")

    t = threading.Thread(target=worker)
    t.start()
    ready.wait(5)
    assert t.ident is not None
    interrupts.raise_in_thread(t.ident, Stop)
    sent.set()
    t.join(10)
    assert log == ["section finished", "stopped after"]


def test_an_interrupted_search_answers_a_result_saying_what_was_stopped(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(300):
        (root / f"f{i}.txt").write_text("x" * 3000 + "\n")
    # A backtracking pattern matched in Python: the scan is slow enough to be stopped. (A
    # native first pass never backtracks and settles it at once: the search would end before
    # the interrupt, which would then land in the test itself — a clean-clone run met that.)
    monkeypatch.setattr(binaries, "locate", lambda jail: (None, "switched off by the test"))
    firing = _interrupt_after(0.05)
    try:
        r = ws.call("search", {"pattern": "(x+x+)+y", "path": "**/*.txt"})
        firing.join()
    except KeyboardInterrupt:  # a failure of this test, not a stop of the whole run
        pytest.fail("the search ended before the interrupt arrived")
    assert not r.ok and r.details["error"] == "interrupted"
    assert r.text.startswith("interrupted: search was stopped")
    assert "changes nothing" in r.text


def test_a_deadline_alarm_in_a_critical_section_is_delivered_by_its_own_handler_after() -> None:
    class Deadline(Exception):
        pass

    def on_alarm(signum: int, frame: object) -> None:
        raise Deadline

    previous = signal.signal(signal.SIGALRM, on_alarm)
    log: list[str] = []
    try:
        with pytest.raises(Deadline):
            with interrupts.deferred():
                signal.setitimer(signal.ITIMER_REAL, 0.01)
                end = time.monotonic() + 0.2
                while time.monotonic() < end:  # the alarm fires in here, and waits
                    pass
                log.append("section ran to its end")
        assert log == ["section ran to its end"]
        assert signal.getsignal(signal.SIGALRM) is on_alarm
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_an_interrupt_while_the_settings_are_read_is_a_result_not_an_exception(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workspace.call never raises: a KeyboardInterrupt before the tool runs (arguments checked,
    settings read) answers as one during the run does."""

    def interrupted_load() -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(ws._settings, "load", interrupted_load)
    r = ws.call("search", {"pattern": "x", "path": "**/*.txt"})
    assert not r.ok and r.details["error"] == "interrupted"
    assert r.text.startswith("interrupted: search was stopped")
    assert "changes nothing" in r.text


def test_an_interrupt_landing_as_a_finished_edit_returns_says_the_change_was_written(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kli.tools.core import workspace

    real = workspace.imports.guarded

    @contextlib.contextmanager
    def guarded_then_interrupted(where: str) -> Iterator[None]:
        with real(where):
            yield
        raise KeyboardInterrupt  # the stop button, pressed as the call's blocks are left

    (root / "a.txt").write_text("old\n")
    ws.call("read", {"path": "a.txt"})
    monkeypatch.setattr(workspace.imports, "guarded", guarded_then_interrupted)
    r = ws.call("edit", {"input": f"@@ a.txt\n= 1:{line_hash('old')}\n~new\n"})
    assert (root / "a.txt").read_text() == "new\n"
    assert r.details["error"] == "interrupted" and r.details["written"] == ["a.txt"]
    assert "already written" in r.text
