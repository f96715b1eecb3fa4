"""A symlink swapped in between the jail's check and the write (TOCTOU).

A child process flips ``root/sw`` between a real folder and a symlink to a folder outside the root
while the tools write through ``sw/``. The jail's check happens first; the write happens a few
hundred microseconds later, through the path. Writes go through ``kli.tools.core.atomic``,
which opens the parent folder, verifies the opened folder's real path is the one the jail
checked, and then creates and renames relative to that folder's descriptor — so a swap either
happens before the check (refused) or after the open (harmless).

Reads are not closed this way; the residual risk is documented in docs/reliability.md.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path
from typing import Any

import pytest

from kli.tools import Workspace
from kli.tools.core import atomic

RACE_SECONDS = 3.0
# A race counts only when the flipper really flipped: each run goes on past RACE_SECONDS until
# MIN_FLIPS flips were made (a busy CI machine can starve the flipper), up to RACE_CAP_SECONDS.
MIN_FLIPS = 50
RACE_CAP_SECONDS = 30.0


def _flipper(root: Path, outside: Path, stop: Any, flips: Any) -> None:
    """Runs in its own process (no GIL shared with the tools): flips ``root/sw`` between the
    real folder and a symlink to ``outside`` until ``stop`` is set."""
    sw = root / "sw"
    held = root / "held_dir"
    link = root / "held_link"
    os.symlink(outside, link)
    strays = 0
    while not stop.is_set():
        try:
            os.rename(sw, held)  # sw: folder -> (gone)
            os.rename(link, sw)  # sw: symlink to outside
            os.rename(sw, link)
            os.rename(held, sw)  # sw: folder again
            with flips.get_lock():
                flips.value += 1
        except OSError:
            # A tool created a new folder at sw while it was gone (a write's makedirs): set it
            # aside (inside the root) and put the real folder back, so the race goes on.
            try:
                if sw.is_symlink() and not link.is_symlink():
                    os.rename(sw, link)
                if held.is_dir() and not held.is_symlink():
                    if os.path.lexists(sw):
                        strays += 1
                        os.rename(sw, root / f"stray{strays}")
                    os.rename(held, sw)
            except OSError:
                pass
    # Leave sw a folder, as the test found it.
    if not sw.exists() and held.is_dir():
        os.rename(held, sw)


class _Race:
    """The flipper in a child process, for the body of a ``with`` block."""

    def __init__(self, root: Path, outside: Path) -> None:
        ctx = multiprocessing.get_context("fork")
        self.stop = ctx.Event()
        self.flips = ctx.Value("i", 0)
        self.proc = ctx.Process(target=_flipper, args=(root, outside, self.stop, self.flips),
                                daemon=True)

    def __enter__(self) -> _Race:
        self.proc.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.proc.join(10)
        if self.proc.is_alive():
            self.proc.kill()

    @property
    def count(self) -> int:
        return int(self.flips.value)

    def running(self, started: float) -> bool:
        """True while the race should go on: RACE_SECONDS at least, and until MIN_FLIPS flips
        were made, but never past RACE_CAP_SECONDS."""
        elapsed = time.monotonic() - started
        if elapsed >= RACE_CAP_SECONDS:
            return False
        return elapsed < RACE_SECONDS or self.count < MIN_FLIPS


@pytest.mark.timeout(120)
@pytest.mark.parametrize("tool", ["write", "ws_write"])
def test_symlink_swapped_in_between_check_and_write_never_writes_outside(
    tmp_path: Path, tool: str
) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    (root / "sw").mkdir(parents=True)
    outside.mkdir()
    ws = Workspace(str(root))
    race = _Race(root, outside)
    race.__enter__()
    written = refused = 0
    try:
        started = time.monotonic()
        n = 0
        while race.running(started):
            n += 1
            r = ws.call(tool, {"path": f"sw/f{n}.txt", "content": "x\n"})
            written += r.ok
            refused += not r.ok
    finally:
        race.__exit__()
    escaped = sorted(os.listdir(outside))
    assert race.count > 20, f"the race did not run ({race.count} flips)"
    assert escaped == [], f"{len(escaped)} of {written + refused} writes landed outside the root"
    assert written > 0


def test_missing_parent_swapped_for_a_symlink_while_created_makes_nothing_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Missing parent folders are made relative to their verified parent's handle: when an
    attacker puts a symlink where a folder is being made (the race won every time here), the
    write is refused and no folder or file appears at the symlink's target."""
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    real_mkdir = os.mkdir

    def attacker_wins(name: Any, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
        if name == "a":
            os.symlink(outside, root / "a")
        real_mkdir(name, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "mkdir", attacker_wins)
    with pytest.raises(OSError, match="changed while it was being created"):
        atomic.write_atomic(str(root / "a" / "b" / "f.txt"), b"x")
    assert list(outside.iterdir()) == []


def test_atomic_write_refuses_a_folder_that_is_not_the_checked_one(tmp_path: Path) -> None:
    """The check itself: a canonical path whose folder was swapped for a symlink is refused,
    and nothing is created at the symlink's target."""
    inside = tmp_path / "root" / "d"
    inside.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    checked = str(inside / "f.txt")  # what the jail resolved (canonical)
    os.rename(inside, tmp_path / "root" / "d_old")
    os.symlink(outside, inside)
    with pytest.raises(OSError, match="changed"):
        atomic.write_atomic(checked, b"x")
    with pytest.raises(OSError, match="changed"):
        atomic.write_many([(checked, b"x")])
    assert os.listdir(outside) == []


@pytest.mark.timeout(120)
@pytest.mark.parametrize("tool", ["read", "ws_read", "search", "ws_grep", "ws_edit"])
def test_symlink_swapped_in_between_check_and_read_never_reads_outside(
    tmp_path: Path, tool: str
) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    (root / "sw").mkdir(parents=True)
    outside.mkdir()
    (root / "sw" / "f.txt").write_text("inside text\n")
    (outside / "f.txt").write_text("OUTSIDE-SECRET text\n")
    ws = Workspace(str(root))
    args = {
        "read": {"path": "sw/f.txt"},
        "ws_read": {"path": "sw/f.txt"},
        "search": {"pattern": "text", "path": "sw/f.txt"},
        "ws_grep": {"pattern": "text", "path": "sw/f.txt"},
        "ws_edit": {"path": "sw/f.txt", "old_str": "text", "new_str": "text"},
    }[tool]
    race = _Race(root, outside)
    race.__enter__()
    leaked = 0
    calls = 0
    try:
        started = time.monotonic()
        while race.running(started):
            calls += 1
            r = ws.call(tool, args)
            leaked += "OUTSIDE-SECRET" in r.text or "OUTSIDE-SECRET" in repr(r.details)
    finally:
        race.__exit__()
    assert race.count > 20, f"the race did not run ({race.count} flips)"
    assert leaked == 0, f"{leaked} of {calls} calls read the file outside the root"
    assert (outside / "f.txt").read_text() == "OUTSIDE-SECRET text\n"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("tool", ["ws_delete", "ws_mv_src", "ws_mv_dst"])
def test_symlink_swapped_in_before_delete_or_move_touches_nothing_outside(
    tmp_path: Path, tool: str
) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    (root / "sw").mkdir(parents=True)
    (root / "in").mkdir()
    outside.mkdir()
    count = 3000
    for n in range(count):
        (root / "sw" / f"f{n}").write_text("inside\n")
        (root / "in" / f"f{n}").write_text("inside\n")
        (outside / f"f{n}").write_text("OUTSIDE-SECRET\n")
    ws = Workspace(str(root))
    race = _Race(root, outside)
    race.__enter__()
    try:
        started = time.monotonic()
        n = 0
        while race.running(started) and n < count:
            if tool == "ws_delete":
                ws.call("ws_delete", {"path": f"sw/f{n}"})
            elif tool == "ws_mv_src":
                ws.call("ws_mv", {"src": f"sw/f{n}", "dst": f"moved/f{n}"})
            else:
                ws.call("ws_mv", {"src": f"in/f{n}", "dst": f"sw/g{n}"})
            n += 1
    finally:
        race.__exit__()
    assert race.count > 20, f"the race did not run ({race.count} flips)"
    assert sorted(os.listdir(outside)) == sorted(f"f{i}" for i in range(count)), \
        "a file outside the root was deleted, moved or added"
    leaked = [p for p in root.rglob("*") if p.is_file() and "OUTSIDE" in p.read_text(errors="replace")]
    assert leaked == [], f"{len(leaked)} outside files' bytes were copied into the root"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("tool", ["write", "ws_write", "edit"])
def test_symlink_swapped_in_before_a_rewrite_never_shows_or_changes_the_outside_file(
    tmp_path: Path, tool: str
) -> None:
    """The prior-content read of a rewrite (for the diff and the read-before-edit check) is
    verified too: the outside file's bytes never appear in a result, and it never changes."""
    from kli.tools.file.anchors import line_hash

    root = tmp_path / "root"
    outside = tmp_path / "outside"
    (root / "sw").mkdir(parents=True)
    outside.mkdir()
    (root / "sw" / "t.txt").write_text("inside\n")
    (outside / "t.txt").write_text("OUTSIDE-SECRET\n")
    ws = Workspace(str(root))
    assert ws.call("read", {"path": "sw/t.txt"}).ok
    assert ws.call("ws_read", {"path": "sw/t.txt"}).ok
    race = _Race(root, outside)
    race.__enter__()
    leaked = calls = 0
    try:
        started = time.monotonic()
        while race.running(started):
            calls += 1
            if tool == "write":
                r = ws.call("write", {"path": "sw/t.txt", "content": "inside\n"})
            elif tool == "ws_write":
                r = ws.call("ws_write", {"path": "sw/t.txt", "content": "inside\n"})
            else:
                r = ws.call("edit", {"input": f"@@ sw/t.txt\n= 1:{line_hash('inside')}\n~inside\n"})
            leaked += "OUTSIDE-SECRET" in r.text or "OUTSIDE-SECRET" in repr(r.details)
    finally:
        race.__exit__()
    assert race.count > 20, f"the race did not run ({race.count} flips)"
    assert leaked == 0, f"{leaked} of {calls} results showed the outside file"
    assert (outside / "t.txt").read_text() == "OUTSIDE-SECRET\n"
    assert sorted(os.listdir(outside)) == ["t.txt"]


def test_checkpoint_restore_never_shows_an_outside_file_swapped_in_for_its_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ws_checkpoints restore reads the file it replaces (for the diff's "before"). An attacker
    who swaps the target's folder for a symlink just before that read and back just after it
    would have the outside file's text shown in the result; the read goes through the jail's
    verified open, so the restore is refused instead and nothing outside is shown."""
    import kli.tools.ws.ws_checkpoints as ws_checkpoints

    root = tmp_path / "root"
    outside = tmp_path / "outside"
    (root / "sw").mkdir(parents=True)
    outside.mkdir()
    (root / "sw" / "f.txt").write_text("checkpointed inside\n")
    (outside / "f.txt").write_text("OUTSIDE-SECRET text\n")
    ws = Workspace(str(root))
    deleted = ws.call("ws_delete", {"path": "sw/f.txt"})
    assert deleted.ok, deleted.text
    cp_id = deleted.details["checkpoint"]
    (root / "sw" / "f.txt").write_text("current inside\n")

    sw, held = root / "sw", root / "sw_held"
    target = str((root / "sw" / "f.txt").resolve())
    real_isfile, real_decode = os.path.isfile, ws_checkpoints.decode

    def swap_in(path: Any) -> bool:
        answer = real_isfile(path)
        if str(path) == target and not sw.is_symlink():
            os.rename(sw, held)
            os.symlink(outside, sw)
        return answer

    def swap_back(data: bytes) -> str:
        if sw.is_symlink():
            os.unlink(sw)
            os.rename(held, sw)
        return real_decode(data)

    monkeypatch.setattr(os.path, "isfile", swap_in)
    monkeypatch.setattr(ws_checkpoints, "decode", swap_back)
    r = ws.call("ws_checkpoints", {"action": "restore", "id": cp_id})
    monkeypatch.undo()
    if sw.is_symlink():  # the refused read left the attacker's swap in place
        os.unlink(sw)
        os.rename(held, sw)
    assert "OUTSIDE-SECRET" not in r.text and "OUTSIDE-SECRET" not in repr(r.details)
    assert (outside / "f.txt").read_text() == "OUTSIDE-SECRET text\n"
