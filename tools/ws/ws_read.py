"""ws_read — a windowed slice of a file as numbered lines (``%6d|line``).

The window is ``read_window_lines`` (120) lines by default; ``offset`` (1-based) and ``limit``
move and size it. A second, hard ceiling caps any single read at roughly 15 % of the context
window (``context_window_tokens`` × 4 chars × 0.15), and never above ``max_tool_chars``, so
the window is cut at a line boundary and the paging footer stays exact. When the window does
not cover the whole file the result ends with the spec's footer and the exact next call.
"""

from __future__ import annotations

import os

from wcmatch import glob as wc_glob

from kli.tools.core.jail import Jail
from kli.tools.core.registry import GATE_READ, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.session import FileView
from kli.tools.core.textfile import (
    BINARY_SNIFF,
    IsDirectory,
    NotRegular,
    NotText,
    open_regular,
    split_lines,
)
from kli.tools.file import cellview
from kli.tools.file.walk import walk
from kli.tools.notebook import address, outputs
from kli.tools.ws import cells
from kli.tools.ws.common import call_setting, compact_json, read_ceiling_chars

GUTTER = "%6d|"
# A single line longer than this is shown cut (minified files); its number is recorded as cut.
MAX_LINE_CHARS = 2000
# Room kept under the ceiling for the footer lines.
FOOTER_RESERVE = 400
# How far the missing-file suggestion search may look.
SUGGEST_MAX_ENTRIES = 20_000
SUGGEST_MAX_SECONDS = 0.5
SUGGEST_COUNT = 5
READ_CHUNK = 1 << 20

DESCRIPTION = """Read a file as numbered lines, one window at a time.
Returns 120 lines by default, each shown as `     42|text` — the number and `|` are display only:
never copy them into ws_edit's old_str. Parameters: path (relative to the project root), offset
(first line to show, 1-based, default 1), limit (how many lines, default 120). One read is also
capped in characters; when the window does not cover the whole file the result ends with the
exact ws_read call for the next page. To find where a symbol is, use ws_grep first and then
ws_read with offset near the hit. Reading a file is required before ws_write may overwrite it.
A notebook (.ipynb) reads as cells: a `── nb.ipynb#CELL_ID · cell N/M · code · …` header per
cell, then its lines numbered from 1 inside the cell; path nb.ipynb#CELL_ID reads one cell
(offset/limit inside it) with its outputs, bounded. ws_edit and ws_patch take the same
nb.ipynb#CELL_ID path to change one cell."""


def _window(real: str, first: int, last: int, jail: Jail | None = None) -> tuple[int, dict[int, str]]:
    """The file's line count and its lines ``first..last`` (1-based), streamed so a huge file
    is never held in memory. Lines are counted as ``split_lines`` counts them (a final newline
    does not start another line). Raises ``NotText`` for a binary file."""
    kept: dict[int, str] = {}
    with open_regular(real, jail) as fh:  # the shared guarded open: never blocks on a FIFO
        if b"\x00" in fh.read(BINARY_SNIFF):
            raise NotText
        fh.seek(0)
        n = 0
        while n < last:
            raw = fh.readline()
            if not raw:
                return n, kept
            n += 1
            if n >= first:
                kept[n] = raw.decode("utf-8", "replace").rstrip("\n")
        # Past the window only the count matters: count newlines chunk by chunk.
        newlines, final, seen = 0, b"\n", False
        while chunk := fh.read(READ_CHUNK):
            seen = True
            newlines += chunk.count(b"\n")
            final = chunk[-1:]
        return n + newlines + (1 if seen and final != b"\n" else 0), kept


def _suggest(call: Call, path: str) -> list[str]:
    name = os.path.basename(path.rstrip("/"))
    if not name:
        return []
    try:
        found = walk(
            call.ws.jail,
            "**/" + wc_glob.escape(name),
            max_entries=SUGGEST_MAX_ENTRIES,
            max_seconds=SUGGEST_MAX_SECONDS,
        )
    except ToolError:
        return []
    return found.paths[:SUGGEST_COUNT]


