"""rg's command line and the parsers of its two outputs: the per-file counts and the
``--debug`` log's verdicts. rg is the first pass where kli-scan is not built.

Contract::

    argv(binary, pattern, top, max_bytes=..., skip_dirs=..., name_glob=...) -> the command line
    parse_counts(out, top) -> {rel: matching lines}
    parse_verdicts(log_lines, top, max_bytes) -> {rel: "binary" | "large"}

rg runs ``rg --count --include-zero`` over the folder ``top`` (root-relative, "" for the root)
and returns, for every file rg read to its end as text, its count of matching lines, keyed by
the root-relative path. A file rg does not list — one holding a NUL byte anywhere, one over
``max_bytes``, a symlink (rg follows none), one it could not read — is for the caller to search
as before; so is every file whose lines the caller shows. The caller keeps its own walk (the
jail's rules, the glob, the bounds) and only looks rg's counts up for the files that walk gave.

The verdicts say why rg left a file out, where its ``--debug`` log says so: "binary" (rg
stopped at a NUL byte before offset ``BINARY_SNIFF``: exactly the files search's own sniff
calls binary; a NUL further on is no verdict, the caller reads the file as before) or "large"
(over ``max_bytes``). rg 14 reports binary files in no other output short of ``--json``; the
log costs rg one line per such file. The log is line-based and names files as they are, so a
file name holding a newline could forge a line: the caller uses the verdicts only when its walk
saw every name rg saw and none held a newline (``WalkResult.newline_names`` False); names rg
prints lossily (not UTF-8: U+FFFD) are left out. Without a verdict the caller sniffs.

rg runs with ``--no-config`` (no ``RIPGREP_CONFIG_PATH``), ``-uu`` (no ignore file of any kind
is read: ``.gitignore``, ``.ignore``, ``.rgignore``, the global git excludes — the Python path
reads none either, so the answers stay the same) and ``--encoding none`` (no BOM sniffing: a
UTF-16 file holds NULs and stays binary, as for search).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kli.tools.core.textfile import BINARY_SNIFF

_SIZE_LIMIT = "256M"  # rg's compiled-regex limits: the explicit Unicode sets are large


def argv(binary: str, pattern: str, top: str, *, max_bytes: int, skip_dirs: Iterable[str],
         name_glob: str | None = None) -> list[str]:
    """rg's command line (the module docstring says why each flag)."""
    args = [
        binary, "--no-config", "-uu", "--encoding", "none", "--count", "--include-zero",
        "--null", "--no-messages", "--debug", "--max-filesize", str(max_bytes),
        "--regex-size-limit", _SIZE_LIMIT, "--dfa-size-limit", _SIZE_LIMIT,
    ]
    for name in sorted(skip_dirs):
        args += ["--glob", f"!{name}/"]
    if name_glob:
        args += ["--glob", name_glob]
    return [*args, "--regexp", pattern, "--", top or "."]


_RECORD = re.compile(r"([^\0]*)\0([0-9]+)\n")
_RECORD_DOT = re.compile(r"\./([^\0]*)\0([0-9]+)\n")


def parse_counts(out: bytes, top: str) -> dict[str, int]:
    """``PATH\\0COUNT\\n`` records (a path may hold a newline, never a NUL), paths decoded as
    ``os.fsdecode`` does; rg given "." prints "./PATH"."""
    text = out.decode("utf-8", "surrogateescape")
    del out
    lines: dict[str, int] = {}
    for m in (_RECORD if top else _RECORD_DOT).finditer(text):
        lines[m.group(1)] = int(m.group(2))
    return lines


DEBUG = "rg: DEBUG|"  # the head of each line of rg's --debug log (not an error)
# rg 14.1's --debug lines for a file it stops reading at a NUL byte (grep_printer's summary
# printer: --count) and for one it skips by --max-filesize (the ignore crate's walk):
#   rg: DEBUG|grep_printer::summary|SRC:LINE: ignoring PATH: found binary data at offset N
#   rg: DEBUG|ignore::walk|SRC:LINE: ignoring PATH: N bytes
# rg's own suffix is the last one on the line, whatever PATH holds. Plain string operations
# per line: a regex over the log cost ~5 µs a line (16,800 lines on the benchmark tree).
_BINARY_HEAD = DEBUG + "grep_printer::summary|"
_BINARY_TAIL = ": found binary data at offset "
_LARGE_HEAD = DEBUG + "ignore::walk|"
_IGNORING = ": ignoring "


def parse_verdicts(log: Iterable[str], top: str, max_bytes: int) -> dict[str, str]:
    """rel -> "binary" | "large" from the lines of rg's ``--debug`` log (module docstring)."""
    cut = len(_IGNORING) + (0 if top else 2)  # rg given "." prints "./PATH"
    got: dict[str, str] = {}
    for line in log:
        if line.startswith(_BINARY_HEAD):
            head, _, offset = line.rpartition(_BINARY_TAIL)
            if not offset.isdigit() or int(offset) >= BINARY_SNIFF:
                continue
            verdict = "binary"
        elif line.startswith(_LARGE_HEAD) and line.endswith(" bytes"):
            head, _, size = line[:-6].rpartition(": ")
            if not size.isdigit() or int(size) <= max_bytes:
                continue
            verdict = "large"
        else:
            continue
        at = head.find(_IGNORING)  # the first: rg's SRC:LINE holds none
        if at < 0:
            continue
        path = head[at + cut:]
        if "\ufffd" not in path:  # a name rg printed lossily (not UTF-8) gets no verdict
            got[path] = verdict
    return got
