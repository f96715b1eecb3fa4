"""Faults while writing: a multi-file edit whose second write fails changes no file; a process
killed mid-write leaves the old file or the new one, never a mix; a checkpoint restore after a
delete gives the exact bytes.

Tests run as root, so chmod cannot deny a write. The faults used are real ones that bind root
too, each in a child process: ``RLIMIT_FSIZE`` (the kernel refuses to grow a file past the
limit: EFBIG, what a full disk looks like to a writer) and ``RLIMIT_NOFILE`` (no descriptor for
the second file: EMFILE), and SIGKILL.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.core.atomic import STALE_SECONDS, TMP_SUFFIX

CHILD = str(Path(__file__).with_name("_child.py"))
A_TEXT = "alpha line\nsecond\n"
B_TEXT = "beta line\nsecond\n"


def _child(name: str, timeout: float = 60, **kwargs: object) -> dict[str, object]:
    out = subprocess.run([sys.executable, CHILD, name, json.dumps(kwargs)], capture_output=True,
                         text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr[-3000:]
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _no_temp_files(root: Path) -> list[str]:
    return [p.name for p in root.rglob("*") if p.name.endswith(TMP_SUFFIX)]


@pytest.mark.parametrize("patch_kind", ["edit", "ws_patch"])
@pytest.mark.parametrize(("limit", "value"), [("fsize", 50_000)])
def test_multi_file_edit_whose_second_write_hits_disk_full_changes_no_file(
    root: Path, patch_kind: str, limit: str, value: int
) -> None:
    (root / "a.txt").write_text(A_TEXT)
    (root / "b.txt").write_text(B_TEXT)
    result = _child("edit_two_files_with_limit", root=str(root), limit=limit, value=value,
                    patch_kind=patch_kind)
    assert result["ok"] is False, result
    assert (root / "a.txt").read_text() == A_TEXT
    assert (root / "b.txt").read_text() == B_TEXT
    assert _no_temp_files(root) == []
    assert "File too large" in str(result["text"]) or "EFBIG" in str(result["text"]), result
    assert result["error"] != "internal", result


@pytest.mark.parametrize("patch_kind", ["edit", "ws_patch"])
def test_multi_file_edit_that_runs_out_of_descriptors_changes_no_file(
    root: Path, patch_kind: str
) -> None:
    """The limit is found by search: the lowest descriptor limit at which the edit is refused
    must leave both files as they were (and the highest refused one as well)."""
    (root / "a.txt").write_text(A_TEXT)
    (root / "b.txt").write_text(B_TEXT)
    refused = 0
    for value in range(0, 8):
        result = _child("edit_two_files_with_limit", root=str(root), limit="nofile",
                        value=value, patch_kind=patch_kind)
        if result["ok"]:
            break
        refused += 1
        assert (root / "a.txt").read_text() == A_TEXT, value
        assert (root / "b.txt").read_text() == B_TEXT, value
        assert _no_temp_files(root) == []
    assert refused > 0, "no descriptor limit made the edit fail"


@pytest.mark.timeout(120)
def test_sigkill_during_large_writes_leaves_old_or_new_never_a_mix(root: Path) -> None:
    size = 8 * 1024 * 1024
    rng = random.Random(8)
    (root / "big.txt").write_text("A" * size)
    for _ in range(6):
        proc = subprocess.Popen(
            [sys.executable, CHILD, "write_forever", json.dumps({"root": str(root), "size": size})],
            stdout=subprocess.PIPE, text=True,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 0.6))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        data = (root / "big.txt").read_bytes()
        assert len(data) == size
        assert data in (b"A" * size, b"B" * size), "a mix of old and new"
    # Temporary files of killed writers may remain; no tool shows them or trips on them.
    ws = Workspace(str(root))
    for tool, args in [("find", {"pattern": "**"}), ("ws_glob", {"pattern": "**"}),
                       ("ws_list", {"path": "."}), ("search", {"pattern": "zzz", "path": "."}),
                       ("ws_grep", {"pattern": "zzz"})]:
        r = ws.call(tool, args)
        assert TMP_SUFFIX not in r.text, (tool, r.text[:500])
    # The next write of the same file clears its stale temporaries: unlocked ones (their
    # writer is dead) unchanged for STALE_SECONDS — here aged by hand.
    for leftover in root.glob("*" + TMP_SUFFIX):
        old = time.time() - STALE_SECONDS - 5
        os.utime(leftover, (old, old))
    # A writer killed while it saved the undo record of its change leaves a checkpoint folder
    # with no meta.json: the store's next prune removes it once stale (aged by hand too).
    for folder in (root / ".kli" / "checkpoints").glob("cp-*"):
        if not (folder / "meta.json").exists():
            old = time.time() - STALE_SECONDS - 5
            os.utime(folder, (old, old))
    assert ws.call("write", {"path": "big.txt", "content": "done\n"}).ok
    assert _no_temp_files(root) == []


def test_checkpoint_restore_after_delete_gives_the_exact_bytes(root: Path) -> None:
    ws = Workspace(str(root))
    blobs = {
        "crlf.txt": b"one\r\ntwo\r\nno newline at end",
        "latin1.txt": b"caf\xe9 \xff\xfe bytes that are not UTF-8\n",
        "binary.bin": bytes(range(256)) * 4,
        "empty.txt": b"",
        "unicode.py": "π = 'ünïcødé'\n\ttabs\u00a0nbsp\n".encode(),
    }
    for name, data in blobs.items():
        (root / name).write_bytes(data)
        os.chmod(root / name, 0o640)
    ids = {}
    for name in blobs:
        r = ws.call("ws_delete", {"path": name})
        assert r.ok, r.text
        assert not (root / name).exists()
        ids[name] = r.details.get("checkpoint") or r.text.split('"id":"')[1].split('"')[0]
    for name, data in blobs.items():
        r = ws.call("ws_checkpoints", {"action": "restore", "id": ids[name]})
        assert r.ok, r.text
        assert (root / name).read_bytes() == data, name


def test_next_write_removes_only_dead_writers_stale_temporaries(root: Path) -> None:
    import fcntl

    (root / "f.txt").write_text("old\n")
    old = time.time() - STALE_SECONDS - 5
    dead = root / f".f.txt.dead0001{TMP_SUFFIX}"
    fresh = root / f".f.txt.fresh001{TMP_SUFFIX}"
    live = root / f".f.txt.live0001{TMP_SUFFIX}"
    other = root / f".g.txt.dead0002{TMP_SUFFIX}"
    for p in (dead, fresh, live, other):
        p.write_text("partial")
    for p in (dead, live, other):
        os.utime(p, (old, old))
    holder = os.open(live, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)  # a writer that is still writing
    try:
        ws = Workspace(str(root))
        assert ws.call("write", {"path": "f.txt", "content": "new\n"}).ok
        assert not dead.exists()
        assert fresh.exists() and live.exists() and other.exists()
        assert "kli-tmp" not in ws.call("ws_list", {"path": "."}).text
        assert "kli-tmp" not in ws.call("find", {"pattern": "**"}).text
    finally:
        os.close(holder)


def test_multi_file_patch_whose_second_file_sits_under_a_regular_file_changes_nothing(
    root: Path,
) -> None:
    """A real fault that binds root too: the second file's parent is a regular file (ENOTDIR /
    EEXIST while creating it). Was an internal error in ws_patch."""
    (root / "a.txt").write_text("alpha\nbeta\n")
    (root / "blocker").write_text("a file\n")
    ws = Workspace(str(root))
    ws.call("ws_read", {"path": "a.txt"})
    patch = ("--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-alpha\n+ALPHA\n beta\n"
             "--- /dev/null\n+++ b/blocker/new.txt\n@@ -0,0 +1 @@\n+new\n")
    r = ws.call("ws_patch", {"patch": patch})
    assert not r.ok and r.details.get("error") == "write_failed", r.text
    assert "Nothing was written" in r.text and "blocker" in r.text
    assert (root / "a.txt").read_text() == "alpha\nbeta\n"
    assert (root / "blocker").read_text() == "a file\n"
    assert _no_temp_files(root) == []
    ws.call("read", {"path": "a.txt"})
    from kli.tools.file.anchors import line_hash

    r = ws.call("edit", {"input": f"@@ a.txt\n= 1:{line_hash('alpha')}\n~ALPHA\n"
                                  "@@ blocker/new.txt\n+\n~new\n"})
    assert not r.ok and r.details.get("error") != "internal", r.text
    assert (root / "a.txt").read_text() == "alpha\nbeta\n"
