"""Seeing what a ``bash``, ``ws_shell`` or ``eval`` call changed under the workspace root.

Before such a call a snapshot of the tree is taken (``take``): each regular file's ``(size,
mtime_ns, inode)``, and the bytes of small files (for the diff and for undo). After the call
another is taken and ``compare`` names the files created, modified (a different key and, when
the bytes were kept, different bytes) and deleted.

How a snapshot is taken:

- **Watched** (Linux, ``inotify``, ``WATCH``): the first snapshot of a root walks it once,
  putting an inotify watch on every folder it enters (before listing it, so nothing created
  meanwhile is missed). Every later snapshot reads the events queued since the last one and
  ``lstat``s only the paths they name (a new folder is walked and watched; a folder deleted or
  moved away takes its files with it), so it costs the changes, not the tree. The events a
  person's edit between two calls causes are read by the next call's *before* snapshot, so
  that change is never the call's; a file's content changing does not change its folder's
  mtime, and needs no folder mtime: inotify names the file. The kernel queues the events in
  the writing system call itself, so they are there when the command has exited. On a queue
  overflow, a folder limit (``max_user_watches``), a root moved or deleted, or a tree past the
  bounds, the watch is dropped and that snapshot walks (the next one starts a new watch).
  At most ``MAX_WATCHED_ROOTS`` roots are watched (the least recently used is dropped). Not
  seen by a watch (a walk would see them): a change through ``mmap`` while the file stays open, a
  change through a hard link from outside the tree, a change on a network file system made
  by another machine.
- **Walked** everywhere else (no inotify, ``WATCH`` false, a watch that failed in the last
  ``RETRY_SECONDS``): ``os.scandir`` of every folder, one ``stat`` per file.

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

A background job (``bash`` with ``background``) is watched from the tree its start call left until
it ends, through ``undo.watch`` (``tools/process/jobs.py`` registers it); this module only takes
and compares trees.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import itertools
import os
import stat
import struct
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
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
WATCH = sys.platform.startswith("linux")  # watch roots with inotify (else: walk every time)
MAX_WATCHED_ROOTS = 4
RETRY_SECONDS = 60.0  # a root whose watch failed is walked, not watched, this long

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
    synced: dict[str, tuple[int, int]] = field(default_factory=dict)  # root: (watch, log mark)
    skipped: bool = False  # a file was not kept for the total budget (a watch retries them all)

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
            self.skipped = True
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


def _skip_dir(name: str) -> bool:
    return name in SKIP_DIRS or is_control_name(name)


def _walk(top: str, files: dict[str, Key], deadline: float,
          on_dir: Callable[[str], None] | None = None,
          on_file: Callable[[str, Key], None] | None = None) -> str:
    """Add the regular files under ``top`` to ``files`` (``on_dir`` before each folder is
    listed, ``on_file`` for each file); the reason a bound stopped it, else ``""``."""
    stack = [top]
    count = len(files)
    while stack:
        folder = stack.pop()
        if on_dir is not None:
            on_dir(folder)
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                name = entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if not _skip_dir(name):
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
                files[entry.path] = key
                if on_file is not None:
                    on_file(entry.path, key)
                count += 1
                if count >= MAX_ENTRIES:
                    return f"over {MAX_ENTRIES} files"
                if count % 256 == 0 and time.monotonic() > deadline:
                    return f"over {MAX_SECONDS} s of walking"
    return ""


def take(root: str, cache: Cache | None = None) -> Tree:
    """A snapshot of ``root`` within the bounds (watched or walked: module docstring); with
    ``cache``, keep small files' bytes in it."""
    started = time.monotonic()
    if WATCH and _inotify() is not None:
        watch = _watch_of(root, started)
        if watch is not None:
            tree = watch.take(cache, started)
            if tree is not None:
                return tree
            _drop_watch(root, watch, failed=False)
    tree = Tree()
    keep = None if cache is None else cache.keep
    reason = _walk(root, tree.files, started + MAX_SECONDS, on_file=keep)
    if reason:
        tree.complete, tree.reason = False, reason
    tree.seconds = time.monotonic() - started
    return tree


