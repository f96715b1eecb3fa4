"""find (and the walk under it): wcmatch glob semantics, symlinks, caps, walk bounds, jail."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.core.jail import Jail
from kli.tools.core.result import ToolError
from kli.tools.file import find as find_mod
from kli.tools.file import walk as walk_mod


def _touch(root: Path, *rels: str) -> None:
    for rel in rels:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(rel + "\n")


def _paths(ws: Workspace, pattern: str) -> list[str]:
    r = ws.call("find", {"pattern": pattern})
    assert r.ok, r.text
    return [line for line in r.text.splitlines() if not line.startswith(("[", "No files"))]


@pytest.fixture
def tree(root: Path) -> Path:
    _touch(
        root,
        "top.py",
        "src/a.py",
        "src/a.lisp",
        "src/deep/er/b.py",
        "src/deep/c.txt",
        "docs/readme.md",
        ".hidden/h.py",
    )
    return root


def test_star_stays_within_one_segment(ws: Workspace, tree: Path) -> None:
    assert _paths(ws, "src/*.py") == ["src/a.py"]
    assert _paths(ws, "*.py") == ["top.py"]


def test_globstar_spans_any_depth_including_zero(ws: Workspace, tree: Path) -> None:
    assert _paths(ws, "src/**/*.py") == ["src/a.py", "src/deep/er/b.py"]
    assert _paths(ws, "**/*.py") == [".hidden/h.py", "src/a.py", "src/deep/er/b.py", "top.py"]


def test_globstar_in_the_middle_of_a_pattern(ws: Workspace, tree: Path) -> None:
    assert _paths(ws, "src/**/er/*.py") == ["src/deep/er/b.py"]
    assert _paths(ws, "**/deep/*") == ["src/deep/c.txt"]


def test_question_mark_class_and_braces(ws: Workspace, tree: Path) -> None:
    assert _paths(ws, "src/a.{py,lisp}") == ["src/a.lisp", "src/a.py"]
    assert _paths(ws, "src/a.[l]isp") == ["src/a.lisp"]
    assert _paths(ws, "to?.py") == ["top.py"]


def test_only_files_are_listed_never_directories(ws: Workspace, tree: Path) -> None:
    assert "src" not in _paths(ws, "*")
    assert "src/deep" not in _paths(ws, "src/**")


def test_results_are_sorted(ws: Workspace, root: Path) -> None:
    _touch(root, "b.txt", "a.txt", "c/a.txt", "B.txt")
    paths = _paths(ws, "**/*.txt")
    assert paths == sorted(paths)


def test_symlink_to_file_matches(ws: Workspace, tree: Path) -> None:
    (tree / "link.py").symlink_to("src/a.py")
    assert "link.py" in _paths(ws, "*.py")


def test_symlinked_directory_is_not_descended(ws: Workspace, tree: Path) -> None:
    (tree / "srclink").symlink_to("src", target_is_directory=True)
    paths = _paths(ws, "**/*.py")
    assert not any(p.startswith("srclink/") for p in paths)
    assert "srclink" not in _paths(ws, "*")


def test_symlink_to_file_outside_root_is_not_listed(
    ws: Workspace, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("x\n")
    (root / "out.py").symlink_to(outside)
    _touch(root, "in.py")
    assert _paths(ws, "*.py") == ["in.py"]


def test_vcs_folders_are_skipped_unless_named(ws: Workspace, tree: Path) -> None:
    _touch(tree, ".git/config", ".git/hooks/pre-commit.py")
    assert not any(p.startswith(".git/") for p in _paths(ws, "**"))
    assert _paths(ws, ".git/*") == [".git/config"]


def test_dotfiles_match_star(ws: Workspace, tree: Path) -> None:
    _touch(tree, ".env")
    assert ".env" in _paths(ws, "*")


def test_no_match_says_so_and_suggests_globstar_for_bare_name(ws: Workspace, tree: Path) -> None:
    r = ws.call("find", {"pattern": "b.py"})
    assert r.ok and "No files match 'b.py'" in r.text and "**/b.py" in r.text


def test_at_most_1000_paths_with_overflow_counted(ws: Workspace, root: Path) -> None:
    d = root / "many"
    d.mkdir()
    for i in range(1005):
        (d / f"f{i:04d}.txt").write_text("")
    r = ws.call("find", {"pattern": "many/*.txt"})
    lines = r.text.splitlines()
    assert lines[:1000] == [f"many/f{i:04d}.txt" for i in range(1000)]
    assert "[5 more matching path(s) not shown; at most 1000 are listed" in r.text
    assert r.details["count"] == 1005 and r.details["shown"] == 1000


def test_path_cap_is_the_module_constant(
    ws: Workspace, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(find_mod, "MAX_PATHS", 2)
    r = ws.call("find", {"pattern": "**/*.py"})
    assert r.text.splitlines()[:2] == [".hidden/h.py", "src/a.py"]
    assert "[2 more matching path(s) not shown" in r.text


def test_walk_stops_at_entry_limit_and_says_so(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(30):
        _touch(root, f"d{i}/x.txt")
    monkeypatch.setattr(walk_mod, "MAX_ENTRIES", 10)
    r = ws.call("find", {"pattern": "**/*.txt"})
    assert r.ok
    assert "Walk stopped after visiting 10 entries (limit 10)" in r.text
    assert r.details["stopped"] == "entries" and r.details["visited"] == 10


def test_walk_stops_at_time_limit_and_says_so(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(3):
        _touch(root, f"d{i}/x.txt")
    monkeypatch.setattr(walk_mod, "MAX_SECONDS", 0.0)
    r = ws.call("find", {"pattern": "**/*.txt"})
    assert r.ok
    assert "Walk stopped after 0 s (time limit)" in r.text
    assert r.details["stopped"] == "time"


def test_default_walk_bounds_match_the_spec() -> None:
    assert walk_mod.MAX_ENTRIES == 100_000 and walk_mod.MAX_SECONDS == 10
    assert find_mod.MAX_PATHS == 1000


def test_finished_walk_has_no_stop_note(ws: Workspace, tree: Path) -> None:
    r = ws.call("find", {"pattern": "**"})
    assert "Walk stopped" not in r.text and r.details["stopped"] is None


@pytest.mark.parametrize("pattern", ["../*", "src/../../*", "**/../x"])
def test_dotdot_pattern_is_refused(ws: Workspace, tree: Path, pattern: str) -> None:
    r = ws.call("find", {"pattern": pattern})
    assert not r.ok and "'..' segment" in r.text


def test_absolute_pattern_inside_root_is_accepted_outside_refused(
    ws: Workspace, tree: Path
) -> None:
    inside = ws.call("find", {"pattern": os.path.join(ws.root, "src", "*.py")})
    assert inside.ok and inside.text.splitlines() == ["src/a.py"]
    outside = ws.call("find", {"pattern": "/etc/*"})
    assert not outside.ok and "outside the workspace root" in outside.text


def test_literal_prefix_symlinked_out_of_root_is_refused(root: Path, tmp_path: Path) -> None:
    away = tmp_path / "away"
    away.mkdir()
    (away / "s.py").write_text("")
    (root / "esc").symlink_to(away, target_is_directory=True)
    with pytest.raises(ToolError, match="outside the workspace"):
        walk_mod.walk(Jail(str(root)), "esc/*.py")


def test_walk_api_returns_all_paths_and_counts(root: Path) -> None:
    _touch(root, "a/x.py", "a/y.py", "b/z.txt")
    result = walk_mod.walk(Jail(str(root)), "**/*.py", max_entries=1000, max_seconds=5)
    assert result.paths == ["a/x.py", "a/y.py"]
    assert result.visited == 5  # a, b, a/x.py, a/y.py, b/z.txt
    assert result.stopped is None and result.stop_note() == ""


def test_fixed_depth_pattern_does_not_descend_deeper(root: Path) -> None:
    _touch(root, "a/x.py", "a/b/c/d/e/f.py")
    result = walk_mod.walk(Jail(str(root)), "*/*.py")
    assert result.paths == ["a/x.py"]
    assert result.visited == 3  # a, a/x.py, a/b — a/b is not opened


def test_literal_prefix_walk_starts_there(root: Path) -> None:
    _touch(root, "big/1.py", "big/2.py", "src/lib/m.py")
    result = walk_mod.walk(Jail(str(root)), "src/lib/*.py")
    assert result.paths == ["src/lib/m.py"] and result.visited == 1


def test_no_match_on_a_folder_name_suggests_folder_globs(ws: Workspace, tree: Path) -> None:
    r = ws.call("find", {"pattern": "src"})
    assert r.ok and "src is a folder" in r.text and "'src/**'" in r.text


_PATTERNS = [
    "**", "*", "**/*.py", "src/**", "src/**/*.py", "**/deep/*", "*/*", "**/*.{py,md}",
    "?op.py", "src/*/er/*.py", "**/er/**", ".*", "**/.*", "s*/**/b.py", "src/a.[!p]*",
    "**/*/*.txt", "{src,docs}/**/*",
]  # fmt: skip


@pytest.mark.parametrize("pattern", _PATTERNS)
def test_matches_equal_wcmatch_glob_on_a_tree_without_dir_symlinks(
    ws: Workspace, tree: Path, pattern: str
) -> None:
    from wcmatch import glob as wc_glob

    (tree / "link.py").symlink_to("src/a.py")
    _touch(tree, "a.b/x", ".env")
    flags = wc_glob.GLOBSTAR | wc_glob.DOTGLOB | wc_glob.BRACE | wc_glob.FORCEUNIX | wc_glob.NODIR
    expected = sorted(wc_glob.glob(pattern, flags=flags, root_dir=str(tree)))
    assert walk_mod.walk(Jail(str(tree)), pattern).paths == expected
    assert _paths(ws, pattern) == expected
