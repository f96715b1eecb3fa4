"""ws_grep: regex search, literal fallback announced, glob= and path=, the 50-hit cap."""

from __future__ import annotations

from pathlib import Path

import pytest

from kli.tools import Workspace


@pytest.fixture
def tree(root: Path) -> Path:
    (root / "src").mkdir()
    (root / "src/a.py").write_text("def main():\n    return helper(1)\n\ndef helper(x):\n    return x\n")
    (root / "src/b.js").write_text("function helper(y) { return y }\n")
    (root / "README.md").write_text("call helper( to help\n")
    (root / "blob.bin").write_bytes(b"helper\x00\x01")
    return root


def test_regex_hits_are_path_line_text(ws: Workspace, tree: Path) -> None:
    r = ws.call("ws_grep", {"pattern": r"def \w+\("})
    assert r.ok
    assert r.text.splitlines() == ["src/a.py:1: def main():", "src/a.py:4: def helper(x):"]


def test_invalid_regex_falls_back_to_literal_and_says_so(ws: Workspace, tree: Path) -> None:
    r = ws.call("ws_grep", {"pattern": "helper("})
    assert r.ok and r.details["literal"]
    assert r.text.startswith("[pattern is not a valid regular expression (")
    assert "searched for it as a literal string instead]" in r.text
    assert "README.md:1: call helper( to help" in r.text
    assert "src/a.py:2:     return helper(1)" in r.text


def test_glob_and_path_narrow(ws: Workspace, tree: Path) -> None:
    r = ws.call("ws_grep", {"pattern": "helper", "glob": "*.js"})
    assert r.text.splitlines() == ["src/b.js:1: function helper(y) { return y }"]
    r = ws.call("ws_grep", {"pattern": "helper", "path": "src/a.py"})
    assert [ln.split(":")[0] for ln in r.text.splitlines()] == ["src/a.py", "src/a.py"]
    r = ws.call("ws_grep", {"pattern": "helper", "path": "src", "glob": "src/**/*.py"})
    assert all(ln.startswith("src/a.py") for ln in r.text.splitlines())


def test_binary_files_are_skipped(ws: Workspace, tree: Path) -> None:
    assert "blob.bin" not in ws.call("ws_grep", {"pattern": "helper"}).text


def test_cap_is_50_hits_and_announced(ws: Workspace, root: Path) -> None:
    (root / "many.txt").write_text("".join(f"hit {i}\n" for i in range(80)))
    r = ws.call("ws_grep", {"pattern": "hit"})
    hits = [ln for ln in r.text.splitlines() if ln.startswith("many.txt:")]
    assert len(hits) == 50 and r.details["capped"]
    assert "[50-hit cap reached: showing the first 50 hits; more matches exist" in r.text


def test_no_match_is_explicit(ws: Workspace, tree: Path) -> None:
    r = ws.call("ws_grep", {"pattern": "zzz_nothing"})
    assert r.ok and r.text.startswith("(no matches for 'zzz_nothing' in the project)")


def test_ignore_case(ws: Workspace, tree: Path) -> None:
    assert ws.call("ws_grep", {"pattern": "HELPER", "ignore_case": True}).details["count"] >= 3


def test_description_says_python_re_stands_in_for_re2(ws: Workspace) -> None:
    spec = next(s for s in ws.specs("slmcode") if s["name"] == "ws_grep")
    assert "Python `re`" in spec["description"] and "RE2" in spec["description"]


def test_missing_path_and_jail(ws: Workspace, tree: Path) -> None:
    assert not ws.call("ws_grep", {"pattern": "x", "path": "nope"}).ok
    assert not ws.call("ws_grep", {"pattern": "x", "path": "../"}).ok


def test_anchors_match_at_every_line(ws: Workspace, tree: Path) -> None:
    r = ws.call("ws_grep", {"pattern": r"^def helper", "glob": "*.py"})
    assert r.text.splitlines() == ["src/a.py:4: def helper(x):"]
    r = ws.call("ws_grep", {"pattern": r"\(1\)$"})
    assert r.text.splitlines() == ["src/a.py:2:     return helper(1)"]
    r = ws.call("ws_grep", {"pattern": r"\Areturn", "path": "src/a.py"})
    assert r.details["count"] == 0  # \A is the line start: no line starts with "return"
    r = ws.call("ws_grep", {"pattern": r"\A    return x\Z", "path": "src/a.py"})
    assert r.text.splitlines() == ["src/a.py:5:     return x"]