# -- watching with inotify (Linux) ---------------------------------------------------------------
_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF, _IN_Q_OVERFLOW, _IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
_IN_ONLYDIR, _IN_DONT_FOLLOW, _IN_EXCL_UNLINK, _IN_ISDIR = 0x01000000, 0x02000000, 0x04000000, \
    0x40000000
_IN_NONBLOCK, _IN_CLOEXEC = os.O_NONBLOCK, getattr(os, "O_CLOEXEC", 0o2000000)
_MASK = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE
         | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR | _IN_DONT_FOLLOW
         | _IN_EXCL_UNLINK)
_EVENT = struct.Struct("iIII")
_LOG_MAX = 50_000  # changed paths remembered for caches; past it a cache re-reads its keys
_libc: Any = None
_watches: OrderedDict[str, _Watch] = OrderedDict()
_failed: dict[str, float] = {}
_registry = threading.Lock()
_epochs = itertools.count(1)


class _Unwatchable(Exception):
    pass


def _inotify() -> Any:
    """libc with the inotify calls, or None (not Linux, no libc)."""
    global _libc
    if _libc is None:
        try:
            lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            lib.inotify_init1.argtypes = [ctypes.c_int]
            lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
            lib.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
            _libc = lib
        except (OSError, AttributeError):
            _libc = False
    return _libc or None


def _watch_of(root: str, started: float) -> _Watch | None:
    with _registry:
        watch = _watches.get(root)
        if watch is not None and watch.pid == os.getpid():
            _watches.move_to_end(root)
            return watch
        if watch is not None:  # a forked child: the parent reads those events
            del _watches[root]
        if time.monotonic() - _failed.get(root, -RETRY_SECONDS) < RETRY_SECONDS:
            return None
    watch = _Watch.start(root, started)
    with _registry:
        if watch is None:
            _failed[root] = time.monotonic()
            return None
        _watches[root] = watch
        while len(_watches) > MAX_WATCHED_ROOTS:
            _root, old = _watches.popitem(last=False)
            old.close()
    return watch


def _drop_watch(root: str, watch: _Watch, failed: bool) -> None:
    with _registry:
        if _watches.get(root) is watch:
            del _watches[root]
        if failed:
            _failed[root] = time.monotonic()
    watch.close()


