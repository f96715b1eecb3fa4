"""Loading files as text — the one guarded way every tool reads a file — and splitting text
into lines the way anchors count them.

``open_regular`` is the guarded open: the path is stat-ed first (a directory, pipe, socket or
device is refused before it is opened), then opened with ``O_NONBLOCK`` so a FIFO swapped in
since the stat can never block the caller (the kernel's main thread), then checked again on
the open descriptor (``fstat``; with a jail, ``Jail.check_opened``: no symlink swapped in that
leads outside the root). ``read_text`` loads a whole file through it with an optional size
limit. Every refusal is a typed ``LoadError`` (an ``OSError``, so a caller that only knows
``OSError`` still reports it as an error); each tool words the verdict itself.

A line is the text between ``\\n``s without the ``\\n``; a CRLF file keeps ``\\r`` in each
line. A final newline does not start another line, so ``"a\\nb\\n"`` has two lines.
Encoding: bytes are decoded as UTF-8 with ``surrogateescape``, so bytes that are not UTF-8
are kept (never a refusal) and survive a read/write round trip; a NUL byte in the first
``BINARY_SNIFF`` bytes is the binary verdict (``NotText``).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from kli.tools.core.jail import Jail

ENCODING = "utf-8"
ERRORS = "surrogateescape"
BINARY_SNIFF = 8192
# O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer.
# O_NOCTTY: opening a terminal device never makes it the kernel's controlling terminal.
OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
# A code point no UTF-8 text, file name or command line can hold: a surrogate that
# surrogateescape does not map back to a byte (JSON carries them: "\ud800").
_LONE_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def lone_surrogate(text: str) -> int | None:
    """Index of the first lone surrogate in ``text`` that is not an undecodable byte
    (``\udc80``–``\udcff``, how the non-UTF-8 bytes of a file or a file name read), or None."""
    if text.isascii():
        return None
    found = _LONE_SURROGATE.search(text)
    return None if found is None else found.start()


class LoadError(OSError):
    """A path that cannot be loaded as text: the verdict's type says why."""


class IsDirectory(LoadError, IsADirectoryError):
    """The path is a directory."""

    def __init__(self) -> None:
        super().__init__(errno.EISDIR, "is a directory")


class NotRegular(LoadError):
    """The path is a pipe, socket or device: reading it could block or never end."""

    def __init__(self, mode: int) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({kind_of(mode)})")
        self.kind = kind_of(mode)


class TooLarge(LoadError):
    """The file is over the caller's size limit. ``size`` is its size when known (None when
    it grew past the limit while being read)."""

    def __init__(self, size: int | None, limit: int) -> None:
        super().__init__(errno.EFBIG, f"over the {limit}-byte limit")
        self.size = size
        self.limit = limit


class NotText(LoadError):
    """The file holds binary data (a NUL byte near its start)."""

    def __init__(self) -> None:
        super().__init__(errno.EINVAL, "binary file (it contains NUL bytes)")


