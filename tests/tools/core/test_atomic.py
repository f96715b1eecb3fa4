"""Atomic writes keep what the file is (mode, owner, group, set-id bits, extended attributes),
leave no temporary files, and multi-file writes are whole-or-nothing."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from kli.tools.core.atomic import write_atomic, write_many


def test_write_atomic_replaces_content_and_keeps_mode(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_text("old")
    target.chmod(0o755)
    write_atomic(str(target), b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert os.listdir(tmp_path) == ["run.sh"]


def test_write_atomic_creates_parent_directories(tmp_path: Path) -> None:
    write_atomic(str(tmp_path / "a" / "b" / "c.txt"), b"x")
    assert (tmp_path / "a" / "b" / "c.txt").read_bytes() == b"x"


def test_write_many_failing_to_stage_writes_nothing(tmp_path: Path) -> None:
    first = tmp_path / "first.txt"
    first.write_text("one")
    blocker = tmp_path / "blocker"
    blocker.write_text("a regular file cannot be a directory")
    with pytest.raises(OSError):
        write_many([(str(first), b"changed"), (str(blocker / "second.txt"), b"x")])
    assert first.read_text() == "one"
    assert sorted(os.listdir(tmp_path)) == ["blocker", "first.txt"]


def test_write_many_restores_earlier_files_when_a_later_replace_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("A")
    b.write_text("B")
    real_replace = os.replace
    calls = {"n": 0}

    def flaky_replace(src: str, dst: str) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", flaky_replace)
    with pytest.raises(OSError, match="No space left"):
        write_many([(str(a), b"A2"), (str(b), b"B2")])
    monkeypatch.setattr(os, "replace", real_replace)
    assert a.read_text() == "A" and b.read_text() == "B"
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.txt"]


def test_write_many_removes_new_files_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    new, old = tmp_path / "new.txt", tmp_path / "old.txt"
    old.write_text("O")
    real_replace = os.replace
    calls = {"n": 0}

    def flaky_replace(src: str, dst: str) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(13, "Permission denied")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", flaky_replace)
    with pytest.raises(OSError):
        write_many([(str(new), b"N"), (str(old), b"O2")])
    monkeypatch.setattr(os, "replace", real_replace)
    assert not new.exists() and old.read_text() == "O"


# -- a write keeps what the file is ------------------------------------------------------------
OTHER_UID = 65534  # nobody


def test_root_keeps_the_owner_group_and_setuid_bit_of_another_users_file(tmp_path: Path) -> None:
    """Before, the replace left a setuid file owned by root with the new bytes in it."""
    target = tmp_path / "tool"
    target.write_text("old")
    os.chown(target, OTHER_UID, OTHER_UID)
    target.chmod(0o4755)
    write_atomic(str(target), b"new")
    st = target.stat()
    assert (st.st_uid, st.st_gid) == (OTHER_UID, OTHER_UID)
    assert stat.S_IMODE(st.st_mode) == 0o4755
    assert target.read_bytes() == b"new"


def test_extended_attributes_are_kept(tmp_path: Path) -> None:
    target = tmp_path / "tagged.txt"
    target.write_text("old")
    try:
        os.setxattr(target, "user.kli_test", b"kept")
    except OSError as exc:
        pytest.skip(f"the test folder's file system has no user.* attributes ({exc.strerror})")
    write_atomic(str(target), b"new")
    assert os.getxattr(target, "user.kli_test") == b"kept"
