"""A symlink swapped in between the jail's check and the write (TOCTOU).

A thread flips ``root/sw`` between a real folder and a symlink to a folder outside the root
while the tools write through ``sw/``. The jail's check happens first; the write happens a few
hundred microseconds later, through the path. Writes go through ``kli.tools.core.atomic``,
which opens the parent folder, verifies the opened folder's real path is the one the jail
checked, and then creates and renames relative to that folder's descriptor — so a swap either
happens before the check (refused) or after the open (harmless).

Reads are not closed this way; the residual risk is documented in docs/reliability.md.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.core import atomic

RACE_SECONDS = 3.0


def _flipper(root: Path, outside: Path, stop: threading.Event, flips: list[int]) -> None:
    sw = root / "sw"
    held = root / "held_dir"
    link = root / "held_link"
    os.symlink(outside, link)
    while not stop.is_set():
        try:
            os.rename(sw, held)  # sw: folder -> (gone)
            os.rename(link, sw)  # sw: symlink to outside
            time.sleep(0)
            os.rename(sw, link)
            os.rename(held, sw)  # sw: folder again
            flips[0] += 1
            time.sleep(0)
        except OSError:
            pass


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
    stop = threading.Event()
    flips = [0]
    thread = threading.Thread(target=_flipper, args=(root, outside, stop, flips), daemon=True)
    thread.start()
    written = refused = 0
    try:
        deadline = time.monotonic() + RACE_SECONDS
        n = 0
        while time.monotonic() < deadline:
            n += 1
            r = ws.call(tool, {"path": f"sw/f{n}.txt", "content": "x\n"})
            written += r.ok
            refused += not r.ok
    finally:
        stop.set()
        thread.join(5)
    escaped = sorted(os.listdir(outside))
    assert flips[0] > 20, "the race did not run"
    assert escaped == [], f"{len(escaped)} of {written + refused} writes landed outside the root"
    assert written > 0


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
    stop = threading.Event()
    flips = [0]
    thread = threading.Thread(target=_flipper, args=(root, outside, stop, flips), daemon=True)
    thread.start()
    leaked = 0
    calls = 0
    try:
        deadline = time.monotonic() + RACE_SECONDS
        while time.monotonic() < deadline:
            calls += 1
            r = ws.call(tool, args)
            leaked += "OUTSIDE-SECRET" in r.text or "OUTSIDE-SECRET" in repr(r.details)
    finally:
        stop.set()
        thread.join(5)
    assert flips[0] > 20, "the race did not run"
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
    stop = threading.Event()
    flips = [0]
    thread = threading.Thread(target=_flipper, args=(root, outside, stop, flips), daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + RACE_SECONDS
        n = 0
        while time.monotonic() < deadline and n < count:
            if tool == "ws_delete":
                ws.call("ws_delete", {"path": f"sw/f{n}"})
            elif tool == "ws_mv_src":
                ws.call("ws_mv", {"src": f"sw/f{n}", "dst": f"moved/f{n}"})
            else:
                ws.call("ws_mv", {"src": f"in/f{n}", "dst": f"sw/g{n}"})
            n += 1
    finally:
        stop.set()
        thread.join(5)
    assert flips[0] > 20, "the race did not run"
    assert sorted(os.listdir(outside)) == sorted(f"f{i}" for i in range(count)), \
        "a file outside the root was deleted, moved or added"
    leaked = [p for p in root.rglob("*") if p.is_file() and "OUTSIDE" in p.read_text(errors="replace")]
    assert leaked == [], f"{len(leaked)} outside files' bytes were copied into the root"
