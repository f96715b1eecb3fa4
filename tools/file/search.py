"""``search``: a regular expression over one file or a glob, with anchors for edit.

Spec (kli-tools.txt, search): match lines come back as ``*LINE:HH|content``, context lines as
`` LINE:HH|content``; ``context`` lines around each match (default 0); each matching file is
read whole so its anchors are recorded (an edit after a search needs no read); files that fail
to read as text are skipped; files over 2 MiB are skipped and counted; at most
``MAX_FILES`` matching files and ``MAX_MATCH_LINES`` rendered match lines; the walk bounds of
find (``kli.tools.file.walk``) apply, and the time bound covers the scan as well.

How a file is searched: as one buffer with the compiled pattern (``re.MULTILINE``). Each
``search`` call jumps to the next match anywhere in the buffer; its line is found by counting
newlines since the previous match (C speed), and the scan resumes at the next line, so the
Python work is per matching line, never per line. A match that runs past its line's end is
re-checked against that line alone, so the pattern is matched against each line as the spec
says (``^`` and ``$`` match at each line's start and end; ``\\A``, ``\\Z`` and lookarounds
still see the whole file).

A folder or glob search first runs a native first pass (``kli.tools.file.firstpass``:
kli-scan, built with this package, else the ``ripgrep`` wheel's rg; ``details.engine_pass``
names it), started before the walk, for each text file's count of matching lines, with the
pattern translated by ``firstpass.rust_regex``. kli-scan also lists the folder and settles binary and oversized files, so where
the walk would visit the folder whole its listing stands in for the walk and no file it settled
is sniffed here; the rest of this paragraph says "rg" for either. Where the translation is exact (``details.engine == "rg"``) a file that is not
shown is settled by rg's count alone; the files shown are read and matched here as above (their
anchors recorded). Where it is a superset (``"rg+python"``: ``.``, ``\\b``, look-arounds …) rg only
rules out files; every file it picked is matched here. Files rg did not read whole (a NUL
anywhere, over 2 MiB, a symlink, a notebook) are settled here as before: binary / over 2 MiB by
rg's own log of why it left them out (``Counts.verdicts``: a NUL before the 8 KiB the sniff
reads, the size) where the walk saw no file name that could forge a line of it, else by a
cheap look (``firstpass.sniff``); the files with a name that is nearly always binary (``.pyc``,
``.so`` …) then get that look while rg is still running (``sniff.sniff_meanwhile``), since
waiting for rg is idle time here — the name only orders the work, the bytes decide. Without rg (not
installed, switched off by ``KLI_SEARCH_NO_RG``, the pattern beyond it, the walk cut short)
everything is matched here (``"python"``), and ``details.engine_note`` says why. The answers
are the same either way (tests/tools/file/test_search_rg.py).

A single file named by ``path`` (no glob) is searched whatever its size, in newline-aligned
chunks of ``CHUNK_BYTES`` (this is how ``read`` tells the model to inspect a file over 2 MiB);
the 2 MiB skip applies to files reached through a glob or a folder.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from wcmatch import glob as wc_glob

from kli.tools.core import rx as rx_mod
from kli.tools.core.jail import Jail
from kli.tools.core.registry import GATE_READ, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.textfile import (
    BINARY_SNIFF,
    ENCODING,
    ERRORS,
    NotText,
    decode,
    open_regular,
    open_regular_fd,
    split_lines,
)
from kli.tools.file import cellview
from kli.tools.file import walk as walk_mod
from kli.tools.file.anchors import cut_notice, record_view, render_row
from kli.tools.file.firstpass import Answer, FirstPass
from kli.tools.file.firstpass.rust_regex import translate
from kli.tools.file.read import MAX_READ_BYTES
from kli.tools.notebook import address
from kli.tools.notebook.disk import MAX_NOTEBOOK_BYTES
from kli.tools.notebook.model import NotebookError
from kli.tools.notebook.model import parse as parse_notebook

MAX_FILES = 100  # spec: at most 100 matching files
MAX_MATCH_LINES = 1000  # spec: at most 1000 rendered match lines
MAX_FILE_BYTES = MAX_READ_BYTES  # spec: files over 2 MiB are skipped (glob / folder searches)
MAX_CONTEXT = 50  # context lines each side, clamped (not in the spec)
CHUNK_BYTES = 4 * 1024 * 1024  # block size when scanning one large named file


@dataclass
class _FileHits:
    """Matching lines of one file: the first ``keep`` (0-based), and how many in all."""

    hits: list[int] = field(default_factory=list)
    count: int = 0


def match_lines(
    rx: Any,
    text: str,
    base: int,
    out: _FileHits,
    keep: int,
    deadline: float | None = None,
    *,
    count_all: bool = True,
) -> None:
    """Add the 0-based numbers (offset by ``base``) of lines of ``text`` that ``rx`` matches.

    ``text`` is whole lines (it ends with ``\\n`` unless it is the file's tail). The next match
    at or after a position is looked up once per matching line; non-matching stretches are
    skipped by the regex engine. With a ``deadline`` (``time.monotonic()``), ``rx`` is a
    ``kli.tools.core.rx`` pattern, the lookups share one ``finditer`` given the time left
    (a timer per call would cost more than the match), and ``TimeoutError`` is raised when it
    runs out. With ``count_all=False`` the scan stops once ``keep`` lines are kept.
    """
    n = len(text)
    tail_ends_line = n == 0 or text.endswith("\n")
    pos = 0
    line = base
    counted_to = 0
    if deadline is None:
        find = rx.search

        def recheck(start: int, end: int) -> Any:
            return rx.search(text, start, end)
    else:
        find = _Finder(rx, text, deadline)

        def recheck(start: int, end: int) -> Any:
            return rx.search(text, start, end, timeout=rx_mod.budget(deadline, time.monotonic()))

    while pos <= n:
        m = find(text, pos)
        if m is None:
            break
        s = m.start()
        if s >= n and tail_ends_line:
            break  # the empty "line" after a final newline is not a line
        line += text.count("\n", counted_to, s)
        counted_to = s
        line_start = text.rfind("\n", 0, s) + 1
        line_end = text.find("\n", s)
        if line_end < 0:
            line_end = n
        if m.end() <= line_end or recheck(line_start, line_end) is not None:
            out.count += 1
            if len(out.hits) < keep:
                out.hits.append(line)
            elif not count_all:
                break
        pos = line_end + 1


class _Finder:
    """``find(text, pos)``: the leftmost match starting at or after ``pos``, from one
    ``finditer`` (restarted when ``pos`` falls inside ground it already covered, or when its
    next match starts before ``pos``)."""

    def __init__(self, rx: Any, text: str, deadline: float) -> None:
        self.rx, self.text, self.deadline = rx, text, deadline
        self.it: Iterator[Any] | None = None
        self.resume = 0  # where the iterator goes on from

    def _restart(self, pos: int) -> None:
        budget = rx_mod.budget(self.deadline, time.monotonic())
        self.it = self.rx.finditer(self.text, pos, timeout=budget)
        self.resume = pos

    def __call__(self, text: str, pos: int) -> Any:
        if self.it is None or pos < self.resume:
            self._restart(pos)
        assert self.it is not None
        for m in self.it:
            self.resume = m.end()
            if m.start() >= pos:
                return m
            # Another match on a line already counted: start afresh at pos rather than pull
            # every match of a busy line (or one that overlaps pos and could hide another).
            self._restart(pos)
            return self(text, pos)
        self.it = None
        self.resume = len(text) + 1
        return None


def _chunks(fh: Any, first: bytes) -> Iterator[bytes]:
    """Newline-aligned blocks of a binary file handle, starting with ``first``."""
    carry = first
    while True:
        block = fh.read(CHUNK_BYTES)
        if not block:
            if carry:
                yield carry
            return
        carry += block
        cut = carry.rfind(b"\n")
        if cut < 0:
            continue
        yield carry[: cut + 1]
        carry = carry[cut + 1 :]


@dataclass
class _Scan:
    """What the scan of all files found."""

    # Rendered at once while the file's text is in memory, so at most one file's text is
    # held at a time: (rows, match lines shown, lines shown cut).
    shown: list[tuple[list[str], int, int]] = field(default_factory=list)
    files_matched: int = 0
    lines_matched: int = 0
    searched: int = 0
    too_large: list[str] = field(default_factory=list)
    binary: int = 0
    unreadable: int = 0
    timed_out: bool = False
    pattern_timeout: str | None = None  # the file where a match call ran out of time


def _targets(
    call: Call, path: str, first: FirstPass
) -> tuple[list[str], bool, walk_mod.WalkResult | None]:
    """Files to search (root-relative), whether ``path`` named one file, and the walk (if any).
    ``first`` is started just before a walk (``walk.top``'s answer) and may list the folder for
    it (``FirstPass.listing``)."""
    jail = call.ws.jail
    literal = os.path.join(jail.root, path) if not os.path.isabs(path) else path
    if not wc_glob.is_magic(path, flags=walk_mod.GLOB_FLAGS) or os.path.lexists(literal):
        resolved = jail.resolve(path)
        if os.path.isdir(resolved.real):
            prefix = "" if resolved.rel == "." else wc_glob.escape(resolved.rel) + "/"
            began = time.monotonic()
            first.start("" if resolved.rel == "." else resolved.rel, None)
            listed = first.listing(prefix + "**", began)
            result = walk_mod.walk(jail, prefix + "**", listed=listed, started=began)
            return result.paths, False, result
        if not os.path.exists(resolved.real):
            raise ToolError(
                f"search failed: {resolved.rel} does not exist. Give an existing file, a folder, "
                "or a glob such as src/**/*.py (find lists paths).",
                error="not_found",
                path=resolved.rel,
            )
        if not os.path.isfile(resolved.real):  # a FIFO or device would block or never end
            raise ToolError(
                f"search failed: {resolved.rel} is not a regular file (a pipe, socket or "
                "device); give a file, a folder or a glob.",
                error="not_regular",
                path=resolved.rel,
            )
        return [resolved.rel], True, None
    began = time.monotonic()
    first.start(*walk_mod.top(jail, path))
    listed = first.listing(path, began)
    result = walk_mod.walk(jail, path, listed=listed, started=began)
    return result.paths, False, result


def _scan(
    call: Call,
    rx: Any,
    rels: list[str],
    single: bool,
    deadline: float,
    context: int,
    first: Answer | None = None,
) -> _Scan:
    scan = _Scan()
    root = call.ws.jail.root.rstrip("/") + "/"
    counts = first.counts.lines if first is not None else None
    exact = first is not None and first.exact
    get = counts.get if counts is not None else None
    clock = time.monotonic
    for index, rel in enumerate(rels):
        if index & 15 == 0 and clock() > deadline:
            scan.timed_out = True
            break
        # A notebook is searched as cells, never by its JSON text (a cheap test first: every
        # notebook name ends in b or B).
        notebook = rel[-1:] in "bB" and address.is_notebook(rel)
        if get is not None and not notebook:
            # The first pass (firstpass): a text file it counted needs no reading unless its
            # lines are shown (or, for a superset pattern, it may match). This branch runs
            # once per file of the tree: it stays lean.
            found = get(rel, -1)
            if found == 0:
                scan.searched += 1
                continue
            if found > 0 and exact and (
                scan.files_matched >= MAX_FILES or scan.lines_matched >= MAX_MATCH_LINES
            ):  # nothing more is shown: rg's count is the answer
                scan.searched += 1
                scan.files_matched += 1
                scan.lines_matched += found
                continue
            if found == -1:  # not read whole by rg: binary, too large, a symlink, …
                assert first is not None
                verdict = first.verdict(rel)
                if verdict == "binary":
                    scan.binary += 1
                    continue
                if verdict == "large" and not single:
                    scan.too_large.append(rel)
                    continue
        real = root + rel
        hits = _FileHits()
        keep = MAX_MATCH_LINES - scan.lines_matched if scan.files_matched < MAX_FILES else 0
        keep = max(keep, 0)
        text_lines: list[str] | None = None
        try:
            # A raw descriptor rather than open(): no buffered reader per file (this loop runs
            # once per file of the tree, and the object setup showed in profiles). The shared
            # guarded open: a FIFO swapped in never blocks, an outside symlink is refused.
            fd = open_regular_fd(real, call.ws.jail)
        except OSError:
            scan.unreadable += 1
            continue
        try:
            size = os.fstat(fd).st_size
            # A notebook's size is mostly outputs, which are not searched: its cap is the
            # notebook loader's, so a notebook with plots is still searched as cells.
            cap = MAX_NOTEBOOK_BYTES if notebook else MAX_FILE_BYTES
            if size > cap and not single:
                scan.too_large.append(rel)
                continue
            if size <= cap:
                data = _read_small(fd, size, cap)
                if data is None:  # grew past the cap since the fstat
                    scan.too_large.append(rel)
                    continue
                text = data.decode(ENCODING, ERRORS)  # _read_small already sniffed for NUL
                scan.searched += 1
                if notebook and _scan_notebook(
                    call, rx, rel, real, text, scan, keep, deadline, context
                ):
                    continue
                match_lines(rx, text, 0, hits, keep, deadline)
                if hits.count and keep:
                    text_lines = split_lines(text)
            else:
                with open(fd, "rb", closefd=False) as fh:
                    head = fh.read(BINARY_SNIFF)
                    if b"\x00" in head:
                        raise NotText
                    scan.searched += 1
                    base = 0
                    for block in _chunks(fh, head):
                        chunk = decode(block)
                        match_lines(rx, chunk, base, hits, keep, deadline)
                        base += chunk.count("\n")
                        if time.monotonic() > deadline:
                            scan.timed_out = True
                            break
        except NotText:
            scan.binary += 1
            continue
        except TimeoutError:  # before OSError, its base class: the pattern ran out of time
            scan.pattern_timeout = rel
            scan.timed_out = True
        except OSError:
            scan.unreadable += 1
            continue
        finally:
            os.close(fd)
        if hits.count:
            scan.files_matched += 1
            scan.lines_matched += hits.count
            if hits.hits:
                rows, cut_count = _render_file(call, rel, real, hits, text_lines, context)
                scan.shown.append((rows, len(hits.hits), cut_count))
        if scan.timed_out:
            break
    return scan


def _scan_notebook(
    call: Call,
    rx: Any,
    rel: str,
    real: str,
    text: str,
    scan: _Scan,
    keep: int,
    deadline: float,
    context: int,
) -> bool:
    """Search a notebook's cell sources, not its JSON: each cell with a hit is shown under a
    header ``PATH#CELL_ID (N matching lines)`` with rows numbered inside the cell, and its view
    recorded (so edit can use the anchors). False when ``text`` is not a notebook (it is then
    searched as text)."""
    try:
        nb = parse_notebook(text)
    except NotebookError:
        return False
    loaded = cellview.Loaded(os.path.realpath(real), rel, nb, nb.ids())
    matched = 0
    for index, cid in enumerate(loaded.ids):
        hits = _FileHits()
        source = nb.source(index)
        match_lines(rx, source, 0, hits, keep, deadline)
        if not hits.count:
            continue
        matched += hits.count
        if hits.hits:
            lines = split_lines(source)
            wanted = {i for h in hits.hits for i in range(h - context, h + context + 1)}
            marks = {i + 1: ("*" if i in hits.hits else " ") for i in wanted if 0 <= i < len(lines)}
            shown = cellview.show_cell(
                call.session,
                loaded,
                index,
                marker_for=marks,
                only=set(marks),
            )
            note = "" if len(hits.hits) == hits.count else f", first {len(hits.hits)} shown"
            rows = [
                f"{rel}#{cid} ({hits.count} matching line{'s' if hits.count != 1 else ''}"
                f"{note}; {nb.cells[index].get('cell_type')} cell {index + 1}/{len(loaded.ids)})",
                *shown.rows,
            ]
            scan.shown.append((rows, len(hits.hits), shown.cut))
            keep = max(keep - len(hits.hits), 0)
    if matched:
        scan.files_matched += 1
        scan.lines_matched += matched
        cellview.record_outline(call.session, loaded)
    return True


def _read_small(fd: int, size: int, cap: int = MAX_FILE_BYTES) -> bytes | None:
    """The whole file behind ``fd`` (about ``size`` bytes), or None once over the cap.

    Raises ``NotText`` when the first ``BINARY_SNIFF`` bytes hold a NUL, before reading more."""
    data = os.read(fd, min(size + 1, BINARY_SNIFF))
    if b"\x00" in data:
        raise NotText  # binary: do not read the rest
    if len(data) == BINARY_SNIFF:
        data += os.read(fd, size + 1 - len(data))
    if len(data) <= size:
        return data
    parts = [data]
    total = len(data)
    while part := os.read(fd, 1 << 16):
        parts.append(part)
        total += len(part)
        if total > cap:
            return None
    return b"".join(parts)


def _needed_lines(jail: Jail, real: str, wanted: set[int]) -> dict[int, str]:
    """Lines (0-based numbers in ``wanted``) of a large file, read again block by block (through
    the jail's verified open, like the first pass)."""
    got: dict[int, str] = {}
    base = 0
    top = max(wanted)
    with open_regular(real, jail) as fh:
        for block in _chunks(fh, b""):
            count = block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
            if any(base <= w < base + count for w in wanted):
                for i, line in enumerate(split_lines(decode(block))):
                    if base + i in wanted:
                        got[base + i] = line
            base += count
            if base > top:
                break
    return got


def _render_file(
    call: Call, rel: str, real: str, hits: _FileHits, lines: list[str] | None, context: int
) -> tuple[list[str], int]:
    """Rows for one file (header first) and how many lines were shown cut; records the view."""
    windows: list[tuple[int, int]] = []
    for h in hits.hits:
        lo, hi = h - context, h + context
        if windows and lo <= windows[-1][1] + 1:
            windows[-1] = (windows[-1][0], hi)
        else:
            windows.append((lo, hi))
    if lines is None:
        wanted = {i for lo, hi in windows for i in range(max(lo, 0), hi + 1)}
        got = _needed_lines(call.ws.jail, real, wanted)
    else:
        got = None
    hit_set = set(hits.hits)
    shown_note = "" if len(hits.hits) == hits.count else f", first {len(hits.hits)} shown"
    rows = [f"{rel} ({hits.count} matching line{'s' if hits.count != 1 else ''}{shown_note})"]
    shown: dict[int, str] = {}
    cut: set[int] = set()
    for w, (lo, hi) in enumerate(windows):
        if w and context:
            rows.append("--")
        for i in range(max(lo, 0), hi + 1):
            if lines is not None:
                if i >= len(lines):
                    break
                text = lines[i]
            else:
                assert got is not None
                if i not in got:
                    break
                text = got[i]
            row, _hh, was_cut = render_row(i + 1, text, marker="*" if i in hit_set else " ")
            rows.append(row)
            shown[i + 1] = text
            if was_cut:
                cut.add(i + 1)
    # Views are keyed by the real path (a symlink's target), as read and edit key them.
    record_view(call.session, os.path.realpath(real), lines, shown, cut, whole=True)
    return rows, len(cut)


def _run(call: Call) -> ToolResult:
    pattern: str = call.args["pattern"]
    path: str = call.args["path"]
    context = int(call.args.get("context") or 0)
    notes: list[str] = []
    if context > MAX_CONTEXT:
        notes.append(f"[context clamped to {MAX_CONTEXT} lines.]")
        context = MAX_CONTEXT
    try:
        rx = rx_mod.compile(pattern, rx_mod.MULTILINE)
    except rx_mod.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        raise ToolError(
            f"search failed: invalid regular expression {pattern!r}: {exc.msg}{where}. "
            "Patterns use Python re syntax; escape a literal ( ) [ ] { } . * + ? | \\ ^ $ with a "
            "backslash (e.g. 'foo\\(' to find 'foo(').",
            error="bad_regex",
            regex_error=str(exc),
        ) from None
    started = time.monotonic()
    translation = translate(pattern, rx_mod.MULTILINE)
    first_pass = FirstPass(call.ws.jail, translation, MAX_FILE_BYTES)
    try:
        rels, single, walked = _targets(call, path, first_pass)
    except BaseException:
        first_pass.cancel()
        raise
    deadline = walked.deadline if walked is not None else started + walk_mod.MAX_SECONDS
    first: Answer | None = None
    if walked is not None and walked.stopped:
        first_pass.walk_stopped()
    else:
        trust_log = walked is not None and walked.newline_names is False
        first = first_pass.finish(deadline, trust_log=trust_log, sniff_meanwhile=rels)
    engine_note = first_pass.note
    if first is not None and not first.exact and translation is not None:
        superset = f"rg picked the files, Python matched: {translation.why}"
        engine_note = "; ".join(n for n in (superset, engine_note) if n)
    scan = _scan(call, rx, rels, single, deadline, context, first)

    rows: list[str] = []
    cut_total = 0
    for n, (file_rows, _count, cut_count) in enumerate(scan.shown):
        if n:
            rows.append("")
        rows.extend(file_rows)
        cut_total += cut_count
    shown_files = len(scan.shown)
    shown_lines = sum(count for _rows, count, _cut in scan.shown)

    if not scan.files_matched:
        rows.append(f"No matches for {pattern!r} in {scan.searched} file(s) searched.")
        if not rels:
            rows.append(f"No files match path {path!r}; check it with find.")
    if scan.files_matched > shown_files:
        notes.append(
            f"[{scan.files_matched - shown_files} more matching file(s) not shown: a search "
            f"shows at most {MAX_FILES} files and {MAX_MATCH_LINES} match lines. Narrow the "
            "path or the pattern.]"
        )
    if scan.lines_matched > shown_lines:
        notes.append(
            f"[{scan.lines_matched - shown_lines} more matching line(s) not shown: at most "
            f"{MAX_MATCH_LINES} match lines are shown ({scan.lines_matched} matched). Narrow "
            "the path or the pattern.]"
        )
    if scan.too_large:
        sample = ", ".join(scan.too_large[:5]) + (", …" if len(scan.too_large) > 5 else "")
        notes.append(
            f"[{len(scan.too_large)} file(s) over 2 MiB skipped ({sample}); search one of them "
            "by naming it alone as path.]"
        )
    if scan.binary:
        notes.append(f"[{scan.binary} binary file(s) skipped.]")
    if scan.unreadable:
        notes.append(f"[{scan.unreadable} unreadable file(s) skipped.]")
    if cut_total:
        notes.append(cut_notice(cut_total))
    stop = walked.stop_note() if walked is not None else ""
    if stop:
        notes.append(f"[{stop}]")
    if scan.pattern_timeout is not None:
        notes.append(rx_mod.timeout_note(walk_mod.MAX_SECONDS, scan.pattern_timeout))
    elif scan.timed_out:
        notes.append(
            f"[Search stopped at the {walk_mod.MAX_SECONDS:g} s time limit after searching "
            f"{scan.searched} file(s); results are partial. Narrow the path.]"
        )
    text = "\n".join(rows + notes)
    return ToolResult.success(
        text,
        pattern=pattern,
        path=path,
        files_matched=scan.files_matched,
        lines_matched=scan.lines_matched,
        files_shown=shown_files,
        lines_shown=shown_lines,
        searched=scan.searched,
        skipped_too_large=len(scan.too_large),
        skipped_binary=scan.binary,
        skipped_unreadable=scan.unreadable,
        stopped=(walked.stopped if walked is not None and walked.stopped else None)
        or ("pattern_time" if scan.pattern_timeout else "time" if scan.timed_out else None),
        engine=("rg" if first.exact else "rg+python") if first is not None else "python",
        engine_note=engine_note,
        engine_pass=first.counts.program if first is not None else None,
    )


TOOL = Tool(
    name="search",
    profile="kli",
    gate=GATE_READ,
    description=(
        "Search file contents with a regular expression (Python re syntax, matched against "
        "each line; use (?i) for case-insensitive) across one file, a folder, or a glob such "
        "as src/**/*.py. Output is grouped per file under a header line 'PATH (N matching "
        "lines)'; match lines come back as *LINE:HH|content and surrounding context lines as "
        " LINE:HH|content (space-prefixed), with '--' between separate groups. Each matching "
        "file shown is read whole, so its LINE:HH anchors are recorded and edit can use them "
        "with no separate read. context (default 0) is the number of lines shown around each "
        f"match (at most {MAX_CONTEXT}). Limits: at most {MAX_FILES} matching files and "
        f"{MAX_MATCH_LINES} match lines are shown, with the overflow counted; binary files "
        "are skipped; files over 2 MiB are skipped and counted when reached through a glob or "
        "folder, but a single file named as path is searched whatever its size (the way to "
        "inspect a file too large to read). Globs follow find's rules (version-control "
        f"folders skipped) and its bounds ({walk_mod.MAX_ENTRIES} entries, "
        f"{walk_mod.MAX_SECONDS:g} seconds), which are stated in the output when hit. An "
        "invalid regex is an error that says why. In a notebook (.ipynb) the cells' sources "
        "are searched, not its JSON: a hit is shown under 'nb.ipynb#CELL_ID (N matching "
        "lines)' with LINE:HH numbered inside the cell, ready for an '@@ nb.ipynb#CELL_ID' "
        "edit. A notebook is skipped only over 64 MiB (its outputs are not searched)."
    ),
    parameters={
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Regular expression (Python re) matched against each line.",
            },
            "path": {
                "type": "string",
                "description": "A single file, a folder, or a glob, e.g. src/**/*.py.",
            },
            "context": {
                "type": "integer",
                "minimum": 0,
                "description": "Lines of context around each match. Defaults to 0.",
            },
        },
        "required": ["pattern", "path"],
        "additionalProperties": False,
    },
    run=_run,
    main_arg="pattern",
    aliases={"regex": "pattern", "query": "pattern", "glob": "path", "context_lines": "context"},
    touches_image=False,
)