def kind_of(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file"


def _verdict(mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise IsDirectory
    if not stat.S_ISREG(mode):
        raise NotRegular(mode)


def open_regular_fd(path: str, jail: Jail | None = None) -> int:
    """The guarded open (see the module docstring) as a raw descriptor in blocking mode; the
    caller closes it. Raises ``IsDirectory``/``NotRegular``, ``OSError`` from the open
    (``FileNotFoundError`` …), and with ``jail`` ``OSError(ESTALE)`` for a file that lies
    outside the root once opened."""
    _verdict(os.stat(path).st_mode)  # nothing but a regular file is even opened
    fd = os.open(path, OPEN_FLAGS)
    try:
        if jail is not None:
            jail.check_opened(fd, jail.rel(path))
        _verdict(os.fstat(fd).st_mode)  # swapped since the stat
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(path: str, jail: Jail | None = None) -> BinaryIO:
    """``open(path, "rb")`` through the guarded open (``open_regular_fd``)."""
    return os.fdopen(open_regular_fd(path, jail), "rb")


@dataclass(frozen=True)
class TextFile:
    text: str
    size: int

    @property
    def lines(self) -> list[str]:
        return split_lines(self.text)

    @property
    def crlf(self) -> bool:
        return "\r\n" in self.text


def decode(data: bytes) -> str:
    if b"\x00" in data[:BINARY_SNIFF]:
        raise NotText
    return data.decode(ENCODING, ERRORS)


def encode(text: str) -> bytes:
    return text.encode(ENCODING, ERRORS)


def read_bytes(path: str, jail: Jail | None = None, *, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` through the guarded open; ``TooLarge`` past
    ``limit`` (checked before reading, and again if the file grew meanwhile)."""
    with open_regular(path, jail) as fh:
        if limit is None:
            return fh.read()
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise TooLarge(size, limit)
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(None, limit)
    return data


def read_text(path: str, jail: Jail | None = None, *, limit: int | None = None) -> TextFile:
    """Load ``path`` as text: the one loader the tools share.

    Raises a ``LoadError`` verdict (``IsDirectory``, ``NotRegular``, ``TooLarge``,
    ``NotText``) or ``OSError`` as the open gives it (``FileNotFoundError`` …). With
    ``jail``, a file that turns out to lie outside the root once opened (a symlink swapped in
    after the jail resolved the path) is refused with ``OSError``."""
    data = read_bytes(path, jail, limit=limit)
    return TextFile(decode(data), len(data))


def split_lines(text: str) -> list[str]:
    if text == "":
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def join_lines(lines: list[str], *, trailing_newline: bool = True) -> str:
    if not lines:
        return ""
    return "\n".join(lines) + ("\n" if trailing_newline else "")


# -- what a change keeps: the byte-order mark and each line's ending ----------------------------
# The one home of both rules, for every tool that changes a file's text (edit, write, ws_edit,
# ws_write, ws_patch): new lines take their neighbours' ending, and a file that began with a
# UTF-8 byte-order mark still begins with it.
BOM = "\ufeff"


def ending_near(lines: Sequence[str], index: int, *, final_newline: bool = True) -> str:
    """The ending a new line placed at line ``index`` (0-based) takes: ``"\\r"`` (CRLF, kept in
    the line as anchors count it) or ``""`` (LF).

    That of line ``index`` itself (the line a range replaces, or the anchor an insert is placed
    by), else of the nearest line with a known ending, looking outward (the last line has none
    when the text has no final newline). ``""`` when no line has one."""
    known = len(lines) if final_newline else len(lines) - 1
    if known <= 0:
        return ""
    index = min(max(index, 0), known - 1)
    for step in range(known):
        for at in (index - step, index + step):
            if 0 <= at < known:
                return "\r" if lines[at].endswith("\r") else ""
    return ""


def break_at(text: str, offset: int) -> str:
    """The line break (``"\\r\\n"`` or ``"\\n"``) of the line holding ``offset`` in ``text``: the
    break ending that line, else the one before it; ``"\\n"`` when the text has none."""
    nl = text.find("\n", offset)
    if nl < 0:
        nl = text.rfind("\n", 0, offset)
    return "\r\n" if nl > 0 and text[nl - 1] == "\r" else "\n"


def with_breaks(new: str, brk: str) -> str:
    """``new`` with each bare ``\\n`` written as ``brk`` (a ``\\r\\n`` already there is kept)."""
    if brk == "\n" or "\n" not in new:
        return new
    return "\r\n".join(part[:-1] if part.endswith("\r") else part for part in new.split("\n"))


def keep_bom_lines(before: Sequence[str], after: list[str]) -> list[str]:
    """``after`` (lines) with the byte-order mark of ``before`` at the start again: when the
    old first line (BOM and all) was moved down by lines put before it, its BOM goes back to
    line 1; when line 1 was replaced, the new line 1 gets it. ``after`` is changed in place
    and returned. Nothing changes when ``before`` had no BOM or ``after`` is empty."""
    if not before or not before[0].startswith(BOM) or not after or after[0].startswith(BOM):
        return after
    for i in range(1, len(after)):
        if after[i] == before[0]:
            after[i] = after[i][len(BOM):]
            break
    after[0] = BOM + after[0]
    return after


def keep_bom(before: str, after: str) -> str:
    """``keep_bom_lines`` for whole texts (see there)."""
    if not before.startswith(BOM) or after == "" or after.startswith(BOM):
        return after
    return "\n".join(keep_bom_lines(before.split("\n", 1)[:1], after.split("\n")))
