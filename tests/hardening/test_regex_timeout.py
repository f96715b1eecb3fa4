"""A pathological regular expression cannot hang ``search`` or ``ws_grep``: the match runs with
a time bound, and the result says the pattern ran out of time and how to retry.

Before the fix (Python's ``re``) each of these calls ran for astronomically long inside one C
call; the pytest timeout below would fail them.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kli.tools import Workspace
from kli.tools.core import rx
from kli.tools.core.jail import Jail
from kli.tools.file import search as search_mod
from kli.tools.file import walk as walk_mod
from kli.tools.file.firstpass import binaries
from kli.tools.ws import ws_grep

from .conftest import examples

BUDGET = 1.0
# regex counts CPU seconds; on two busy cores the wall clock runs up to ~3x that.
WALL_BOUND = 4 * BUDGET + 6

EVIL = "(a|aa)+b"


def _python_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the Python matcher's time bound: rg's first pass (which never
    backtracks, and would settle the files below without Python matching them) is off."""
    monkeypatch.setattr(binaries, "locate", lambda jail: (None, "switched off by the test"))


def _tree(root: Path) -> None:
    (root / "ok.txt").write_text("needle here\n")
    (root / "z_long.txt").write_text("start\n" + "a" * 5000 + "\nneedle end\n")


@pytest.mark.timeout(90)
def test_search_with_catastrophic_pattern_stops_in_time_and_says_how_to_retry(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(walk_mod, "MAX_SECONDS", BUDGET)
    _tree(root)
    started = time.monotonic()
    r = ws.call("search", {"pattern": EVIL, "path": "z_long.txt"})
    elapsed = time.monotonic() - started
    assert elapsed < WALL_BOUND, elapsed
    assert r.details["stopped"] == "pattern_time"
    assert f"ran past the {BUDGET:g} s time limit while matching z_long.txt" in r.text
    assert "simpler pattern" in r.text and "narrower path" in r.text
    # The kernel-side state is fine: the next search works normally.
    r2 = ws.call("search", {"pattern": "needle", "path": "."})
    assert r2.ok and r2.details["files_matched"] == 2


@pytest.mark.timeout(90)
def test_search_over_a_glob_keeps_matches_found_before_the_timeout(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(walk_mod, "MAX_SECONDS", BUDGET)
    _python_only(monkeypatch)
    _tree(root)
    (root / "ok.txt").write_text("aab\n")
    started = time.monotonic()
    r = ws.call("search", {"pattern": EVIL, "path": "**/*.txt"})
    assert time.monotonic() - started < WALL_BOUND
    assert "ok.txt (1 matching line)" in r.text  # searched first (sorted), kept
    assert r.details["stopped"] == "pattern_time"


@pytest.mark.timeout(90)
@pytest.mark.skipif(binaries.locate(Jail("/nonexistent"))[0] is None and not os.environ.get("CI"),
                    reason="rg not available")
def test_search_over_a_glob_with_rg_settles_a_catastrophic_pattern_in_full(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rg never backtracks: its counts settle the files Python would have timed out on, and
    only the shown file (ok.txt) is matched in Python."""
    monkeypatch.setattr(walk_mod, "MAX_SECONDS", BUDGET)
    _tree(root)
    (root / "ok.txt").write_text("aab\n")
    started = time.monotonic()
    r = ws.call("search", {"pattern": EVIL, "path": "**/*.txt"})
    assert time.monotonic() - started < WALL_BOUND
    assert r.details["engine"] == "rg" and r.details["stopped"] is None
    assert r.text == "ok.txt (1 matching line)\n*1:" + r.text.split("*1:")[1]
    assert r.details["files_matched"] == 1 and r.details["searched"] == 2


@pytest.mark.timeout(90)
def test_ws_grep_with_catastrophic_pattern_stops_in_time_and_says_how_to_retry(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ws_grep, "MAX_SECONDS", BUDGET)
    _python_only(monkeypatch)
    _tree(root)
    started = time.monotonic()
    r = ws.call("ws_grep", {"pattern": EVIL})
    assert time.monotonic() - started < WALL_BOUND
    assert f"ran past the {BUDGET:g} s time limit while matching z_long.txt" in r.text
    assert "simpler pattern" in r.text


def test_invalid_pattern_still_reports_re_syntax_errors(ws: Workspace, root: Path) -> None:
    _tree(root)
    r = ws.call("search", {"pattern": "foo(", "path": "ok.txt"})
    assert not r.ok and "missing ), unterminated subpattern at position 3" in r.text
    g = ws.call("ws_grep", {"pattern": "foo("})
    assert "searched for it as a literal string" in g.text


_ATOMS = st.sampled_from(["a", "b", ".", "\\s", "\\n", "^", "$", "a*", "b+", "(?<=a)", "(?=b)",
                          "[ab]", "|", "\\b", " ", "a?", "(ab)+", "\\w*"])
_TEXT = st.lists(st.sampled_from(["a", "b", " ", "\n", "ab", "\r\n", "é"]), max_size=60).map("".join)


@settings(max_examples=examples(4))
@given(st.lists(_ATOMS, min_size=1, max_size=5).map("".join), _TEXT, st.integers(1, 5))
def test_timed_line_matching_finds_exactly_the_lines_re_finds(pattern: str, text: str,
                                                             keep: int) -> None:
    """The time-bounded scan (regex + one shared finditer) reports the same lines as the plain
    ``re`` scan it replaced, for every pattern and text."""
    try:
        plain = re.compile(pattern, re.MULTILINE)
    except re.error:
        return
    timed = rx.compile(pattern, rx.MULTILINE)
    a, b = search_mod._FileHits(), search_mod._FileHits()
    search_mod.match_lines(plain, text, 0, a, keep)
    search_mod.match_lines(timed, text, 0, b, keep, time.monotonic() + 30)
    assert (a.count, a.hits) == (b.count, b.hits)
