"""The path jail: relative paths, absolute paths inside the root, escapes refused by rule."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kli.tools.core.jail import Jail
from kli.tools.core.result import ToolError


@pytest.fixture
def jail(root: Path) -> Jail:
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("x = 1\n")
    return Jail(str(root))


def test_relative_path_resolves_inside_root(jail: Jail, root: Path) -> None:
    r = jail.resolve("src/a.py")
    assert r.real == str((root / "src" / "a.py").resolve())
    assert r.rel == "src/a.py"


def test_absolute_path_inside_root_is_accepted(jail: Jail, root: Path) -> None:
    assert jail.resolve(str(root / "src" / "a.py")).rel == "src/a.py"


@pytest.mark.parametrize("path", ["../x", "src/../../x", "a/b/../../../x"])
def test_dotdot_escape_is_refused_naming_the_rule(jail: Jail, path: str) -> None:
    with pytest.raises(ToolError, match=r"escapes the workspace root with '\.\.'"):
        jail.resolve(path)


def test_dotdot_that_stays_inside_is_fine(jail: Jail) -> None:
    assert jail.resolve("src/../src/a.py").rel == "src/a.py"


def test_absolute_path_outside_root_is_refused(jail: Jail) -> None:
    with pytest.raises(ToolError, match="outside the workspace root"):
        jail.resolve("/etc/passwd")


def test_symlink_out_of_root_is_refused(jail: Jail, root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    os.symlink(outside, root / "link.txt")
    with pytest.raises(ToolError, match="symlinks may not lead out of the root"):
        jail.resolve("link.txt")


def test_symlinked_directory_out_of_root_is_refused_for_new_files(jail: Jail, root: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path, root / "out")
    with pytest.raises(ToolError, match="resolves through a symlink"):
        jail.resolve("out/new.txt", write=True)


@pytest.mark.parametrize("path", ["", "   ", "a\x00b"])
def test_empty_or_nul_path_is_refused(jail: Jail, path: str) -> None:
    with pytest.raises(ToolError):
        jail.resolve(path)


@pytest.mark.parametrize("path", [".kli/settings.json", "./.kli/settings.json", "src/../.kli/x", ".kli"])
def test_control_dir_is_not_writable(jail: Jail, path: str) -> None:
    jail.resolve(path)  # reading is fine
    with pytest.raises(ToolError, match=r"write refused — .* is under \.kli/"):
        jail.resolve(path, write=True)


def test_scratch_dir_is_writable(jail: Jail) -> None:
    assert jail.resolve(".kli/scratch/notes.txt", write=True).rel == ".kli/scratch/notes.txt"


def test_symlink_into_control_dir_is_not_writable(jail: Jail, root: Path) -> None:
    (root / ".kli").mkdir()
    (root / ".kli" / "settings.json").write_text("{}")
    os.symlink(root / ".kli" / "settings.json", root / "innocent.json")
    with pytest.raises(ToolError, match="write refused"):
        jail.resolve("innocent.json", write=True)


def test_a_control_name_given_through_a_symlink_to_a_plain_folder_is_not_writable(
    jail: Jail, root: Path
) -> None:
    """``sub/.kli`` → ``sub/conf``: the path as given is control state even though the folder it
    leads to is not (the settings loader refuses such a link too)."""
    (root / "sub" / "conf").mkdir(parents=True)
    (root / "sub" / ".kli").symlink_to(root / "sub" / "conf")
    with pytest.raises(ToolError, match="write refused"):
        jail.resolve("sub/.kli/settings.json", write=True)
    assert jail.resolve("sub/conf/settings.json", write=True).rel == "sub/conf/settings.json"


def test_a_lone_surrogate_in_a_path_is_a_named_error(jail: Jail) -> None:
    with pytest.raises(ToolError, match=r"lone surrogate \(U\+D800 at index 1\)"):
        jail.resolve("a\ud800.txt")
    # Undecodable bytes of a real file name read as \udc80-\udcff: those are file names.
    assert jail.resolve("a\udcff.txt").rel == "a\udcff.txt"
