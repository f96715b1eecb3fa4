"""Stale means stale: an anchor is the model's handle, not the proof.

The property (hypothesis): a file is read (whole or a window), changed behind the session's back
by one to three random splices (lines replaced, inserted or removed anywhere), then edited with random
anchored ops built from what was shown. An edit that applies must have targets the change left
in place: some splice turning the old text into the new one leaves every target line before it
(or after it, when the line count is unchanged). The examples below are the cases measured in
issue 18: a changed line that keeps its two-hex-digit hash, a block shifted so a look-alike line
stands at the anchored number, and anchors on lines never shown.
"""

from __future__ import annotations

import os
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kli.tools import Workspace
from kli.tools.core.textfile import split_lines
from kli.tools.file.anchors import line_hash

# Few distinct lines, so look-alikes (blank lines, braces, `return x`) are everywhere.
LINE = st.sampled_from(["", "}", "x", "return x", "  }", "a", "b"])


def _anchor(lines: list[str], n: int) -> str:
    return f"{n}:{line_hash(lines[n - 1])}"


def _explained(old: list[str], new: list[str], targets: set[int]) -> bool:
    """Some single splice old → new leaves every target where it was (brute force)."""
    delta = len(new) - len(old)
    for p in range(min(len(old), len(new)) + 1):
        if old[:p] != new[:p]:
            break
        for s in range(min(len(old), len(new)) - p + 1):
            if s and old[len(old) - s :] != new[len(new) - s :]:
                break
            if all(t <= p or (delta == 0 and t > len(old) - s) for t in targets):
                return True
    return False


@st.composite
def scenario(draw: st.DrawFn) -> tuple[list[str], tuple[int, int], list[str], str, set[int]]:
    old = draw(st.lists(LINE, min_size=1, max_size=14))
    first = draw(st.integers(1, len(old)))
    last = draw(st.integers(first, len(old)))  # the window the session is shown
    new = old
    for _ in range(draw(st.integers(1, 3))):  # one to three concurrent changes, anywhere
        i = draw(st.integers(0, len(new)))
        j = draw(st.integers(i, len(new)))
        new = new[:i] + draw(st.lists(LINE, max_size=4)) + new[j:]
    kind = draw(st.sampled_from(["=", "-", "+", "<"]))
    a = draw(st.integers(first, last))
    if kind in "=-":
        b = draw(st.integers(a, last))
        span = _anchor(old, a) if a == b else f"{_anchor(old, a)}..{_anchor(old, b)}"
        targets = set(range(a, b + 1))
    else:
        span, targets = _anchor(old, a), {a}
    payload = "" if kind == "-" else "~NEW\n"
    return old, (first, last), new, f"@@ f.txt\n{kind} {span}\n{payload}", targets


def _write(path: str, lines: list[str]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("".join(line + "\n" for line in lines))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario())
def test_an_edit_applies_only_when_its_target_lines_are_unchanged(
    case: tuple[list[str], tuple[int, int], list[str], str, set[int]],
) -> None:
    old, (first, last), new, patch, targets = case
    with tempfile.TemporaryDirectory() as root:
        path = os.path.join(root, "f.txt")
        _write(path, old)
        ws = Workspace(root)
        assert ws.call("read", {"path": "f.txt", "start": first, "end": last}).ok
        _write(path, new)
        r = ws.call("edit", {"input": patch})
        with open(path, encoding="utf-8", newline="") as fh:
            disk = split_lines(fh.read())
        if r.ok:
            assert _explained(old, new, targets), (old, new, patch)
            assert r.details["files"][0]["before"] == "".join(x + "\n" for x in new)
        else:
            assert r.details["error"] == "stale", r.text
            assert disk == new  # refused: not a byte changed
        if new == old:
            assert r.ok, r.text  # nothing changed: the edit must apply


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LINE, min_size=2, max_size=10), st.data())
def test_anchors_on_lines_never_shown_are_refused(lines: list[str], data: st.DataObject) -> None:
    n = data.draw(st.integers(2, len(lines)))
    with tempfile.TemporaryDirectory() as root:
        _write(os.path.join(root, "f.txt"), lines)
        ws = Workspace(root)
        assert ws.call("read", {"path": "f.txt", "start": 1, "end": n - 1}).ok
        # The right hash of a line the session never saw: still refused.
        r = ws.call("edit", {"input": f"@@ f.txt\n= {_anchor(lines, n)}\n~NEW\n"})
        assert not r.ok and r.details["error"] == "stale"
        assert "never shown" in r.text


def _same_hash_pair() -> tuple[str, str]:
    """Two one-character-apart lines with the same HH (one change in 256 keeps its hash)."""
    base = "    total = compute(items, limit=10)"
    for i in range(len(base)):
        for c in "abcdefghijklmnopqrstuvwxyz0123456789":
            other = base[:i] + c + base[i + 1 :]
            if other != base and line_hash(other) == line_hash(base):
                return base, other
    raise AssertionError("no same-hash neighbour found")


def test_a_changed_line_that_keeps_its_hash_is_stale(ws: Workspace, root: str) -> None:
    before, after = _same_hash_pair()
    p = os.path.join(str(root), "m.py")
    _write(p, ["def f():", before, "    return total"])
    ws.call("read", {"path": "m.py"})
    _write(p, ["def f():", after, "    return total"])
    r = ws.call("edit", {"input": f"@@ m.py\n= 2:{line_hash(before)}\n~    total = 0\n"})
    assert not r.ok and r.details["error"] == "stale"
    assert "its text does not" in r.text
    with open(p) as fh:
        assert after in fh.read()


def test_an_insert_after_a_brace_that_moved_is_refused(ws: Workspace, root: str) -> None:
    lines = ["function a() {", "  if (x) {", "    one();", "  }", "  if (y) {", "    two();",
             "  }", "}"]
    p = os.path.join(str(root), "m.js")
    _write(p, lines)
    ws.call("read", {"path": "m.js"})
    _write(p, ["// a", "// b", "// c", *lines])  # a person added three lines at the top
    with open(p) as fh:
        assert split_lines(fh.read())[6] == "  }"  # the first block's brace now stands at 7
    r = ws.call("edit", {"input": f"@@ m.js\n+ 7:{line_hash('  }')}\n~  three();\n"})
    assert not r.ok and r.details["error"] == "stale"
    assert "changed since you last read it" in r.text


def test_an_edit_above_a_change_made_elsewhere_still_applies(ws: Workspace, root: str) -> None:
    p = os.path.join(str(root), "m.txt")
    _write(p, ["a", "b", "c", "d", "e"])
    ws.call("read", {"path": "m.txt"})
    _write(p, ["a", "b", "c", "d", "e", "f"])  # appended below the edit
    r = ws.call("edit", {"input": f"@@ m.txt\n= 2:{line_hash('b')}\n~B\n"})
    assert r.ok, r.text
    assert open(p).read() == "a\nB\nc\nd\ne\nf\n"


def test_own_edits_move_the_version_along(ws: Workspace, root: str) -> None:
    p = os.path.join(str(root), "m.txt")
    _write(p, ["a", "b", "c"])
    ws.call("read", {"path": "m.txt"})
    assert ws.call("edit", {"input": f"@@ m.txt\n< 1:{line_hash('a')}\n~top\n"}).ok
    # Lines shifted by the session's own insert: its fresh and kept anchors stay valid.
    r = ws.call("edit", {"input": f"@@ m.txt\n= 4:{line_hash('c')}\n~C\n"})
    assert r.ok, r.text
    assert open(p).read() == "top\na\nb\nC\n"
