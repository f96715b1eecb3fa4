"""Change detection's snapshots (kli.tools.core.snapshot): watched with inotify, or walked, they
give the same tree; a person's change between two calls is never the second call's; a change
inside a folder whose mtime did not change is seen; a watch that cannot go on falls back to the
walk."""

from __future__ import annotations

import os
import random
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kli.tools.core import snapshot
from kli.tools.core.workspace import Workspace

watching = pytest.mark.skipif(not sys.platform.startswith("linux") or snapshot._inotify() is None,
                              reason="inotify is Linux only")


@pytest.fixture(params=["watched", "walked"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "watched":
        if not sys.platform.startswith("linux") or snapshot._inotify() is None:
            pytest.skip("inotify is Linux only")
        monkeypatch.setattr(snapshot, "WATCH", True)
    else:
        monkeypatch.setattr(snapshot, "WATCH", False)
    yield request.param


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    (r / "src" / "deep").mkdir(parents=True)
    (r / "src" / "a.txt").write_text("a\n")
    (r / "src" / "deep" / "b.txt").write_text("b\n")
    (r / "top.txt").write_text("top\n")
    return r.resolve()


def _walked(root: Path) -> dict[str, snapshot.Key]:
    tree = snapshot.Tree()
    snapshot._walk(str(root), tree.files, float("inf"))
    return tree.files


def _detected(result) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {f["path"]: f["change_kind"] for f in result.details.get("files", [])}


def test_a_persons_change_between_two_calls_is_never_the_second_calls(mode: str, root: Path) -> None:
    ws = Workspace(str(root))
    assert _detected(ws.call("bash", {"command": "echo 1 >> top.txt"})) == {"top.txt": "modified"}
    # the person, between the calls: an edit, a new file, a deleted file, a new folder
    (root / "src" / "a.txt").write_text("the person's\n")
    (root / "person.txt").write_text("p\n")
    (root / "src" / "deep" / "b.txt").unlink()
    (root / "theirs").mkdir()
    (root / "theirs" / "t.txt").write_text("t\n")
    r = ws.call("bash", {"command": "true"})
    assert "files" not in r.details, r.details.get("files")
    r = ws.call("bash", {"command": "echo agent >> src/a.txt"})
    files = {f["path"]: f for f in r.details["files"]}
    assert list(files) == ["src/a.txt"]
    assert files["src/a.txt"]["before"] == "the person's\n"  # the bytes before the agent's call


def test_a_change_inside_a_folder_whose_mtime_did_not_change_is_seen(mode: str, root: Path) -> None:
    ws = Workspace(str(root))
    ws.call("bash", {"command": "true"})
    folder = root / "src" / "deep"
    mtime = folder.stat().st_mtime_ns
    # same size, content changed in place, folder's mtime unchanged
    r = ws.call("bash", {"command": "printf 'c\\n' | dd of=src/deep/b.txt conv=notrunc status=none"})
    assert folder.stat().st_mtime_ns == mtime
    assert _detected(r) == {"src/deep/b.txt": "modified"}
    assert r.details["files"][0]["after"] == "c\n"


def test_files_in_new_moved_and_deleted_folders_are_seen(mode: str, root: Path) -> None:
    ws = Workspace(str(root))
    r = ws.call("bash", {"command": "mkdir -p new/x/y && echo n > new/x/y/n.txt"})
    assert _detected(r) == {"new/x/y/n.txt": "created"}
    r = ws.call("bash", {"command": "echo more >> new/x/y/n.txt"})  # inside the new folder
    assert _detected(r) == {"new/x/y/n.txt": "modified"}
    r = ws.call("bash", {"command": "mv src moved"})
    assert _detected(r) == {"src/a.txt": "deleted", "src/deep/b.txt": "deleted",
                            "moved/a.txt": "created", "moved/deep/b.txt": "created"}
    r = ws.call("bash", {"command": "echo again >> moved/deep/b.txt"})  # the moved folder
    assert _detected(r) == {"moved/deep/b.txt": "modified"}
    outside = root.parent / "outside"
    r = ws.call("bash", {"command": f"mv moved {outside} && rm -r new"})
    assert _detected(r) == {"moved/a.txt": "deleted", "moved/deep/b.txt": "deleted",
                            "new/x/y/n.txt": "deleted"}
    (outside / "a.txt").write_text("outside now\n")  # a folder moved out is no longer watched
    assert "files" not in ws.call("bash", {"command": "true"}).details
    r = ws.call("bash", {"command": f"mv {outside} back"})
    assert _detected(r) == {"back/a.txt": "created", "back/deep/b.txt": "created"}


@watching
def test_a_watched_tree_is_the_walked_tree_after_every_random_change(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot, "WATCH", True)
    rng = random.Random(14)
    snapshot.take(str(root))
    assert str(root) in snapshot._watches
    for step in range(300):
        dirs = [p for p in root.rglob("*") if p.is_dir()] + [root]
        files = [p for p in root.rglob("*") if p.is_file()]
        op = rng.choice(["write", "append", "rm", "mkdir", "mvdir", "rmdir", "mvfile", "touch",
                         "skipdir"])
        d = rng.choice(dirs)
        if op == "write":
            (d / f"f{step}.txt").write_text(str(step))
        elif op == "append" and files:
            with open(rng.choice(files), "a") as fh:
                fh.write("x")
        elif op == "rm" and files:
            rng.choice(files).unlink()
        elif op == "mkdir":
            (d / f"d{step}" / "inner").mkdir(parents=True)
            (d / f"d{step}" / "inner" / "i.txt").write_text("i")
        elif op == "mvdir" and d != root:
            target = rng.choice(dirs)
            if target != d and not str(target).startswith(str(d) + os.sep):
                d.rename(target / f"m{step}")
        elif op == "rmdir" and d != root:
            shutil.rmtree(d)
        elif op == "mvfile" and files:
            rng.choice(files).rename(d / f"r{step}.txt")
        elif op == "touch" and files:
            os.utime(rng.choice(files), ns=(step, step))
        elif op == "skipdir":
            (d / ".git").mkdir(exist_ok=True)
            (d / ".git" / f"o{step}").write_text("o")
        if step % 7 == 0 or step == 299:
            tree = snapshot.take(str(root))
            assert tree.complete
            assert str(root) in snapshot._watches, "the watch was dropped"
            assert tree.files == _walked(root), f"step {step}: {op}"


@watching
def test_a_watch_that_hits_the_watch_limit_falls_back_to_walking(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot, "WATCH", True)
    ws = Workspace(str(root))
    ws.call("bash", {"command": "true"})
    assert str(root) in snapshot._watches

    def no_room(self: snapshot._Watch, folder: str) -> None:
        raise snapshot._Unwatchable("No space left on device")

    monkeypatch.setattr(snapshot._Watch, "_add", no_room)
    r = ws.call("bash", {"command": "mkdir more && echo m > more/m.txt"})
    assert _detected(r) == {"more/m.txt": "created"}
    assert r.details["detection"]["complete"] is True
    assert str(root) not in snapshot._watches
    r = ws.call("bash", {"command": "echo m2 >> more/m.txt"})  # walked now
    assert _detected(r) == {"more/m.txt": "modified"}


@watching
def test_a_queue_overflow_drops_the_watch_and_that_snapshot_walks(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot, "WATCH", True)
    ws = Workspace(str(root))
    ws.call("bash", {"command": "true"})
    watch = snapshot._watches[str(root)]
    monkeypatch.setattr(watch, "_events", lambda: None)  # what an IN_Q_OVERFLOW gives
    r = ws.call("bash", {"command": "echo o > over.txt"})
    assert _detected(r) == {"over.txt": "created"}
    assert snapshot._watches.get(str(root)) is not watch


@watching
def test_at_most_max_watched_roots_are_watched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot, "WATCH", True)
    roots = []
    for i in range(snapshot.MAX_WATCHED_ROOTS + 2):
        r = tmp_path / f"r{i}"
        r.mkdir()
        roots.append(str(r.resolve()))
        snapshot.take(roots[-1])
    assert len(snapshot._watches) <= snapshot.MAX_WATCHED_ROOTS
    assert roots[-1] in snapshot._watches and roots[0] not in snapshot._watches


@watching
def test_a_deleted_root_drops_its_watch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot, "WATCH", True)
    r = tmp_path / "gone"
    r.mkdir()
    (r / "f.txt").write_text("f")
    real = str(r.resolve())
    snapshot.take(real)
    watch = snapshot._watches[real]
    shutil.rmtree(r)
    tree = snapshot.take(real)
    assert tree.files == {}
    assert snapshot._watches.get(real) is not watch


def test_a_file_left_out_for_the_bytes_budget_is_kept_once_there_is_room_again(
    mode: str, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot, "KEEP_TOTAL_BYTES", 10)
    (root / "big.txt").write_text("0123456789\n")  # 11 bytes: over the budget with the others
    ws = Workspace(str(root))
    ws.call("bash", {"command": "true"})
    cache = ws._snapshot_cache  # type: ignore[attr-defined]
    assert str(root / "big.txt") not in cache.data
    monkeypatch.setattr(snapshot, "KEEP_TOTAL_BYTES", 1000)
    ws.call("bash", {"command": "true"})  # big.txt itself did not change
    r = ws.call("bash", {"command": "echo more >> big.txt"})
    files = {f["path"]: f for f in r.details["files"]}
    assert files["big.txt"]["before"] == "0123456789\n"
