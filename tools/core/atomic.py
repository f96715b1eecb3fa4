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

Writers that overlap (two kernels on one folder, a kernel and ``kli mcp``, an editor saving):

- ``locked(paths)`` is an advisory lock shared across processes: ``flock`` on the folder of
  each path (its nearest existing ancestor when it does not exist yet), taken in sorted order
  and reentrant within a thread. A folder, not the file, because a write replaces the file's
  inode (a lock on the old one would guard nothing) and a lock file would put names in the
  person's tree. Every writing tool holds it from loading what it verifies until it has
  written, so two kli processes never interleave a read-verify-write.
- ``expected`` (the bytes the tool verified, or None for "must not exist") makes the replace
  itself check: where the kernel has ``renameat2`` (Linux), the new file is exchanged with the
  old one atomically (``RENAME_EXCHANGE``) and what was swapped out is compared with what was
  verified; a writer that takes no lock (an editor's save, an appender) and landed in between
  is swapped back in and the write refused (``Stale``). A new file is put in place with
  ``RENAME_NOREPLACE``. Elsewhere the current bytes are compared just before ``os.replace``.
  Either way a write is kept or refused as stale. A writer that opened the old file before the
  exchange (an appender, an editor saving in place) writes to the file swapped out, so that
  file is settled before it is removed (``_Settling``): a read lease waits, up to
  ``SETTLE_SECONDS``, until no program has it open for writing (readers do not count); then it
  is checked to begin with the bytes verified (an in-place rewrite makes the write ``Stale``)
  and what it gained is appended to the new file. A writer that keeps it open longer makes the
  write ``HeldOpen`` (stale: swapped back, nothing written), since what it wrote later would be
  lost; one that opens it while it settles waits on the lease and is carried too. Without
  ``renameat2`` or leases such writes go to a file no longer linked.
- the replaces and their rollback run in ``interrupts.deferred()``: a KeyboardInterrupt or a
  deadline arriving mid-commit is delivered once every file is written or every file is back.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import signal
import stat
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from kli.tools.core import interrupts
from kli.tools.core.textfile import NotRegular, TooLarge, open_regular, read_bytes

TMP_SUFFIX = ".kli-tmp"
STALE_SECONDS = 60.0
LOCK_SECONDS = 30.0  # how long a writer waits for another process's folder lock


class Stale(OSError):
    """The file is no longer what the tool verified: another writer changed it in between.
    Nothing of the write was kept."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(errno.ESTALE, why, path)
        self.why = why

    def refusal(self, tool: str, rel: str) -> str:
        """What the model is told: nothing written, and how to retry."""
        return (
            f"{tool} refused: {rel} was changed by another program while {tool} was writing it "
            f"({self.why}), so writing would have overwritten that change. Nothing was written. "
            f"Read {rel} again and redo the change against what it holds now."
        )


class Busy(OSError):
    """Another process held the folder lock for longer than ``LOCK_SECONDS``."""

    def refusal(self, tool: str, rel: str) -> str:
        return (
            f"{tool} refused: another process kept writing in the folder of {rel} for over "
            f"{LOCK_SECONDS:g} s. Nothing was written; retry in a moment."
        )

    def __init__(self, folder: str) -> None:
        super().__init__(
            errno.EWOULDBLOCK,
            f"another process has been writing in {folder} for over {LOCK_SECONDS:g} s",
            folder,
        )


# -- the cross-process lock ----------------------------------------------------------------
_held = threading.local()


def _lock_folder(path: str) -> str:
    folder = os.path.dirname(os.path.abspath(path)) or "/"
    while not os.path.isdir(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return folder


@contextlib.contextmanager
def locked(paths: Iterable[str], timeout: float = LOCK_SECONDS) -> Iterator[None]:
    """Hold the advisory write lock of every path's folder (see the module docstring).
    Raises ``Busy`` when another process holds one past ``timeout`` seconds."""
    held: dict[str, int] = _held.__dict__.setdefault("folders", {})
    acquired: list[str] = []
    try:
        for folder in sorted({_lock_folder(p) for p in paths}):
            if folder in held:
                continue
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            deadline = time.monotonic() + timeout
            pause = 0.0005
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        os.close(fd)
                        raise Busy(folder) from None
                    time.sleep(pause)
                    pause = min(pause * 2, 0.02)
                except BaseException:
                    os.close(fd)
                    raise
            held[folder] = fd
            acquired.append(folder)
        yield
    finally:
        for folder in reversed(acquired):
            fd = held.pop(folder)
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


# -- renameat2 -------------------------------------------------------------------------------
_AT_FDCWD = -100
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
def _load_renameat2() -> Any:
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_renameat2 = _load_renameat2()


def _rename2(src: str, dst: str, flags: int) -> bool:
    """``renameat2(src, dst, flags)``; False when this system or file system lacks it (the
    caller falls back), ``OSError`` for any other failure."""
    if _renameat2 is None:
        return False
    if _renameat2(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), dst)


def _same(path: str, expected: bytes) -> bool:
    """``path`` is a regular file holding exactly ``expected`` (read through the guarded
    loader: a pipe swapped in is refused, never waited on)."""
    try:
        if os.stat(path, follow_symlinks=False).st_size != len(expected):
            return False
        return read_bytes(path, limit=len(expected)) == expected
    except (OSError, TooLarge):
        return False




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


def _stage(path: str, data: bytes, made: list[str] | None = None) -> str:
    """Write ``data`` to a new temporary file beside ``path`` (which may go through a folder
    handle) that is what ``path`` is (``_give_identity``); return the temporary file's path.
    The path is appended to ``made`` as soon as the file exists (interrupts deferred in
    between), so a caller interrupted at any moment knows every temporary file to remove."""
    directory = os.path.dirname(path) or "."
    _clear_stale(directory, os.path.basename(path))
    try:
        old: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        old = None
    with interrupts.deferred():
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=TMP_SUFFIX,
                                   dir=directory)
        if made is not None:
            made.append(tmp)
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


ANY: object = object()  # no expectation: the write replaces whatever is there

# Review (``kli.tools.core.approval``): on a thread that is capturing, the writers below record
# what they would do instead of doing it, so a tool's planned bytes can wait for a person.
_capture = threading.local()


@contextlib.contextmanager
def capturing() -> Iterator[list[tuple[Any, ...]]]:
    """Record, instead of performing, every ``write_many`` / ``write_atomic`` / ``remove`` /
    ``rename`` / ``makedirs`` / ``rmdir`` made on this thread inside the block:
    ``("write", changes, expected)``, ``("remove", path, expected)``,
    ``("rename", src, dst, replace)``, ``("mkdir", path)``, ``("rmdir", path)``,
    ``("symlink", target, path)``, ``("chmod", path, mode)``, and the ops a tool records itself with ``capture_op`` (``(approval.STEP, step)``). A tool that changes anything
    by another path (a program, a call this module does not know) must check
    ``capturing_now()`` and record an op, or refuse: a held call changes nothing."""
    ops: list[tuple[Any, ...]] = []
    previous = getattr(_capture, "ops", None)
    _capture.ops = ops
    try:
        yield ops
    finally:
        _capture.ops = previous


def _captured() -> list[tuple[Any, ...]] | None:
    ops: list[tuple[Any, ...]] | None = getattr(_capture, "ops", None)
    return ops


def capturing_now() -> bool:
    """Whether this thread's writes are being captured (``capturing``), not written."""
    return _captured() is not None


def capture_op(*op: Any) -> bool:
    """Record ``op`` when this thread is capturing (True: the caller must not perform it; the
    person's Accept does, ``approval._apply``); False when it is not (perform it now). For a
    change this module does not make itself (``ws_mv``'s ``git mv``)."""
    ops = _captured()
    if ops is None:
        return False
    ops.append(op)
    return True


# Undo (``kli.tools.core.undo``): on a thread that is observing, the writers below note each
# path's bytes just before they change it (the expected bytes when the caller verified them).
_observe = threading.local()
OBSERVE_MAX_BYTES = 8 * 1024 * 1024  # a file's bytes before are kept up to this size
NOT_KEPT: Any = object()  # the bytes before were not kept (over OBSERVE_MAX_BYTES, not a file)


@contextlib.contextmanager
def observing() -> Iterator[dict[str, Any]]:
    """Note, in the yielded dict, each path's bytes before the first ``write_many`` /
    ``write_atomic`` / ``remove`` / ``rename`` changed it on this thread inside the block
    (None: it did not exist; ``NOT_KEPT``). A nested block's paths are added to the outer's
    ``"\0inner"`` set (those changes are the nested call's)."""
    seen: dict[str, Any] = {}
    previous: dict[str, Any] | None = getattr(_observe, "seen", None)
    _observe.seen = seen
    try:
        yield seen
    finally:
        _observe.seen = previous
        if previous is not None:
            inner = previous.setdefault("\0inner", set())
            inner.update(p for p in seen if not p.startswith("\0"))
            inner.update(seen.get("\0inner", ()))


def _note_before(path: str, expected: object = ANY) -> None:
    seen: dict[str, Any] | None = getattr(_observe, "seen", None)
    if seen is None:
        return
    key = os.path.abspath(path)
    if key in seen:
        return
    if expected is None or isinstance(expected, bytes):
        seen[key] = expected
        return
    try:
        st = os.lstat(key)
    except FileNotFoundError:
        seen[key] = None
        return
    except OSError:
        seen[key] = NOT_KEPT
        return
    if not stat.S_ISREG(st.st_mode) or st.st_size > OBSERVE_MAX_BYTES:
        seen[key] = NOT_KEPT
        return
    try:
        with open_regular(key) as fh:
            # kept only if the file opened is the one at ``key``: a symlink swapped into a
            # folder of the path meanwhile leads elsewhere, and an outside file's bytes must
            # never be copied into the root's undo store
            data = fh.read(OBSERVE_MAX_BYTES + 1) if _opened_at(fh.fileno(), key) else None
        seen[key] = data if data is not None and len(data) <= OBSERVE_MAX_BYTES else NOT_KEPT
    except OSError:
        seen[key] = NOT_KEPT


def _opened_at(fd: int, path: str) -> bool:
    """Whether the file open on ``fd`` is at ``path`` (a resolved path) — checked through
    ``/proc``; where it is missing (macOS) assumed (docs/reliability.md)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}") == path
    except OSError:
        return True


def write_atomic(path: str, data: bytes, expected: object = ANY) -> None:
    """Replace ``path`` with ``data`` so a reader sees the old file or the new one, never a mix.
    ``expected``: the bytes the caller verified (None: the file must not exist); ``Stale`` is
    raised, with nothing written, when the file is not that any more."""
    want: dict[str, bytes | None] = {}
    if expected is None or isinstance(expected, bytes):
        want[path] = expected
    write_many([(path, data)], want)  # one file: the same checks and rollback as many


def remove(path: str, expected: object = ANY) -> None:
    """``os.unlink(path)`` through the verified parent folder: a symlink swapped in after the
    jail's check raises ``OSError`` ("changed") instead of removing a file elsewhere. With
    ``expected`` (bytes), the file is first moved aside atomically and removed only if what
    was moved is those bytes; otherwise it is put back and ``Stale`` raised."""
    ops = _captured()
    if ops is not None:
        ops.append(("remove", path, expected))
        return
    _note_before(path, expected)
    folders = _Folders()
    try:
        target = folders.via(path)
        if not isinstance(expected, bytes):
            os.unlink(target)
            return
        aside = _aside_name(target)
        with interrupts.deferred():
            os.rename(target, aside)
            if not _same(aside, expected):
                os.rename(aside, target)
                raise Stale(path, "it changed since it was verified")
            os.unlink(aside)
    finally:
        folders.close()


def makedirs(path: str) -> None:
    """Make folder ``path`` and its missing parents, one at a time through the verified handle
    of each parent (``_open_folder``: a symlink swapped in is never followed). Captured as
    ``("mkdir", path)`` when ``path`` is not a folder yet. ``OSError`` (ENOTDIR, EEXIST) when a
    non-folder stands in the way."""
    ops = _captured()
    if ops is not None:
        if not os.path.isdir(path):
            ops.append(("mkdir", path))
        return
    fd, _proc = _open_folder(path)
    os.close(fd)


def rmdir(path: str) -> None:
    """``os.rmdir(path)`` (an empty folder) through the verified parent folder (see
    ``remove``). Captured as ``("rmdir", path)``."""
    ops = _captured()
    if ops is not None:
        ops.append(("rmdir", path))
        return
    folders = _Folders()
    try:
        os.rmdir(folders.via(path))
    finally:
        folders.close()


def symlink(target: str, path: str) -> None:
    """Make ``path`` a symlink to ``target``, replacing what is there (a file, a symlink) in one
    rename: the link is made beside it under a temporary name, through the verified parent
    folder (see ``remove``). Captured as ``("symlink", target, path)``."""
    ops = _captured()
    if ops is not None:
        ops.append(("symlink", target, path))
        return
    _note_before(path)
    folders = _Folders()
    try:
        final = folders.via(path)
        aside = _aside_name(final)
        os.symlink(target, aside)
        try:
            os.rename(aside, final)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(aside)
            raise
    finally:
        folders.close()


def chmod(path: str, mode: int) -> None:
    """Set the permission bits of file ``path`` through the verified parent folder (see
    ``remove``). Captured as ``("chmod", path, mode)``."""
    ops = _captured()
    if ops is not None:
        ops.append(("chmod", path, mode))
        return
    folders = _Folders()
    try:
        os.chmod(folders.via(path), mode)
    finally:
        folders.close()


def _aside_name(target: str) -> str:
    directory, name = os.path.split(target)
    return os.path.join(directory, f".{name}.{os.getpid()}.{time.monotonic_ns()}{TMP_SUFFIX}")


def rename(src: str, dst: str, *, replace: bool = True) -> None:
    """``os.rename(src, dst)`` through both verified parent folders (see ``remove``). With
    ``replace=False`` an existing ``dst`` (even one created a moment ago by another writer)
    raises ``Stale`` instead of being replaced."""
    ops = _captured()
    if ops is not None:
        ops.append(("rename", src, dst, replace))
        return
    _note_before(src)
    _note_before(dst)
    folders = _Folders()
    try:
        a, b = folders.via(src), folders.via(dst)
        if replace:
            os.rename(a, b)
            return
        try:
            if _rename2(a, b, RENAME_NOREPLACE):
                return
        except FileExistsError:
            raise Stale(dst, "it was created meanwhile") from None
        if os.path.lexists(b):
            raise Stale(dst, "it was created meanwhile")
        os.rename(a, b)
    finally:
        folders.close()


def write_many(
    changes: Sequence[tuple[str, bytes]], expected: Mapping[str, bytes | None] | None = None
) -> None:
    """Write every ``(path, data)`` or none of them.

    ``expected`` maps a path to the bytes the caller verified it holds (None: it must not
    exist); a path not in it is replaced whatever it holds. Raises ``Stale`` when a file is not
    what was expected, or the first ``OSError``, after restoring whatever was already replaced.
    The replaces run in ``interrupts.deferred()`` and are noted with ``interrupts.note_commit``.
    """
    ops = _captured()
    if ops is not None:
        ops.append(("write", list(changes), dict(expected or {})))
        return
    for path, _data in changes:
        _note_before(path, (expected or {}).get(path, ANY))
    folders = _Folders()
    try:
        _write_many(changes, folders, expected or {})
    finally:
        folders.close()


def _check_current(path: str, target: str, want: bytes | None) -> None:
    if want is None:
        if os.path.lexists(target):
            raise Stale(path, "it was created since it was checked")
    elif not _same(target, want):
        raise Stale(path, "it changed since it was verified")


# How long a write waits, after swapping a file out, for a writer that still has the old file
# open (an appender that opened it just before) to close it, so what it wrote is carried over;
# a writer that keeps it open longer makes the write stale (``HeldOpen``).
SETTLE_SECONDS = 0.05
# The signal a lease break would send (nobody waits on it: the lease is read with F_GETLEASE);
# SIGIO, the default, would end the process.
_LEASE_SIGNAL = int(getattr(signal, "SIGURG", 0))
_F_SETLEASE = getattr(fcntl, "F_SETLEASE", None)
_F_GETLEASE = getattr(fcntl, "F_GETLEASE", None)
_F_SETSIG = getattr(fcntl, "F_SETSIG", None)


class HeldOpen(Stale):
    """Another program kept the file open for writing after it was swapped out: what it writes
    from then on would go to a file no longer in place, so the write was swapped back."""

    def refusal(self, tool: str, rel: str) -> str:
        return (
            f"{tool} refused: another writer has {rel} open for writing ({self.why}) — another "
            f"program, or another session's change still being put in place — so what it writes "
            f"after {tool}'s change would have been lost. Nothing was written. Retry once it has "
            f"closed {rel} (or stop that program first); read {rel} again before redoing the "
            "change."
        )


def _lease(fd: int) -> str:
    """Take a read lease on ``fd`` (open read-only), waiting up to ``SETTLE_SECONDS`` while
    another program has the file open for writing. ``held``: no such writer, and none can open
    it for writing without the lease showing it (``_breaking``); ``busy``: a writer kept it open
    the whole wait; ``none``: no leases here (another owner's file, a file system without
    them)."""
    if _F_SETLEASE is None or _F_SETSIG is None or not _LEASE_SIGNAL:
        return "none"
    try:
        fcntl.fcntl(fd, _F_SETSIG, _LEASE_SIGNAL)
    except OSError:
        return "none"
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        try:
            fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_RDLCK)
            return "held"
        except OSError as exc:
            if exc.errno != errno.EAGAIN:
                return "none"
            if time.monotonic() >= deadline:
                return "busy"
            time.sleep(0.001)


def _breaking(fd: int) -> bool:
    """True when a program is opening ``fd``'s file for writing: it waits on the lease, and
    writes once the lease is let go."""
    try:
        return bool(fcntl.fcntl(fd, _F_GETLEASE) != fcntl.F_RDLCK)  # type: ignore[arg-type]
    except OSError:
        return False


def _let_go(fd: int) -> None:
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_UNLCK)  # type: ignore[arg-type]


def _append(fd: int, target: str, seen: int) -> int:
    """Append to ``target`` what ``fd``'s file holds beyond its first ``seen`` bytes; return its
    size (the new ``seen``). Bytes changed within the first ``seen`` are not an append and are
    not carried."""
    size = os.fstat(fd).st_size
    if size <= seen:
        return seen
    tail = bytearray()
    while len(tail) < size - seen:
        chunk = os.pread(fd, size - seen - len(tail), seen + len(tail))
        if not chunk:
            break
        tail += chunk
    out = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        view = memoryview(tail)
        while view:
            view = view[os.write(out, view) :]
    finally:
        os.close(out)
    return seen + len(tail)


def _begins_with(fd: int, want: bytes) -> bool:
    """``fd`` is a regular file whose first ``len(want)`` bytes are ``want``."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size < len(want):
        return False
    view, at = memoryview(want), 0
    while at < len(want):
        chunk = os.pread(fd, min(1 << 20, len(want) - at), at)
        if not chunk or chunk != view[at : at + len(chunk)]:
            return False
        at += len(chunk)
    return True


def _carry_late_writes(tmp: str, target: str, seen: int) -> None:
    """The file at ``tmp`` held ``seen`` bytes when it was swapped away from ``target``: a
    writer that opened it before (an appender, no lock) may write to it after. Wait until
    nobody has it open for writing and append to ``target`` what it gained. Used
    for kli's own file when a write is refused and swapped back (it stood in place for
    microseconds); a written file's old one is settled by ``_Settling``."""
    try:
        fd = os.open(tmp, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    try:
        _lease(fd)
        _append(fd, target, seen)
    except OSError:
        pass
    finally:
        os.close(fd)


class _Settling:
    """The old files a write swapped out (``RENAME_EXCHANGE``), kept until nothing can write
    to them any more, so a writer that takes no lock and opened one just before (an appender)
    loses nothing.

    ``hold`` takes a read lease on each (``_lease``): once held, no program has it open for
    writing, and one that opens it for writing waits on the lease, which shows (``_breaking``).
    A writer that keeps it open for the whole wait makes ``hold`` raise ``HeldOpen``: the
    caller swaps every file back. ``finish`` appends to the new file what the old one gained
    beyond the bytes verified (the appender's lines, after kli's write as if it had opened the
    file a moment later), removes it, and, while a writer is opening it, lets the lease go,
    waits for the writer to close it and carries again."""

    def __init__(self) -> None:
        self.fds: list[tuple[str, str, str, int, int]] = []  # path, target, tmp, fd, seen

    def hold(self, path: str, target: str, tmp: str, seen: int, want: object) -> None:
        """Hold the old file swapped out to ``tmp``, and check it begins with ``want`` (the
        bytes verified) when it is bytes: an editor's save or an in-place rewrite that landed
        before nothing could write to it makes the write stale; bytes appended are carried."""
        changed = Stale(path, "another writer changed it while it was being written")
        try:
            fd = os.open(tmp, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            if isinstance(want, bytes):
                raise changed from None
            return
        self.fds.append((path, target, tmp, fd, seen))
        if _lease(fd) == "busy":
            raise HeldOpen(path, f"it was still open for writing {SETTLE_SECONDS * 1000:g} ms "
                                 "after the change was put in place")
        if isinstance(want, bytes) and not _begins_with(fd, want):
            raise changed

    def finish(self) -> None:
        for _path, target, tmp, fd, seen in self.fds:
            with contextlib.suppress(OSError):
                seen = _append(fd, target, seen)
                os.unlink(tmp)
                # a writer already past its name lookup when the file was swapped out opens it
                # now: let it write, then carry what it wrote (bounded: one wait per writer)
                for _ in range(8):
                    if not _breaking(fd):
                        break
                    _let_go(fd)
                    time.sleep(0.001)  # its open goes on; then wait for it to close
                    if _lease(fd) == "none":
                        time.sleep(SETTLE_SECONDS)
                    seen = _append(fd, target, seen)
        self.close()

    def close(self) -> None:
        for _path, _target, _tmp, fd, _seen in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)  # lets the lease go
        self.fds = []


def _swap_in(
    path: str, target: str, tmp: str, want: object, originals: dict[str, bytes | None],
    swapped_out: dict[str, tuple[int, int]],
) -> str:
    """Put ``tmp`` at ``target``; return how (``exchanged``: the old file is now at ``tmp``,
    its size as verified and the new file's size in ``swapped_out``; ``new``: there was none;
    ``replaced``: the old bytes are in ``originals``)."""
    if want is None or (want is ANY and not os.path.lexists(target)):
        try:
            if _rename2(tmp, target, RENAME_NOREPLACE):
                return "new"
        except FileExistsError:
            if want is None:
                raise Stale(path, "it was created since it was checked") from None
            # appeared meanwhile and anything may be replaced: fall through
    elif os.path.lexists(target):
        ours = os.lstat(tmp).st_size  # the new file's size, taken just before the exchange
        if _rename2(tmp, target, RENAME_EXCHANGE):
            # what was swapped out is checked once nothing can write to it (``_Settling.hold``)
            with contextlib.suppress(OSError):  # its size as verified (else as swapped out)
                seen = len(want) if isinstance(want, bytes) else os.lstat(tmp).st_size
                swapped_out[tmp] = (seen, ours)
            return "exchanged"
    # No renameat2 here: check just before the replace.
    if want is not ANY:
        _check_current(path, target, want)  # type: ignore[arg-type]
    try:  # the shared guarded open: a pipe swapped in is refused, never waited on
        originals[target] = read_bytes(target)
    except FileNotFoundError:
        originals[target] = None
    os.replace(tmp, target)
    return "replaced"


def _roll_back(
    done: list[tuple[str, str, str]], originals: dict[str, bytes | None],
    swapped_out: Mapping[str, tuple[int, int]],
) -> None:
    for target, tmp, how in reversed(done):
        with contextlib.suppress(OSError):
            if how == "exchanged":
                _rename2(tmp, target, RENAME_EXCHANGE)
                if tmp in swapped_out:  # what was appended to ours while it stood in place
                    _carry_late_writes(tmp, target, swapped_out[tmp][1])
                os.unlink(tmp)
            elif how == "new":
                os.unlink(target)
            else:
                old = originals[target]
                if old is None:
                    os.unlink(target)
                else:
                    os.replace(_stage(target, old), target)


def _write_many(
    changes: Sequence[tuple[str, bytes]], folders: _Folders, expected: Mapping[str, bytes | None]
) -> None:
    staged: list[tuple[str, str, str]] = []
    made: list[str] = []
    try:
        for path, data in changes:
            with _naming(path):
                target = folders.via(path)
                staged.append((path, target, _stage(target, data, made)))
        for path, target, _tmp in staged:  # refuse early, before anything moves
            with contextlib.suppress(FileNotFoundError):
                mode = os.lstat(target).st_mode
                if not stat.S_ISREG(mode):  # a pipe or device is never replaced by a file
                    raise NotRegular(mode)
            if path in expected:
                _check_current(path, target, expected[path])
    except BaseException:
        for tmp in made:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    paths = [p for p, _t, _tmp in staged]
    done: list[tuple[str, str, str]] = []
    originals: dict[str, bytes | None] = {}
    swapped_out: dict[str, tuple[int, int]] = {}
    with interrupts.deferred():
        try:
            for path, target, tmp in staged:
                with _naming(path):
                    how = _swap_in(path, target, tmp, expected.get(path, ANY), originals,
                                   swapped_out)
                done.append((target, tmp, how))
        except BaseException:
            _roll_back(done, originals, swapped_out)
            for _path, _target, tmp in staged[len(done):]:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            interrupts.note_commit("rolled_back", paths)
            raise
        settling = _Settling()
        try:
            for (path, _t, _tmp), (target, tmp, how) in zip(staged, done, strict=True):
                if how == "exchanged" and tmp in swapped_out:  # the old file, swapped out
                    settling.hold(path, target, tmp, swapped_out[tmp][0],
                                  expected.get(path, ANY))
        except BaseException:
            settling.close()
            _roll_back(done, originals, swapped_out)
            interrupts.note_commit("rolled_back", paths)
            raise
        settling.finish()
        for _target, tmp, how in done:  # one that could not be held (it was not opened)
            if how == "exchanged" and os.path.lexists(tmp):
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        interrupts.note_commit("written", paths)
