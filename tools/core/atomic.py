"""Atomic writes: a temporary file in the target's directory, then ``os.replace``.

``write_many`` makes a multi-file change whole-or-nothing: every temporary file is written and
flushed before any target is replaced, and if a replace fails part way the targets already
replaced are put back as they were.

Paths are what the jail resolved: absolute and canonical (no symlink in them when checked).
Each target's folder is opened once and, where ``/proc`` exists, the opened folder's real path
must still be that folder — otherwise a symlink was swapped in between the jail's check and the
write, and ``OSError`` ("changed") is raised with nothing written. Every later step (temporary
file, replace, reading the old content) goes through the opened folder
(``/proc/self/fd/N/name``), so a swap after the check cannot redirect the write. A temporary
file left behind by a process killed mid-write is named ``.NAME.*.kli-tmp`` (``TMP_SUFFIX``):
the listing tools skip such names, and the next write of NAME removes those that are stale —
unchanged for ``STALE_SECONDS`` and not locked (a writer holds ``flock`` on its temporary file
while it writes it, and the lock dies with the process).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import Sequence

from kli.tools.core.textfile import read_bytes

TMP_SUFFIX = ".kli-tmp"
STALE_SECONDS = 60.0


def is_temporary(name: str) -> bool:
    """True for the name of a write's temporary file (listing tools skip these)."""
    return name.startswith(".") and name.endswith(TMP_SUFFIX)


def _clear_stale(directory: str, name: str) -> None:
    """Remove temporary files of ``name`` left by writers that died (best effort)."""
    import time

    prefix = "." + name + "."
    now = time.time()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if not (entry.name.startswith(prefix) and entry.name.endswith(TMP_SUFFIX)):
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            if now - entry.stat(follow_symlinks=False).st_mtime < STALE_SECONDS:
                continue
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a live writer holds it
            os.unlink(entry.path)
        except OSError:
            pass
        finally:
            os.close(fd)


class _Folders:
    """Open folder handles for one write, by folder path: ``via(path)`` is the path through
    the handle (verified), ``close()`` releases them."""

    def __init__(self) -> None:
        self._open: dict[str, tuple[int, str]] = {}

    def via(self, path: str) -> str:
        directory = os.path.dirname(path) or "."
        name = os.path.basename(path)
        if directory not in self._open:
            self._open[directory] = _open_folder(directory)
        return os.path.join(self._open[directory][1], name)

    def close(self) -> None:
        for fd, _proc in self._open.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._open.clear()


def _verify(fd: int, expected: str) -> str:
    """The ``/proc`` path of folder handle ``fd`` after checking it is ``expected``.

    Raises ESTALE when the handle leads elsewhere (a symlink was swapped in between the jail's
    check and the open). Without ``/proc`` (macOS) nothing can be checked: ``expected`` is
    returned as is (see docs/reliability.md)."""
    proc = f"/proc/self/fd/{fd}"
    try:
        actual = os.readlink(proc)
    except OSError:
        return expected
    if actual != expected:
        raise OSError(
            errno.ESTALE,
            f"the folder {expected} changed while it was being written (it now leads to "
            f"{actual}: a symlink was swapped in?); nothing was written. Check the path and "
            "retry.",
        )
    return proc


def _open_folder(directory: str) -> tuple[int, str]:
    """Open ``directory`` (creating missing folders) and verify the handle leads there.

    Missing folders are made one at a time relative to the handle of their verified parent
    (``mkdir`` + ``open(O_NOFOLLOW)`` through ``dir_fd``), never by path: a symlink swapped in
    meanwhile can neither redirect the creation outside the root nor be followed."""
    expected = os.path.abspath(directory)
    missing: list[str] = []
    base = expected
    while not os.path.isdir(base):
        parent = os.path.dirname(base)
        if parent == base:
            break
        missing.append(os.path.basename(base))
        base = parent
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        _verify(fd, base)
        for name in reversed(missing):
            swapped = False
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=fd)
            try:
                child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    swapped = stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and swapped:
                    # a symlink stands where the folder was made
                    raise OSError(
                        errno.ESTALE,
                        f"the folder {os.path.join(base, name)} changed while it was being "
                        "created (a symlink was swapped in?); nothing was written. Check the "
                        "path and retry.",
                    ) from exc
                raise
            os.close(fd)
            fd = child
            base = os.path.join(base, name)
        return fd, _verify(fd, expected)
    except BaseException:
        os.close(fd)
        raise


def _stage(path: str, data: bytes) -> str:
    """Write ``data`` to a new temporary file beside ``path`` (which may go through a folder
    handle); return the temporary file's path."""
    directory = os.path.dirname(path) or "."
    _clear_stale(directory, os.path.basename(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=TMP_SUFFIX,
                               dir=directory)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # held while writing: marks the file as live
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def write_atomic(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data`` so a reader sees the old file or the new one, never a mix."""
    folders = _Folders()
    try:
        target = folders.via(path)
        tmp = _stage(target, data)
        try:
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    finally:
        folders.close()


def remove(path: str) -> None:
    """``os.unlink(path)`` through the verified parent folder: a symlink swapped in after the
    jail's check raises ``OSError`` ("changed") instead of removing a file elsewhere."""
    folders = _Folders()
    try:
        os.unlink(folders.via(path))
    finally:
        folders.close()


def rename(src: str, dst: str) -> None:
    """``os.rename(src, dst)`` through both verified parent folders (see ``remove``)."""
    folders = _Folders()
    try:
        os.rename(folders.via(src), folders.via(dst))
    finally:
        folders.close()


def write_many(changes: Sequence[tuple[str, bytes]]) -> None:
    """Write every ``(path, data)`` or none of them.

    Raises the first ``OSError`` after restoring whatever was already replaced.
    """
    folders = _Folders()
    try:
        _write_many(changes, folders)
    finally:
        folders.close()


def _write_many(changes: Sequence[tuple[str, bytes]], folders: _Folders) -> None:
    staged: list[tuple[str, str]] = []
    try:
        for path, data in changes:
            target = folders.via(path)
            staged.append((target, _stage(target, data)))
    except BaseException:
        for _path, tmp in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    originals: dict[str, bytes | None] = {}
    try:
        for path, _tmp in staged:
            try:  # the shared guarded open: a pipe swapped in is refused, never waited on
                originals[path] = read_bytes(path)
            except FileNotFoundError:
                originals[path] = None
    except BaseException:
        for _path, tmp in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    done: list[str] = []
    try:
        for path, tmp in staged:
            os.replace(tmp, path)
            done.append(path)
    except BaseException:
        for path in done:
            old = originals[path]
            with contextlib.suppress(OSError):
                if old is None:
                    os.unlink(path)
                else:
                    tmp_old = _stage(path, old)
                    os.replace(tmp_old, path)
        for path, tmp in staged:
            if path not in done:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        raise
