"""ws_glob: ** at any depth, the 200-hit cap announced, skipped dependency folders, jail."""

from __future__ import annotations

from pathlib import Path

import pytest

from kli.tools import Workspace


def _touch(root: Path, *rels: str) -> None:
    for rel in rels:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(rel + "\n")


@pytest.fixture
def tree(root: Path) -> Path:
    _touch(root, "pkg/a_test.go", "pkg/deep/er/b_test.go", "pkg/c.go", "top_test.go",
           "node_modules/x/y_test.go", ".git/config_test.go")
    return root


def _hits(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if not ln.startswith(("[", "("))][1:]


def test_double_star_spans_any_depth(ws: Workspace, tree: Path) -> None:
    r = ws.call("ws_glob", {"pattern": "pkg/**/*_test.go"})
    assert r.ok
    assert _hits(r.text) == ["pkg/a_test.go", "pkg/deep/er/b_test.go"]
    assert r.text.startswith("2 file(s) match pkg/**/*_test.go:")


def test_star_stays_in_one_folder_and_hints_at_double_star(ws: Workspace, tree: Path) -> None:
    r = ws.call("ws_glob", {"pattern": "*_test.go"})
    assert _hits(r.text) == ["top_test.go"]
    r = ws.call("ws_glob", {"pattern": "*.nothing"})
    assert '(no files match *.nothing) — a pattern without / matches only the top level' in r.text
    assert 'ws_glob {"pattern":"**/*.nothing"}' in r.text


def test_path_narrows_the_search(ws: Workspace, tree: Path) -> None:
    r = ws.call("ws_glob", {"pattern": "**/*.go", "path": "pkg/deep"})
    assert r.details["paths"] == ["pkg/deep/er/b_test.go"]


def test_dependency_folders_are_left_out_and_said_so(ws: Workspace, tree: Path) -> None:
    r = ws.call("ws_glob", {"pattern": "**/*_test.go"})
    assert "node_modules/x/y_test.go" not in r.details["paths"]
    assert "left out 1 match(es) inside dependency/cache folders" in r.text
    assert ".git/config_test.go" not in r.text
    r = ws.call("ws_glob", {"pattern": "node_modules/**/*.go"})
    assert r.details["paths"] == ["node_modules/x/y_test.go"]


def test_cap_is_200_and_announced(ws: Workspace, root: Path) -> None:
    _touch(root, *[f"d/f{i:03d}.txt" for i in range(230)])
    r = ws.call("ws_glob", {"pattern": "**/*.txt"})
    assert len(r.details["paths"]) == 200 and r.details["capped"]
    assert "[200-hit cap reached: showing the first 200 of 230 matches" in r.text


def test_patterns_are_jailed(ws: Workspace) -> None:
    r = ws.call("ws_glob", {"pattern": "../**/*.py"})
    assert not r.ok and "jailed" in r.text


def test_missing_path_is_an_error_naming_it(ws: Workspace, tree: Path) -> None:
    r = ws.call("ws_glob", {"pattern": "**/*.go", "path": "nope"})
    assert not r.ok and "path nope is not a folder" in r.text
