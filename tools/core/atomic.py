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

A write keeps what the file is: the new file gets the old one's owner, group, mode and
extended attributes before it replaces it (``_give_identity``); a file whose owner this process
cannot give back is not replaced.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator, Sequence

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
    handle) that is what ``path`` is (``_give_identity``); return the temporary file's path."""
    directory = os.path.dirname(path) or "."
    _clear_stale(directory, os.path.basename(path))
    try:
        old: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        old = None
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=TMP_SUFFIX,
                               dir=directory)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # held while writing: marks the file as live
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            _give_identity(fh.fileno(), old, path)
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def permission_hint(exc: OSError) -> str:
    """A sentence on how to proceed after a write failed for want of permission ('' for other
    failures), for the tools' error messages."""
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return (
            " This process may not write there (a read-only folder or file system, or a file of "
            "another owner): the person can change the permissions, or choose another path."
        )
    return ""


SET_ID = stat.S_ISUID | stat.S_ISGID
# Attributes that grant privilege like a set-id bit: kept only where the owner and group are.
PRIVILEGED_XATTRS = frozenset({"security.capability"})


def _give_identity(fd: int, old: os.stat_result | None, path: str) -> None:
    """Make the new file ``fd`` what the file it replaces is: owner and group, mode (set-id
    bits only when owner and group are kept) and extended attributes.

    A new file gets ``0o666`` less the umask. The owner is kept when the process may
    (``fchown``: root, or a file the process owns already); when it may not, the replace is
    refused (``OSError`` EPERM, nothing written) — the new file would belong to someone else
    than the old one. A group the process cannot give back is replaced by the process's, and
    then the set-id bits and ``security.capability`` are dropped: never a set-id file of
    another owner or group than before. Extended attributes are copied where the file system
    and the process's privileges allow (``user.*`` always; ``security.*``, ``trusted.*``,
    ``system.*`` ACLs as permitted); one that cannot be set is left off (docs/reliability.md).
    """
    if old is None:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        return
    mine = os.fstat(fd)
    kept = True
    if (mine.st_uid, mine.st_gid) != (old.st_uid, old.st_gid):
        try:
            os.fchown(fd, old.st_uid, old.st_gid)
        except PermissionError:
            if mine.st_uid != old.st_uid:
                raise PermissionError(
                    errno.EPERM,
                    f"{os.path.basename(path)} belongs to uid {old.st_uid} and this process "
                    f"(uid {os.geteuid()}) cannot give a new file back that owner, so it is not "
                    "replaced. Nothing was written; the file's owner can change it",
                ) from None
            kept = False  # the owner is ours already; the group cannot be given back
    mode = stat.S_IMODE(old.st_mode)
    if not kept:
        mode &= ~SET_ID
    os.fchmod(fd, mode)
    _copy_xattrs(path, fd, privileged=kept)


def _copy_xattrs(src: str, fd: int, *, privileged: bool) -> None:
    if not hasattr(os, "listxattr"):  # macOS, Windows: not kept (docs/reliability.md)
        return
    try:
        names = os.listxattr(src)
    except OSError:  # no support on this file system
        return
    for name in names:
        if name in PRIVILEGED_XATTRS and not privileged:
            continue
        with contextlib.suppress(OSError):
            os.setxattr(fd, name, os.getxattr(src, name))


@contextlib.contextmanager
def _naming(path: str) -> Iterator[None]:
    """An ``OSError`` raised inside names ``path`` rather than the temporary file or the
    ``/proc`` folder handle it was raised for (those mean nothing to the person or the model)."""
    try:
        yield
    except OSError as exc:
        name = exc.filename
        if isinstance(name, str) and (name.startswith("/proc/self/fd/") or name.endswith(TMP_SUFFIX)):
            try:
                renamed = type(exc)(exc.errno, exc.strerror, path)
            except Exception:
                raise exc from None
            raise renamed from None
        raise


def write_atomic(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data`` so a reader sees the old file or the new one, never a mix."""
    folders = _Folders()
    try:
        with _naming(path):
            _write_one(folders, path, data)
    finally:
        folders.close()


def _write_one(folders: _Folders, path: str, data: bytes) -> None:
    target = folders.via(path)
    tmp = _stage(target, data)
    try:
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


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
            with _naming(path):
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
        for (real, _data), (path, tmp) in zip(changes, staged, strict=True):
            with _naming(real):
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
