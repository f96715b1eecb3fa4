"""Seeing what a ``bash``, ``ws_shell`` or ``eval`` call changed under the workspace root.

Before such a call the tree is walked (``take``): each regular file's ``(size, mtime_ns,
inode)``, and the bytes of small files (for the diff and for undo). After the call it is walked
again and ``compare`` names the files created, modified (a different key and, when the bytes
were kept, different bytes) and deleted.

The cost is bounded, and the bounds are these constants:

- ``SKIP_DIRS``: folders never entered (version control, dependencies, virtual environments,
  caches, every ``.kli`` folder); ``SKIP_FILES``: a Jupyter server's own state files in the
  root (jupyter-collaboration's document store), which change on their own.
- ``MAX_ENTRIES`` files and ``MAX_SECONDS`` of walking per snapshot. Past either, the snapshot
  is *capped*: files beyond it are not watched, and the call's details say so
  (``detection.complete`` false, with the reason).
- ``KEEP_FILE_BYTES`` per file and ``KEEP_TOTAL_BYTES`` per workspace: the bytes of files up to
  the first are kept while the second lasts. A file whose key is unchanged since the last
  snapshot is not read again (``Tree.cache``), so after the first call a snapshot costs the
  walk's ``stat`` calls only. A changed file whose bytes before were not kept is shown without
  a diff, and cannot be undone.

Background jobs (``bash`` with ``background``) are not watched: only the call's own run.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from dataclasses import dataclass, field
from typing import Any

from kli.tools.core.settings import is_control_name

SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", ".env", "env", "__pycache__",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox", ".ipynb_checkpoints",
    ".cache", "site-packages",
})
SKIP_FILES = frozenset({".jupyter_ystore.db", ".jupyter_ystore.db-journal",
                        ".jupyter_ystore.db-wal", ".jupyter_ystore.db-shm"})
MAX_ENTRIES = 20_000
MAX_SECONDS = 0.5
KEEP_FILE_BYTES = 256 * 1024
KEEP_TOTAL_BYTES = 64 * 1024 * 1024

Key = tuple[int, int, int]  # size, mtime_ns, inode


@dataclass
class Tree:
    """One snapshot: ``files`` maps a real path to its key; ``complete`` False when a bound
    stopped the walk (``reason`` says which)."""

    files: dict[str, Key] = field(default_factory=dict)
    complete: bool = True
    reason: str = ""
    seconds: float = 0.0


@dataclass
class Cache:
    """Kept bytes, by real path, with the key they were read at (one per workspace)."""

    data: dict[str, tuple[Key, bytes]] = field(default_factory=dict)
    total: int = 0

    def bytes_of(self, path: str, key: Key) -> bytes | None:
        hit = self.data.get(path)
        return hit[1] if hit is not None and hit[0] == key else None

    def keep(self, path: str, key: Key) -> None:
        if key[0] > KEEP_FILE_BYTES:
            self.drop(path)
            return
        hit = self.data.get(path)
        if hit is not None and hit[0] == key:
            return
        self.drop(path)
        if self.total + key[0] > KEEP_TOTAL_BYTES:
            return
        try:
            with open(path, "rb") as fh:
                got = fh.read(KEEP_FILE_BYTES + 1)
        except OSError:
            return
        if len(got) != key[0]:
            return  # changing while read: not a trustworthy "before"
        self.data[path] = (key, got)
        self.total += len(got)

    def drop(self, path: str) -> None:
        hit = self.data.pop(path, None)
        if hit is not None:
            self.total -= len(hit[1])


def take(root: str, cache: Cache | None = None) -> Tree:
    """Walk ``root`` within the bounds; with ``cache``, keep small files' bytes in it."""
    tree = Tree()
    started = time.monotonic()
    deadline = started + MAX_SECONDS
    stack = [root]
    count = 0
    while stack:
        folder = stack.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                name = entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if name not in SKIP_DIRS and not is_control_name(name):
                            stack.append(entry.path)
                        continue
                    if name in SKIP_FILES or not entry.is_file(follow_symlinks=False):
                        continue
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if not stat.S_ISREG(st.st_mode):
                    continue
                key = (st.st_size, st.st_mtime_ns, st.st_ino)
                tree.files[entry.path] = key
                if cache is not None:
                    cache.keep(entry.path, key)
                count += 1
                if count >= MAX_ENTRIES:
                    tree.complete, tree.reason = False, f"over {MAX_ENTRIES} files"
                    stack.clear()
                    break
                if count % 256 == 0 and time.monotonic() > deadline:
                    tree.complete, tree.reason = False, f"over {MAX_SECONDS} s of walking"
                    stack.clear()
                    break
    tree.seconds = time.monotonic() - started
    return tree


def compare(before: Tree, after: Tree, cache: Cache) -> list[tuple[str, str, bytes | None]]:
    """``(real path, kind, bytes before)`` of each file created, modified or deleted between
    the two snapshots (kind ``created`` / ``modified`` / ``deleted``; bytes None when not
    kept, or for a created file). Only files one of the snapshots saw are compared; a file
    the after-walk did not reach is checked with ``lstat`` before it counts as deleted."""
    found: list[tuple[str, str, bytes | None]] = []
    for path, key in after.files.items():
        old = before.files.get(path)
        if old is None:
            if before.complete:
                found.append((path, "created", None))
            continue
        if old != key:
            kept = cache.bytes_of(path, old)
            if kept is not None and key[0] == old[0]:
                with contextlib.suppress(OSError), open(path, "rb") as fh:
                    if fh.read(len(kept) + 1) == kept:
                        continue  # touched, same bytes
            found.append((path, "modified", kept))
    for path, key in before.files.items():
        if path in after.files:
            continue
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            found.append((path, "deleted", cache.bytes_of(path, key)))
            continue
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and (st.st_size, st.st_mtime_ns, st.st_ino) != key:
            found.append((path, "modified", cache.bytes_of(path, key)))
    return found


def bounds() -> dict[str, Any]:
    """The bounds, as the call's details name them."""
    return {"max_entries": MAX_ENTRIES, "max_seconds": MAX_SECONDS,
            "keep_file_bytes": KEEP_FILE_BYTES, "keep_total_bytes": KEEP_TOTAL_BYTES}
