"""An interrupt arriving while the kernel sends a message leaves the message whole.

A message is several zmq frames sent one at a time; a KeyboardInterrupt between two of them
left a partial message queued, the next message's frames were appended to it and the client
rejected the result ("Invalid Signature"), which CI met under tests/kernel/test_commit_interrupt.
Here a real SIGINT is raised between the first and second frame of a real ``Session.send`` on
a real zmq socket pair, so the test does not depend on timing."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from typing import Any

import pytest
import zmq
from jupyter_client.session import Session

from kli.kernel.kernel import _whole_on_sigint


class _InterruptedAfterFirstFrame:
    """A socket whose multipart send is interrupted once, after its first frame (pyzmq's own
    ``send_multipart`` sends frame by frame the same way)."""

    def __init__(self, socket: zmq.Socket[bytes]) -> None:
        self.socket = socket
        self.armed = True

    def send_multipart(self, frames: list[Any], copy: bool = True, **_: Any) -> None:
        for i, frame in enumerate(frames):
            last = i == len(frames) - 1
            self.socket.send(frame, 0 if last else zmq.SNDMORE, copy=copy)
            if self.armed:
                self.armed = False
                signal.raise_signal(signal.SIGINT)


@pytest.fixture
def pair() -> Iterator[tuple[zmq.Socket[bytes], zmq.Socket[bytes]]]:
    ctx = zmq.Context()
    out, into = ctx.socket(zmq.PAIR), ctx.socket(zmq.PAIR)
    out.bind("inproc://whole")
    into.connect("inproc://whole")
    yield out, into
    out.close(linger=0)
    into.close(linger=0)
    ctx.term()


def _received(session: Session, socket: zmq.Socket[bytes]) -> list[str]:
    types = []
    while socket.poll(200):
        _, msg = session.recv(socket, mode=0)
        assert msg is not None
        types.append(msg["header"]["msg_type"])
    return types


def test_an_interrupt_during_a_send_is_raised_once_the_message_is_whole(
    pair: tuple[zmq.Socket[bytes], zmq.Socket[bytes]],
) -> None:
    out, into = pair
    sender, receiver = Session(key=b"secret"), Session(key=b"secret")
    send = _whole_on_sigint(sender.send)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            send(_InterruptedAfterFirstFrame(out), "execute_reply", {"status": "ok"})
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        send(out, "status", {"execution_state": "idle"})
    finally:
        signal.signal(signal.SIGINT, previous)
    assert _received(receiver, into) == ["execute_reply", "status"]


def test_the_interrupted_send_garbles_the_stream_without_the_guard(
    pair: tuple[zmq.Socket[bytes], zmq.Socket[bytes]],
) -> None:
    """The guard is what makes the difference: the same interrupt without it garbles."""
    out, into = pair
    sender, receiver = Session(key=b"secret"), Session(key=b"secret")
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            sender.send(_InterruptedAfterFirstFrame(out), "execute_reply", {"status": "ok"})
        sender.send(out, "status", {"execution_state": "idle"})
    finally:
        signal.signal(signal.SIGINT, previous)
    with pytest.raises(ValueError):
        _received(receiver, into)
