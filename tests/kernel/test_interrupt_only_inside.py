"""The stop button interrupts a tool call's own code, never its reply.

An agent's call runs in a comm message handler on the main thread; a SIGINT that landed after
the call's code ended, while its reply was built or sent, raised out of the handler: ipykernel
logged "KeyboardInterrupt caught in kernel." on the kernel's stderr (met in a clean-clone run
of tests/kernel/test_client.py's timer test) and the reply was lost. Real signals, raised at
the exact point, so nothing depends on timing."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from typing import Any

import pytest

from kli.kernel.kernel import interrupt_only_inside


def _raising(signum: int, frame: Any) -> None:
    signal.default_int_handler(signum, frame)


@pytest.fixture
def quiet() -> Iterator[list[int]]:
    """A quiet handler that records each signal, with SIGINT raising around the test (as
    ipykernel's handler hook leaves it during a message handler)."""
    seen: list[int] = []
    before = signal.signal(signal.SIGINT, _raising)
    yield seen
    signal.signal(signal.SIGINT, before)


def _run(fn: Any, done: Any, seen: list[int]) -> None:
    try:
        interrupt_only_inside(fn, done, raising=_raising, quiet=lambda s, f: seen.append(s))
    except KeyboardInterrupt:  # a failure of this test, not a stop of the whole run
        pytest.fail("the interrupt escaped the call (the comm handler would log it)")


def test_an_interrupt_while_the_reply_is_sent_is_not_raised_and_the_reply_goes_out(
        quiet: list[int]) -> None:
    sent: list[Any] = []

    def done(value: Any, exc: BaseException | None) -> None:
        signal.raise_signal(signal.SIGINT)  # the stop button, as the reply is being sent
        sent.append((value, exc))

    _run(lambda: 42, done, quiet)
    assert sent == [(42, None)]
    assert quiet == [signal.SIGINT]


def test_an_interrupt_while_the_call_runs_interrupts_it_and_the_reply_says_so(
        quiet: list[int]) -> None:
    sent: list[Any] = []

    def fn() -> int:
        signal.raise_signal(signal.SIGINT)
        return 1  # not reached

    _run(fn, lambda value, exc: sent.append((value, type(exc))), quiet)
    assert sent == [(None, KeyboardInterrupt)]
    assert quiet == []


def test_the_handler_in_place_before_the_call_is_put_back(quiet: list[int]) -> None:
    _run(lambda: None, lambda value, exc: None, quiet)
    assert signal.getsignal(signal.SIGINT) is _raising
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
