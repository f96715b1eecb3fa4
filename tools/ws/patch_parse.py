"""ws_patch's parser: patch text → files → hunks. It applies nothing (see ws_patch.py).

Accepted forms (slmcode spec, ws_patch):
- ``unified`` — a unified diff with ``@@ -a,b +c,d @@`` hunks, optional ``---``/``+++`` (and
  ``diff --git``) headers naming files, ``a/`` ``b/`` prefixes stripped, several files allowed;
- ``search_replace`` — ``<<<<<<< SEARCH`` / ``=======`` / ``>>>>>>> REPLACE`` blocks;
- ``search_replace_headers`` — the same with plain ``SEARCH`` / ``=======`` / ``REPLACE`` lines;
- ``search_replace_bare`` — search text, a bare ``=======`` line, replacement text;
- ``minus_plus`` — a bare ``-``/``+`` block (context lines `` ``-prefixed), one anchorless hunk.

Drift repaired while parsing, each recorded in ``ParsedPatch.repairs``: Markdown fences around
(or inside) the diff are dropped (``fence_dropped``); unprefixed lines after a hunk's last diff
line are prose and dropped (``prose_dropped``); an unprefixed line followed by a diff line is a
context line whose leading space was forgotten (``forgotten_prefix``), and then every
space-prefixed context line is also kept whole as an alternative reading (``Hunk.alt_body``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kli.tools.ws.hunk import Body, line_diff

HUNK_HEADER = re.compile(r"^@@+ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@+(.*)$")
LOOSE_HUNK_HEADER = re.compile(r"^@@.*$")
FENCE = re.compile(r"^(```|~~~)[\w+.#-]*\s*$")
SR_START = re.compile(r"^(?:<{5,9} ?)?SEARCH:?\s*$")
SR_START_MARKER = re.compile(r"^<{5,9} ?SEARCH\s*$")
SR_SEP = re.compile(r"^={5,9}\s*$")
SR_END = re.compile(r"^(?:>{5,9} ?)?REPLACE:?\s*$")
SR_END_MARKER = re.compile(r"^>{5,9} ?REPLACE\s*$")
PATHLIKE = re.compile(r"^[\w./\\-]+\.[\w]+$|^[\w.-]+/[\w./-]+$")


class PatchParseError(ValueError):
    """The text is not a patch in any accepted form; the message says how to write one."""


@dataclass
class Hunk:
    """One change: ``body`` in order; ``old_start``/``old_count`` from the @@ line (None for
    an anchorless hunk — SEARCH/REPLACE blocks, bare -/+ blocks, ``@@ @@`` without numbers)."""

    body: Body
    header: str
    old_start: int | None = None
    old_count: int | None = None
    new_start: int | None = None
    new_count: int | None = None
    alt_body: Body | None = None  # the forgotten-prefix reading, when there is evidence
    no_newline_new: bool = False
    prefixed: bool = True  # its lines were written with ' ' / '-' / '+' (not SEARCH/REPLACE)

    @property
    def old_lines(self) -> list[str]:
        return [t for tag, t in self.body if tag != "+"]

    @property
    def new_lines(self) -> list[str]:
        return [t for tag, t in self.body if tag != "-"]

    @property
    def pure_insertion(self) -> bool:
        return not self.old_lines


@dataclass
class FilePatch:
    path: str | None
    hunks: list[Hunk] = field(default_factory=list)
    new_file: bool = False
    delete_file: bool = False


@dataclass
class ParsedPatch:
    format: str
    files: list[FilePatch]
    repairs: list[str] = field(default_factory=list)


def _strip_prefix(path: str) -> str | None:
    path = path.strip().split("\t")[0].strip()
    if path.startswith('"') and path.endswith('"') and len(path) >= 2:
        path = path[1:-1]
    if path == "/dev/null" or not path:
        return None
    if path.startswith(("a/", "b/")):
        path = path[2:]
    return path


def _wraps(lines: list[str], i: int) -> bool:
    """The fence at ``lines[i]`` wraps the diff (or a part of it) rather than being a line of
    a hunk: the next line that is not blank is a file or hunk header, or no diff line follows
    it. A fence inside a hunk, with its lines going on after it, is a line of a Markdown file
    whose context prefix was forgotten (dropping it would move the added lines)."""
    for ln in lines[i + 1 :]:
        if not ln.strip():
            continue
        if ln.startswith(("--- ", "+++ ", "diff ", "Index: ", "@@")) or SR_START_MARKER.match(ln):
            return True
        if ln[:1] in ("+", "-", " "):
            return False
    return True


def parse(text: str) -> ParsedPatch:
    """Parse ``text`` into files and hunks, or raise ``PatchParseError``."""
    repairs: list[str] = []
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
    kept = [ln for i, ln in enumerate(lines) if not (FENCE.match(ln) and _wraps(lines, i))]
    if len(kept) != len(lines):
        repairs.append("fence_dropped")
    lines = kept
    while lines and not lines[-1].strip():
        lines.pop()
    if not any(ln.strip() for ln in lines):
        raise PatchParseError("the patch is empty.")
    if any(SR_START_MARKER.match(ln) for ln in lines):
        return ParsedPatch("search_replace", _parse_search_replace(lines), repairs)
    if any(HUNK_HEADER.match(ln) or ln.startswith("@@") for ln in lines):
        return ParsedPatch("unified", _parse_unified(lines, repairs), repairs)
    if any(SR_START.match(ln) for ln in lines) and any(
        SR_SEP.match(ln) or SR_END.match(ln) for ln in lines
    ):
        return ParsedPatch("search_replace_headers", _parse_search_replace(lines), repairs)
    seps = [i for i, ln in enumerate(lines) if SR_SEP.match(ln)]
    if len(seps) == 1:
        i = seps[0]
        return ParsedPatch(
            "search_replace_bare",
            [FilePatch(None, [_sr_hunk(lines[:i], lines[i + 1 :], "SEARCH/REPLACE block 1")])],
            repairs,
        )
    if any(ln.startswith(("-", "+")) for ln in lines):
        return ParsedPatch("minus_plus", _parse_unified(lines, repairs, bare=True), repairs)
    raise PatchParseError(
        "no @@ hunk, SEARCH/REPLACE block or -/+ lines found. Send a unified diff "
        "(@@ -LINE,COUNT +LINE,COUNT @@ then ' ' context, '-' removed and '+' added lines) or "
        "a block: <<<<<<< SEARCH, the exact old lines, =======, the new lines, >>>>>>> REPLACE."
    )


# -- SEARCH / REPLACE -------------------------------------------------------------------------


def _sr_hunk(search: list[str], replace: list[str], header: str) -> Hunk:
    return Hunk(line_diff(search, replace), header, prefixed=False)


def _parse_search_replace(lines: list[str]) -> list[FilePatch]:
    files: list[FilePatch] = []
    current = FilePatch(None)
    state = "out"
    search: list[str] = []
    replace: list[str] = []
    via_sep = False
    last_text = ""
    n_blocks = 0

    def finish() -> None:
        nonlocal n_blocks
        n_blocks += 1
        current.hunks.append(_sr_hunk(search, replace, f"SEARCH/REPLACE block {n_blocks}"))

    for idx, line in enumerate(lines):
        if state == "out":
            if SR_START.match(line):
                path = last_text.strip().strip("`*:")
                if PATHLIKE.match(path) and path != current.path:
                    if current.hunks:
                        files.append(current)
                    current = FilePatch(path)
                state, search, replace, via_sep = "search", [], [], False
            elif line.strip():
                last_text = line
        elif state == "search":
            if SR_SEP.match(line):
                state, via_sep = "replace", True
            elif SR_END.match(line) and not SR_END_MARKER.match(line):
                state, via_sep = "replace", False  # SEARCH … REPLACE … with no separator
            else:
                search.append(line)
        elif state == "replace":
            rest = lines[idx + 1 :]
            if SR_END.match(line):
                header_like = (
                    via_sep
                    and not replace
                    and not SR_END_MARKER.match(line)
                    and any(ln.strip() for ln in rest)
                    and not SR_START.match(next((ln for ln in rest if ln.strip()), ""))
                )
                if header_like:
                    via_sep = False  # "=======" then a "REPLACE" header line
                    continue
                finish()
                state, last_text = "out", ""
            elif SR_START.match(line):
                finish()
                state, search, replace, via_sep = "search", [], [], False
            else:
                replace.append(line)
    if state == "search":
        raise PatchParseError(
            "a SEARCH block has no ======= separator: write <<<<<<< SEARCH, the exact old "
            "lines, =======, the new lines, >>>>>>> REPLACE."
        )
    if state == "replace":
        finish()
    if current.hunks:
        files.append(current)
    return files


# -- unified and bare -/+ ---------------------------------------------------------------------


def _is_diff_line(line: str) -> bool:
    return line[:1] in (" ", "-", "+", "\\")


def _body(
    raw: list[str], repairs: list[str], old_count: int | None = None
) -> tuple[Body, Body | None, bool]:
    """A hunk's raw lines → body, the forgotten-prefix alternative, no-newline flag. With the
    header's ``old_count``, indented unprefixed lines up to that many old lines are context
    that forgot its prefix, not prose (tab-indented code after the last change, read as
    prose, would leave the hunk's added lines without the context that places them); prose
    starts in column 0, and the header's count may be wrong."""
    last = max((i for i, ln in enumerate(raw) if _is_diff_line(ln)), default=-1)
    if old_count:
        seen = 0
        for i, ln in enumerate(raw):
            if i > last and ln and not ln[:1].isspace():
                break
            if ln[:1] in ("+", "\\"):
                continue
            seen += 1
            if seen == old_count:
                last = max(last, i)
                break
    if any(ln.strip() for ln in raw[last + 1 :]):
        repairs.append("prose_dropped")
    raw = raw[: last + 1]
    body: Body = []
    alt: Body = []
    forgot = False
    no_newline_new = False
    for line in raw:
        tag = line[:1]
        if tag == "\\":
            if body and body[-1][0] == "+":
                no_newline_new = True
            continue
        if tag in ("-", "+"):
            body.append((tag, line[1:]))
            alt.append((tag, line[1:]))
        elif tag == " ":
            body.append((" ", line[1:]))
            alt.append((" ", line))
        elif line == "":
            body.append((" ", ""))
            alt.append((" ", ""))
        else:
            forgot = True
            body.append((" ", line))
            alt.append((" ", line))
    if forgot and "forgotten_prefix" not in repairs:
        repairs.append("forgotten_prefix")
    has_space_ctx = any(line[:1] == " " for line in raw)
    return body, (alt if has_space_ctx else None), no_newline_new


def _parse_unified(lines: list[str], repairs: list[str], *, bare: bool = False) -> list[FilePatch]:
    files: list[FilePatch] = []
    current: FilePatch | None = None
    hunk_header: str | None = None
    raw: list[str] = []

    def close_hunk() -> None:
        nonlocal hunk_header, raw
        if hunk_header is None:
            return
        m = HUNK_HEADER.match(hunk_header)
        old_count = (int(m.group(2)) if m.group(2) is not None else 1) if m else None
        body, alt, no_nl = _body(raw, repairs, old_count)
        hunk = Hunk(body, hunk_header.strip(), alt_body=alt, no_newline_new=no_nl)
        if m:
            hunk.old_start = int(m.group(1))
            hunk.old_count = int(m.group(2)) if m.group(2) is not None else 1
            hunk.new_start = int(m.group(3))
            hunk.new_count = int(m.group(4)) if m.group(4) is not None else 1
        if body:
            assert current is not None
            current.hunks.append(hunk)
        hunk_header, raw = None, []

    def file_for(path: str | None) -> FilePatch:
        nonlocal current
        if current is None or current.hunks or current.path is not None:
            current = FilePatch(path)
            files.append(current)
        else:
            current.path = path
        return current

    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.startswith("diff --git "):
            close_hunk()
            parts = line.split()
            file_for(_strip_prefix(parts[-1]) if len(parts) >= 4 else None)
            i += 1
            continue
        if line.startswith("--- ") and nxt.startswith("+++ "):
            close_hunk()
            old_path, new_path = _strip_prefix(line[4:]), _strip_prefix(nxt[4:])
            fp = current if current is not None and not current.hunks else None
            if fp is None or (fp.path is not None and fp.path != (new_path or old_path)):
                fp = file_for(new_path or old_path)
            fp.path = new_path or old_path
            fp.new_file = old_path is None and new_path is not None
            fp.delete_file = new_path is None
            i += 2
            continue
        if line.startswith("@@"):
            close_hunk()
            if current is None:
                file_for(None)
            hunk_header, raw = line, []
            i += 1
            continue
        if line.startswith(
            ("Index: ", "index ", "new file mode", "deleted file mode", "similarity")
        ):
            i += 1
            continue
        if hunk_header is not None:
            raw.append(line)
        elif bare and (_is_diff_line(line) or raw):
            # A bare -/+ block: everything from the first diff line is one anchorless hunk.
            if current is None:
                file_for(None)
            hunk_header, raw = "-/+ block", [line]
        i += 1
    close_hunk()
    files = [f for f in files if f.hunks or f.new_file or f.delete_file]
    if not files:
        raise PatchParseError(
            "the diff has no hunk lines: after each @@ line give ' ' context, '-' removed and "
            "'+' added lines."
        )
    return files
