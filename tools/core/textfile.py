"""Reading files as text, and splitting text into lines the way anchors count them.

A line is the text between ``\\n``s without the ``\\n``; a CRLF file keeps ``\\r`` in each
line. A final newline does not start another line, so ``"a\\nb\\n"`` has two lines.
Bytes that are not UTF-8 survive a read/write round trip (``surrogateescape``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kli.tools.core.jail import Jail

ENCODING = "utf-8"
ERRORS = "surrogateescape"
BINARY_SNIFF = 8192


class NotText(Exception):
    """The file holds binary data (a NUL byte near its start)."""


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


def read_text(path: str, jail: Jail | None = None) -> TextFile:
    """Read ``path`` as text; raises ``NotText`` for binary files and ``OSError`` as usual.

    With ``jail``, a file that turns out to lie outside the root once opened (a symlink
    swapped in after the jail resolved the path) is refused with ``OSError``."""
    with (jail.open_read(path) if jail is not None else open(path, "rb")) as fh:
        data = fh.read()
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