class _Watch:
    """One root under inotify: ``files`` is its tree now, kept up to date from the events."""

    def __init__(self, root: str, fd: int) -> None:
        self.root = root
        self.fd = fd
        self.pid = os.getpid()
        self.epoch = next(_epochs)
        self.lock = threading.Lock()
        self.wds: dict[int, str] = {}
        self.dirs: dict[str, int] = {}
        self.files: dict[str, Key] = {}
        self.log: list[str] = []  # paths whose key changed, oldest first
        self.log_base = 0

    @classmethod
    def start(cls, root: str, started: float) -> _Watch | None:
        lib = _inotify()
        fd = lib.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC) if lib is not None else -1
        if fd < 0:
            return None
        watch = cls(root, fd)
        try:
            if _walk(root, watch.files, started + MAX_SECONDS, on_dir=watch._add):
                raise _Unwatchable("past the bounds")
        except _Unwatchable:
            watch.close()
            return None
        return watch

    def close(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1

    def _add(self, folder: str) -> None:
        wd = _libc.inotify_add_watch(self.fd, os.fsencode(folder), _MASK)
        if wd < 0:
            err = ctypes.get_errno()
            if err in (errno.ENOENT, errno.ENOTDIR, errno.EACCES):
                return  # gone or unreadable: the walk skips it too
            raise _Unwatchable(os.strerror(err))  # ENOSPC: the watch limit
        old = self.wds.get(wd)
        if old is not None and old != folder:
            self.dirs.pop(old, None)
        self.wds[wd] = folder
        self.dirs[folder] = wd

    def _changed(self, path: str) -> None:
        self.log.append(path)

    def _remove_dir(self, folder: str) -> None:
        prefix = folder + os.sep
        for path in [p for p in self.files if p.startswith(prefix)]:
            del self.files[path]
            self._changed(path)
        for path in [d for d in self.dirs if d == folder or d.startswith(prefix)]:
            wd = self.dirs.pop(path)
            self.wds.pop(wd, None)
            _libc.inotify_rm_watch(self.fd, wd)

    def _events(self) -> list[tuple[int, int, str]] | None:
        """The events queued since the last read; None on a queue overflow."""
        got: list[tuple[int, int, str]] = []
        while True:
            try:
                buf = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return got
            at = 0
            while at + _EVENT.size <= len(buf):
                wd, mask, _cookie, size = _EVENT.unpack_from(buf, at)
                name = buf[at + _EVENT.size: at + _EVENT.size + size].split(b"\0", 1)[0]
                at += _EVENT.size + size
                if mask & _IN_Q_OVERFLOW:
                    return None
                got.append((wd, mask, os.fsdecode(name)))

    def take(self, cache: Cache | None, started: float) -> Tree | None:
        """The tree now, from the events since the last snapshot; None when the watch cannot
        say (overflow, watch limit, root gone, past the bounds): the caller walks."""
        with self.lock:
            if self.fd < 0:
                return None
            try:
                if not self._update(started):
                    return None
            except (_Unwatchable, OSError):
                return None
            if len(self.files) >= MAX_ENTRIES:
                return None
            tree = Tree(files=dict(self.files))
            if cache is not None:
                self._sync(cache)
            if len(self.log) > _LOG_MAX:
                self.log_base += len(self.log)
                self.log.clear()
        tree.seconds = time.monotonic() - started
        return tree

    def _update(self, started: float) -> bool:
        events = self._events()
        if events is None:
            return False
        dirty: set[str] = set()
        new_dirs: list[str] = []
        for wd, mask, name in events:
            folder = self.wds.get(wd)
            if mask & _IN_IGNORED:
                if folder is not None and self.dirs.get(folder) == wd:
                    del self.dirs[folder]
                self.wds.pop(wd, None)
                if folder == self.root:
                    return False
                continue
            if folder is None:
                continue
            if not name:
                if folder == self.root and mask & (_IN_DELETE_SELF | _IN_MOVE_SELF):
                    return False
                continue
            path = os.path.join(folder, name)
            if mask & _IN_ISDIR:
                if _skip_dir(name):
                    continue
                if mask & (_IN_DELETE | _IN_MOVED_FROM):
                    self._remove_dir(path)
                    new_dirs = [d for d in new_dirs if d != path and not
                                d.startswith(path + os.sep)]
                if mask & (_IN_CREATE | _IN_MOVED_TO):
                    new_dirs.append(path)
                continue
            if name not in SKIP_FILES:
                dirty.add(path)
        deadline = started + MAX_SECONDS
        for folder in new_dirs:
            self._remove_dir(folder)  # moved in over an old one, or seen twice
            found: dict[str, Key] = {}
            if _walk(folder, found, deadline, on_dir=self._add):
                return False
            for path, key in found.items():
                self.files[path] = key
                self._changed(path)
                dirty.discard(path)
            if len(self.files) >= MAX_ENTRIES:
                return False
        for path in dirty:
            try:
                st = os.lstat(path)
            except OSError:
                st = None
            if st is not None and stat.S_ISREG(st.st_mode):
                key = (st.st_size, st.st_mtime_ns, st.st_ino)
                if self.files.get(path) != key:
                    self.files[path] = key
                    self._changed(path)
            elif self.files.pop(path, None) is not None:
                self._changed(path)
        return True

    def _sync(self, cache: Cache) -> None:
        """Keep in ``cache`` the bytes of the files changed since it was last synced (all of
        them the first time, or when the log no longer reaches back that far)."""
        mark = cache.synced.get(self.root)
        if mark is None or mark[0] != self.epoch or mark[1] < self.log_base or cache.skipped:
            cache.skipped = False  # as a walk does: files left out for the budget tried again
            for path, key in self.files.items():
                cache.keep(path, key)
        else:
            for path in dict.fromkeys(self.log[mark[1] - self.log_base:]):
                now = self.files.get(path)
                if now is not None:
                    cache.keep(path, now)
        cache.synced[self.root] = (self.epoch, self.log_base + len(self.log))


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
