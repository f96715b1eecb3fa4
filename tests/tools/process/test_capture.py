"""capture_thread_output: this thread's prints only, bounded, streams restored."""

from __future__ import annotations

import sys
import threading

import pytest

from kli.tools.process.capture import capture_thread_output


def test_captures_this_thread_and_forwards_others(capsys: pytest.CaptureFixture[str]) -> None:
    original = sys.stdout
    with capture_thread_output(100) as (out, err):
        print("inside")
        print("warn", file=sys.stderr)
        t = threading.Thread(target=lambda: print("from-other-thread"))
        t.start()
        t.join()
    assert out.head == "inside\n" and err.head == "warn\n"
    assert sys.stdout is original
    assert "from-other-thread" in capsys.readouterr().out


def test_cap_counts_and_drops() -> None:
    with capture_thread_output(10, 4) as (out, _err):
        sys.stdout.write("0123456789" * 5)
    assert out.total == 50 and out.kept() == ("012345", "6789")


def test_nested_capture_restores_the_outer_one() -> None:
    with capture_thread_output(100) as (outer, _):
        print("a")
        with capture_thread_output(100) as (inner, _):
            print("b")
        print("c")
    assert outer.head == "a\nc\n" and inner.head == "b\n"


def test_concurrent_captures_on_two_threads_stay_apart() -> None:
    results: dict[str, str] = {}
    barrier = threading.Barrier(2)

    def work(tag: str) -> None:
        with capture_thread_output(10_000) as (out, _):
            barrier.wait()
            for _ in range(200):
                print(tag)
        results[tag] = out.head

    threads = [threading.Thread(target=work, args=(t,)) for t in ("A", "B")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {"A": "A\n" * 200, "B": "B\n" * 200}
