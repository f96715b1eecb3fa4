"""Atomic writes: a temporary file in the target's directory, then ``os.replace``.

``write_many`` makes a multi-file change whole-or-nothing: every temporary file is written and
flushed before any target is replaced, and if a replace fails part way the targets already
replaced are put back as they were.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Sequence


def _stage(path: str, data: bytes) -> str:
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".kli-tmp", dir=directory)
    try:
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
    tmp = _stage(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_many(changes: Sequence[tuple[str, bytes]]) -> None:
    """Write every ``(path, data)`` or none of them.

    Raises the first ``OSError`` after restoring whatever was already replaced.
    """
    staged: list[tuple[str, str]] = []
    try:
        for path, data in changes:
            staged.append((path, _stage(path, data)))
    except BaseException:
        for _path, tmp in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    originals: dict[str, bytes | None] = {}
    for path, _tmp in staged:
        try:
            with open(path, "rb") as fh:
                originals[path] = fh.read()
        except FileNotFoundError:
            originals[path] = None
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
                    write_atomic(path, old)
        for path, tmp in staged:
            if path not in done:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        raise
