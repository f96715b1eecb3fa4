"""The first pass's one driver (kli.tools.file.firstpass.FirstPass) on its own: what it says
(details.engine_note) in each state, and what it answers. search and ws_grep through it:
test_search_rg.py and test_kli_scan.py."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.file.firstpass import FirstPass, binaries, driver
from kli.tools.file.firstpass.rust_regex import translate

from .test_search_rg import ENGINES, _engine


def _first(ws: Workspace, pattern: str = "foo") -> FirstPass:
    return FirstPass(ws.jail, translate(pattern, 0), 2 * 1024 * 1024)


def test_a_pass_never_started_says_one_file_was_searched_directly(ws: Workspace) -> None:
    first = _first(ws)
    assert first.finish(time.monotonic() + 5, trust_log=True) is None
    assert first.note == driver.ONE_FILE and not first.pending


def test_a_pattern_without_translation_starts_nothing_and_says_why(ws: Workspace) -> None:
    first = FirstPass(ws.jail, None, 1024)
    assert first.start("", None) is None and not first.pending
    assert first.note == driver.NO_TRANSLATION


def test_an_engine_that_cannot_serve_is_named_in_the_note(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(binaries, "locate", lambda jail: (None, "switched off by the test"))
    first = _first(ws)
    assert first.start("", None) is None
    assert first.note == "switched off by the test"
    first.walk_stopped()  # nothing was running: the reason it never started stays
    assert first.note == "switched off by the test"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_started_pass_answers_counts_and_verdicts_or_is_stopped_with_a_note(
        ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch, engine: str) -> None:
    _engine(monkeypatch, engine)
    (root / "a.txt").write_text("foo\nfoo\nbar\n")
    (root / "b.bin").write_bytes(b"\0foo\n")
    first = _first(ws)
    assert first.start("", None) is not None and first.pending
    answer = first.finish(time.monotonic() + 30, trust_log=True)
    assert answer is not None and not first.pending
    assert answer.counts.lines["a.txt"] == 2 and answer.counts.program == engine
    assert answer.exact and answer.verdict("b.bin") == "binary"
    assert answer.verdict("a.txt") is None  # a text file: read it (no verdict)
    if engine == "kli-scan":
        assert first.note == ""
    else:  # why kli-scan did not serve (passed by, or not built)
        assert first.note == answer.counts.note and binaries.SCAN in first.note
    stopped = _first(ws)
    stopped.start("", None)
    stopped.walk_stopped()
    assert stopped.note == driver.WALK_STOPPED and not stopped.pending
    ended = _first(ws)
    ended.start("", None)
    ended.close()
    assert ended.note == driver.ENDED_FIRST and not ended.pending
