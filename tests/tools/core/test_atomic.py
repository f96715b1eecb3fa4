"""Atomic writes keep what the file is (mode, owner, group, set-id bits, extended attributes),
leave no temporary files, and multi-file writes are whole-or-nothing."""

from __future__ import annotations

import fcntl
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from kli.tools.core import atomic
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

    monkeypatch.setattr(atomic, "_renameat2", None)  # the os.replace path (no renameat2)
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

    monkeypatch.setattr(atomic, "_renameat2", None)  # the os.replace path (no renameat2)
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


def test_with_renameat2_a_later_failure_swaps_every_earlier_file_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, new = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "new.txt"
    a.write_text("A")
    b.write_text("B")
    real = atomic._rename2
    calls = {"n": 0}

    def flaky(src: str, dst: str, flags: int) -> bool:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        return real(src, dst, flags)

    monkeypatch.setattr(atomic, "_rename2", flaky)
    with pytest.raises(OSError, match="No space left"):
        write_many([(str(a), b"A2"), (str(new), b"N"), (str(b), b"B2")])
    monkeypatch.setattr(atomic, "_rename2", real)
    assert a.read_text() == "A" and b.read_text() == "B" and not new.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


def test_a_file_changed_since_it_was_verified_is_refused_as_stale(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("theirs")
    with pytest.raises(atomic.Stale):
        write_many([(str(f), b"mine")], {str(f): b"what I verified"})
    assert f.read_text() == "theirs"
    write_many([(str(f), b"mine")], {str(f): b"theirs"})
    assert f.read_text() == "mine"


def test_a_file_created_meanwhile_is_not_replaced_when_none_was_expected(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("theirs")
    with pytest.raises(atomic.Stale):
        write_many([(str(f), b"mine")], {str(f): None})
    assert f.read_text() == "theirs"


def test_a_writer_landing_between_the_check_and_the_swap_is_swapped_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An editor's save (write a new file, rename it over) right after the early check.
    f = tmp_path / "f.txt"
    f.write_text("verified")
    real = atomic._check_current

    def then_an_editor_saves(path: str, target: str, want: bytes | None) -> None:
        real(path, target, want)
        side = tmp_path / "editor.tmp"
        side.write_text("editor's save")
        os.replace(side, f)

    monkeypatch.setattr(atomic, "_check_current", then_an_editor_saves)
    with pytest.raises(atomic.Stale):
        write_many([(str(f), b"mine")], {str(f): b"verified"})
    assert f.read_text() == "editor's save"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


def test_the_folder_lock_is_shared_across_processes_and_reentrant_in_a_thread(
    tmp_path: Path,
) -> None:
    import time

    f = tmp_path / "f.txt"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys, time\n"
         f"fd = os.open({str(tmp_path)!r}, os.O_RDONLY | os.O_DIRECTORY)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(1.5)\n"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(atomic.Busy):
            with atomic.locked([str(f)], timeout=0.2):
                pass
        began = time.monotonic()
        with atomic.locked([str(f)], timeout=10), atomic.locked([str(f)], timeout=0.1):
            waited = time.monotonic() - began  # the outer one waited; the inner is reentrant
        assert waited > 0.3
    finally:
        holder.wait(10)


def _opened_before_the_swap(mode: str, then: str) -> str:
    """A child's script: open the file (``mode``), say "open", wait until a write has swapped the
    file out, then run ``then`` on the handle ``fh``."""
    return (
        "import os, sys, time\n"
        f"fh = open(sys.argv[1], {mode!r})\n"
        "ino = os.fstat(fh.fileno()).st_ino\n"
        "print('open', flush=True)\n"
        "while os.stat(sys.argv[1]).st_ino == ino:  # until the write has swapped the file out\n"
        "    time.sleep(0.0005)\n"
        + then
    )


def _start_child(script: str, path: Path) -> subprocess.Popen[str]:
    """Run ``script`` on ``path``; it has the file open when this returns."""
    child = subprocess.Popen([sys.executable, "-c", script, str(path)],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline() == "open\n"
    return child


_HOLDER = _opened_before_the_swap("a", 'fh.write("late\\n")\nfh.close()\n')


@pytest.mark.skipif(atomic._renameat2 is None, reason="no renameat2 here: the old file is replaced")
def test_a_line_appended_to_the_old_file_after_the_exchange_is_carried_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An appender that opened the file just before a verified write and writes after the
    exchange writes into the file swapped out; the write waits until nobody has that file open
    and appends what it gained to the new one (before, the line went to an unlinked file).
    The wait is lengthened here so a busy machine cannot make the appender miss it."""

    monkeypatch.setattr(atomic, "SETTLE_SECONDS", 10.0)
    f = tmp_path / "f.txt"
    f.write_bytes(b"A\n")
    child = _start_child(_HOLDER, f)
    try:
        atomic.write_atomic(str(f), b"A edited\n", expected=b"A\n")
    except atomic.Stale:
        # the line landed between the exchange and its check: the write is refused as stale
        # and the file swapped back, the appender's line in it (found 1 run in a full suite)
        assert child.wait(timeout=10) == 0
        assert f.read_bytes() == b"A\nlate\n"
        return
    assert child.wait(timeout=10) == 0
    assert f.read_bytes() == b"A edited\nlate\n"


_KEEPS_OPEN = _opened_before_the_swap("a", (
    "for i in range(20):  # and it goes on writing to it, well past the wait\n"
    "    fh.write(f'late {i}\\n')\n"
    "    fh.flush()\n"
    "    time.sleep(0.02)\n"
    "fh.close()\n"))


@pytest.mark.skipif(atomic._renameat2 is None, reason="no renameat2 here: the old file is replaced")
def test_a_writer_keeping_the_old_file_open_past_the_wait_makes_the_write_stale(
    tmp_path: Path,
) -> None:
    """What it writes after the wait would go to a file no longer in place: the write is swapped
    back and refused, naming the cause, and every line the writer wrote is in the file."""

    f = tmp_path / "f.txt"
    f.write_bytes(b"A\n")
    child = _start_child(_KEEPS_OPEN, f)
    with pytest.raises(atomic.HeldOpen) as caught:
        atomic.write_atomic(str(f), b"A edited\n", expected=b"A\n")
    assert child.wait(timeout=10) == 0
    assert f.read_bytes() == b"A\n" + b"".join(b"late %d\n" % i for i in range(20))
    text = caught.value.refusal("edit", "f.txt")
    assert "open for writing" in text and "Nothing was written" in text and "Retry" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


def test_a_program_reading_the_file_does_not_hold_up_or_refuse_a_write(tmp_path: Path) -> None:
    # A viewer (less, tail -f) keeps the file open for reading only: nothing it can lose.
    f = tmp_path / "f.txt"
    f.write_bytes(b"A\n")
    with open(f, "rb"):
        atomic.write_atomic(str(f), b"B\n", expected=b"A\n")
    assert f.read_bytes() == b"B\n"


_OPENS_LATE = """
import sys
with open(sys.argv[1], "a") as fh:  # waits on the write's lease, then writes
    fh.write("late\\n")
"""


@pytest.mark.skipif(not hasattr(fcntl, "F_SETLEASE"), reason="no leases here")
def test_a_writer_opening_the_old_file_while_it_settles_is_waited_for_and_carried(
    tmp_path: Path,
) -> None:
    """An appender already past its name lookup when the file was swapped out opens the old
    file while the write holds its lease: the write lets it write, waits for it to close and
    carries its line to the new file."""
    import time

    old, new = tmp_path / "old.kli-tmp", tmp_path / "f.txt"
    old.write_bytes(b"A\n")
    new.write_bytes(b"A edited\n")
    settling = atomic._Settling()
    settling.hold(str(new), str(new), str(old), 2, b"A\n")
    fd = settling.fds[0][3]
    child = subprocess.Popen([sys.executable, "-c", _OPENS_LATE, str(old)])
    deadline = time.monotonic() + 20
    while not atomic._breaking(fd):  # the child's open waits on the lease
        assert time.monotonic() < deadline and child.poll() is None
        time.sleep(0.005)
    settling.finish()
    assert child.wait(timeout=10) == 0
    assert new.read_bytes() == b"A edited\nlate\n"
    assert not old.exists()


# an editor saving in place (no rename): open, then rewrite
_REWRITES_IN_PLACE = _opened_before_the_swap(
    "r+", "fh.seek(0)\nfh.write(\"the editor's save\\n\")\nfh.truncate()\nfh.close()\n")


@pytest.mark.skipif(atomic._renameat2 is None, reason="no renameat2 here: the old file is replaced")
def test_an_in_place_save_landing_after_the_exchange_makes_the_write_stale(
    tmp_path: Path,
) -> None:
    """An editor that opened the file before the write's exchange and rewrites it in place
    after it writes to the file swapped out: the old file is checked once nobody writes to it,
    so the write is refused and the save is in place (before, the save was lost)."""

    f = tmp_path / "f.txt"
    f.write_bytes(b"A\n")
    child = _start_child(_REWRITES_IN_PLACE, f)
    with pytest.raises(atomic.Stale):
        atomic.write_atomic(str(f), b"A edited\n", expected=b"A\n")
    assert child.wait(timeout=10) == 0
    assert f.read_bytes() == b"the editor's save\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


@pytest.mark.skipif(atomic._renameat2 is None, reason="no renameat2 here: the old file is replaced")
def test_a_writer_keeping_one_file_of_a_two_file_write_open_leaves_both_as_they_were(
    tmp_path: Path,
) -> None:

    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_bytes(b"A\n")
    b.write_bytes(b"B\n")
    child = _start_child(_KEEPS_OPEN, b)
    with pytest.raises(atomic.HeldOpen):
        write_many([(str(a), b"A edited\n"), (str(b), b"B edited\n")],
                   {str(a): b"A\n", str(b): b"B\n"})
    assert child.wait(timeout=10) == 0
    assert a.read_bytes() == b"A\n"
    assert b.read_bytes() == b"B\n" + b"".join(b"late %d\n" % i for i in range(20))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]
