"""kli-scan's command line and the parser of its records (native/kli-scan/src/main.rs).

Contract::

    argv(binary, pattern, top, max_bytes=..., max_entries=..., skip_dirs=..., name_glob=...)
        -> the command line
    parse(out, top) -> (lines, verdicts, listing | None)

kli-scan walks ``top`` (root-relative, "" for the root) once, in parallel, and writes a record
per regular file and symlink: the file's count of matching lines when it read it whole as
text, "binary" when a NUL lies before ``BINARY_SNIFF`` (exactly search's own sniff), "large"
over ``max_bytes``, a file left to the caller (a NUL further on, unreadable), a symlink (never
followed), and at the end how many entries it met. Names are their exact bytes (NUL-separated
records): nothing in a name can forge a record, so the verdicts are always used, and the
listing stands in for the caller's walk where that walk would visit the folder whole
(``run.listing_for``, ``walk.walk(listed=)``: the jail's rules — globs, temporary files,
symlinks inside the root only — are applied to it there). It reads no ignore file and no
encoding by construction.
"""

from __future__ import annotations

from collections.abc import Iterable

from kli.tools.core.textfile import BINARY_SNIFF
from kli.tools.file.walk import Listing


def argv(binary: str, pattern: str, top: str, *, max_bytes: int, max_entries: int,
         skip_dirs: Iterable[str], name_glob: str | None = None) -> list[str]:
    """kli-scan's command line. Past ``max_entries`` (the walk's entry bound) it stops: the
    caller then walks itself (and stops there), with no need to read the rest of a huge tree."""
    args = [binary, "--max-filesize", str(max_bytes), "--sniff", str(BINARY_SNIFF),
            "--max-entries", str(max_entries)]
    for name in sorted(skip_dirs):
        args += ["--skip-dir", name]
    if name_glob:
        args += ["--name", name_glob]
    return [*args, "--regexp", pattern, "--", top or "."]


def parse(out: bytes, top: str) -> tuple[dict[str, int], dict[str, str], Listing | None]:
    """kli-scan's ``KIND\\0PATH\\0NUMBER\\0`` records: C (text read whole: NUMBER matching
    lines), B (a NUL at offset NUMBER, before the sniff's end), L (NUMBER bytes, over the cap),
    U (a file it left to the caller), S (a symlink), V (last: NUMBER entries met). Paths are the
    names' bytes, decoded as ``os.fsdecode``. The listing is None when the V record is missing
    (kli-scan did not finish)."""
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    del out
    lines: dict[str, int] = {}
    verdicts: dict[str, str] = {}
    files: list[str] = []
    symlinks: list[str] = []
    visited = -1
    kinds, paths, numbers = fields[0:-1:3], fields[1::3], fields[2::3]
    for kind, path, number in zip(kinds, paths, numbers, strict=False):
        if kind == "C":
            lines[path] = int(number)
        elif kind == "B":
            verdicts[path] = "binary"
        elif kind == "L":
            verdicts[path] = "large"
        elif kind == "S":
            symlinks.append(path)
            continue
        elif kind == "V":
            visited = int(number)
            continue
        files.append(path)
    listing = None if visited < 0 else Listing(top, files, symlinks, visited)
    return lines, verdicts, listing