def missing_message(call: Call, path: str, tool: str = "ws_read") -> str:
    """The not-found message: close matches by name, then the recovery tools."""
    parent = os.path.dirname(path.rstrip("/")) or "."
    name = os.path.basename(path.rstrip("/")) or path
    hits = [p for p in _suggest(call, path) if p != path]
    text = f"{tool}: no such file: {path}."
    if hits:
        text += " Files with that name: " + ", ".join(hits) + "."
    text += (
        f" Find the right path with ws_glob {compact_json({'pattern': '**/' + name})} or "
        f"ws_list {compact_json({'path': parent})}."
    )
    return text


def _notebook(call: Call, nb_path: str, cell_id: str | None, offset: int, limit: int) -> ToolResult:
    """A notebook as cells (headers as ``read`` shows them, each cell's lines numbered from 1
    in ws_read's gutter), or one cell ``nb.ipynb#CELL_ID`` windowed by offset / limit. No
    anchors: a cell's view is recorded as ws_read records a file's."""
    if cell_id is None:
        try:
            loaded = cellview.load(call, nb_path, verb="ws_read")
        except ToolError as exc:
            raise ToolError(f"ws_read: {exc.message}", **exc.details) from None
        order = list(range(len(loaded.ids)))
    else:
        cell = cells.open_cell(call, nb_path, cell_id, "ws_read", write=False)
        loaded = cell.loaded
        order = [cell.index]
    ceiling = read_ceiling_chars(call.ws.settings)
    budget = max(ceiling - FOOTER_RESERVE, ceiling // 2)
    out: list[str] = []
    used = 0
    listed: list[str] = []
    for index in order:
        head = cellview.header(loaded, index)
        out.append(head)
        used += len(head) + 1
        lines = split_lines(loaded.nb.source(index))
        first = offset if cell_id is not None else 1
        last = min(len(lines), first + limit - 1) if cell_id is not None else len(lines)
        if cell_id is not None and lines and first > len(lines):
            raise ToolError(
                f"ws_read: offset {first} is out of range — {loaded.rel}#{loaded.ids[index]} has "
                f"{len(lines)} lines; valid offsets are 1–{len(lines)}.",
                error="bad_offset",
                total_lines=len(lines),
            )
        end = first - 1
        for n in range(first, last + 1):
            line = lines[n - 1]
            if len(line) > MAX_LINE_CHARS:
                line = line[:MAX_LINE_CHARS] + f"… [line cut: {len(line)} chars]"
            row = GUTTER % n + line
            if used + len(row) + 1 > budget and ((out and end >= first) or cell_id is None):
                break
            out.append(row)
            used += len(row) + 1
            end = n
        key = address.key(loaded.real, loaded.ids[index])
        old = call.session.views.get(key)
        call.session.record_view(
            key,
            FileView(
                texts=dict(old.texts) if old else {},
                base=old.base if old else None,
                cut=set(old.cut) if old else set(),
                whole=end == len(lines),
            ),
        )
        if not lines:
            out.append("(empty cell)")
        elif end < last:
            if cell_id is None:
                listed.append(loaded.ids[index])
            nxt = compact_json(
                {"path": f"{loaded.rel}#{loaded.ids[index]}", "offset": end + 1, "limit": limit}
            )
            out.append(f"[showing lines {first}–{end} of {len(lines)}; next page: ws_read {nxt}]")
        elif cell_id is not None and (first > 1 or end < len(lines)):
            out.append(f"[showing lines {first}–{end} of {len(lines)} of this cell]")
    if cell_id is not None:
        outs = loaded.nb.cells[order[0]].get("outputs")
        if isinstance(outs, list) and outs:
            out.append("outputs:")
            out.extend(outputs.render(outs))
    elif not order:
        out.append(f"({loaded.rel} has no cells)")
    if listed:
        out.append(
            f"[read ceiling reached: {len(listed)} cell(s) shown in part; ws_read "
            f"{compact_json({'path': loaded.rel + '#CELL_ID'})} shows one cell]"
        )
    return ToolResult.success(
        "\n".join(out), path=loaded.rel if cell_id is None else f"{loaded.rel}#{cell_id}",
        cells=len(loaded.ids), cell_ids=list(loaded.ids),
    )


def _run(call: Call) -> ToolResult:
    path = call.args["path"]
    offset = call.args.get("offset") or 1
    window = call_setting(call, "read_window_lines")
    limit = call.args.get("limit") or window
    nb_path, cell_id = address.split(path)
    if address.is_notebook(nb_path):
        return _notebook(call, nb_path, cell_id, offset, limit)
    resolved = call.ws.jail.resolve(path)
    real, rel = resolved.real, resolved.rel
    try:
        total, lines = _window(real, offset, offset + limit - 1, call.ws.jail)
    except (FileNotFoundError, NotADirectoryError):
        raise ToolError(missing_message(call, rel), error="not_found") from None
    except IsDirectory:
        raise ToolError(
            f"ws_read: {rel} is a directory, not a file. List it with ws_list "
            f"{compact_json({'path': rel})}, then ws_read one of its files.",
            error="is_directory",
        ) from None
    except NotRegular:
        raise ToolError(
            f"ws_read: {rel} is not a regular file (a device, socket or pipe); ws_read reads "
            "files only.",
            error="not_a_file",
        ) from None
    except NotText:
        raise ToolError(
            f"ws_read: {rel} is a binary file ({os.path.getsize(real)} bytes); ws_read shows text "
            "only. Use ws_shell (e.g. `file` or `xxd | head`) to inspect it.",
            error="binary",
        ) from None
    except OSError as exc:
        raise ToolError(f"ws_read: cannot read {rel} ({exc.strerror}).", error="os_error") from None
    if total == 0:
        call.session.record_view(real, FileView(whole=True))
        if offset > 1:
            raise ToolError(
                f"ws_read: offset {offset} is out of range — {rel} is empty (0 lines); the only "
                "valid offset is 1.",
                error="bad_offset",
            )
        return ToolResult.success(f"({rel} is empty — 0 lines)", path=rel, total_lines=0)
    if offset > total:
        raise ToolError(
            f"ws_read: offset {offset} is out of range — {rel} has {total} lines; valid offsets "
            f"are 1–{total}. To see the end of the file: ws_read "
            f"{compact_json({'path': rel, 'offset': max(1, total - window + 1), 'limit': window})}.",
            error="bad_offset",
            total_lines=total,
        )
    ceiling = read_ceiling_chars(call.ws.settings)
    budget = max(ceiling - FOOTER_RESERVE, ceiling // 2)
    out: list[str] = []
    used = 0
    cut: set[int] = set()
    end = offset - 1  # last line shown
    for n in range(offset, min(total, offset + limit - 1) + 1):
        line = lines[n].rstrip("\r")
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f"… [line cut: {len(line)} chars]"
            cut.add(n)
        row = GUTTER % n + line
        if out and used + len(row) + 1 > budget:
            break
        if not out and len(row) > budget:
            row = row[:budget] + f"… [line cut: {len(line)} chars]"
            cut.add(n)
        out.append(row)
        used += len(row) + 1
        end = n
    ceiling_hit = end < min(total, offset + limit - 1)
    whole = offset == 1 and end == total
    # The window shows no anchors: what read or search showed of this file stays as it was.
    old = call.session.views.get(real)
    call.session.record_view(
        real,
        FileView(
            texts=dict(old.texts) if old else {},
            base=old.base if old else None,
            cut=cut | (old.cut if old else set()),
            whole=whole,
        ),
    )
    text = "\n".join(out)
    if ceiling_hit:
        text += (
            f"\n[window cut at line {end} to stay under the {ceiling}-character "
            "read ceiling]"
        )
    if not whole:
        if end < total:
            nxt = compact_json({"path": rel, "offset": end + 1, "limit": limit})
            text += (
                f"\n[showing lines {offset}–{end} of {total} in {rel}; use offset= to see more]"
                f"\nNext page: ws_read {nxt}. To jump straight to a symbol use ws_grep first."
            )
        else:
            text += (
                f"\n[showing lines {offset}–{end} of {total} in {rel}; end of file — use "
                "offset= to see earlier lines]"
            )
    return ToolResult.success(
        text, path=rel, offset=offset, end=end, total_lines=total, cut_lines=sorted(cut)
    )


TOOL = Tool(
    name="ws_read",
    profile="slmcode",
    gate=GATE_READ,
    description=DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path relative to the project root."},
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "First line to show, 1-based (default 1).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "Number of lines to show (default 120).",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    run=_run,
    main_arg="path",
    aliases={
        "file": "path",
        "file_path": "path",
        "filename": "path",
        "start": "offset",
        "lines": "limit",
    },
    touches_image=False,
)
