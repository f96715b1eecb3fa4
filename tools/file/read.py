"""``read``: a file's lines as ``LINE:HH|content`` anchors, recorded for the session.

Spec (kli-tools.txt, read): inclusive 1-based ``start``/``end``; a start past end-of-file is an
error, an end past it clamps; ``raw`` drops the ``LINE:HH|`` prefix; a file over 2 MiB is an
error naming ``search``; an empty file reads as ``(empty file)``; reading records the lines
shown (their full text) for the session (the read-before-edit state edit requires).

Where the spec is silent, the model's context is protected: one read shows at most
``MAX_LINES`` lines and about ``MAX_OUTPUT_CHARS`` characters, and says exactly which ``read``
call shows the next page; a line wider than ``MAX_LINE_CHARS`` is shown cut with a visible
``… [+N chars]`` marker and recorded as cut, so edit refuses to replace a line never seen whole.
The hash is always of the whole line. Only shown lines are hashed (the hash is pure Python).
"""

from __future__ import annotations

import os
from typing import Any

from kli.tools.core.registry import GATE_READ, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.textfile import (
    IsDirectory,
    NotRegular,
    NotText,
    TooLarge,
    read_text,
    split_lines,
)
from kli.tools.file import cellview
from kli.tools.file.anchors import (
    MAX_LINE_CHARS,
    MAX_LINES,
    MAX_OUTPUT_CHARS,
    cut_notice,
    record_view,
    render_row,
)
from kli.tools.notebook import address

MAX_READ_BYTES = 2 * 1024 * 1024  # spec: 2 MiB (2097152 bytes)
EMPTY_FILE = "(empty file)"
NOT_A_NOTEBOOK = (
    "[{rel} does not parse as a notebook (not nbformat 4 JSON: a merge conflict or a cut-off "
    "write?), so it is shown as text; edit it as a file ('@@ {rel}') to repair the JSON, then "
    "read it again to see its cells.]"
)


def load_text(call: Call, path: str) -> tuple[str, str, str, int]:
    """Resolve and read ``path`` as text for ``read``: ``(real, rel, text, size)`` or ToolError."""
    resolved = call.ws.jail.resolve(path)
    real, rel = resolved.real, resolved.rel
    try:
        loaded = read_text(real, call.ws.jail, limit=MAX_READ_BYTES)
    except FileNotFoundError:
        raise ToolError(
            f"read failed: {rel} does not exist. Check the path, or list candidates with "
            f"find pattern='**/{os.path.basename(rel)}'.",
            error="not_found",
            path=rel,
        ) from None
    except IsDirectory:
        raise ToolError(
            f"read failed: {rel} is a directory. List its files with find pattern='{rel}/*' "
            f"(or '{rel}/**' for every depth).",
            error="is_directory",
            path=rel,
        ) from None
    except NotRegular:  # a FIFO or device would block or never end
        raise ToolError(
            f"read refused: {rel} is not a regular file (a pipe, socket or device); "
            "inspect it with bash instead.",
            error="not_regular",
            path=rel,
        ) from None
    except TooLarge as exc:
        if exc.size is None:  # grew since the stat
            raise ToolError(
                f"read refused: {rel} is over the 2 MiB ({MAX_READ_BYTES}-byte) read limit. "
                f"Use search pattern='REGEX' path='{rel}' to inspect a file that large.",
                error="too_large",
                path=rel,
            ) from None
        raise ToolError(
            f"read refused: {rel} is {exc.size} bytes, over the 2 MiB ({MAX_READ_BYTES}-byte) "
            f"read limit. Use search to inspect a file that large: search pattern='REGEX' "
            f"path='{rel}' context=5 shows the matching lines with anchors for edit.",
            error="too_large",
            path=rel,
            size=exc.size,
        ) from None
    except NotText:
        raise ToolError(
            f"read refused: {rel} is a binary file (it contains NUL bytes), not text. "
            "Inspect it with bash (e.g. file, xxd | head) instead.",
            error="binary",
            path=rel,
        ) from None
    except OSError as exc:
        raise ToolError(f"read failed: cannot open {rel} ({exc.strerror}).", path=rel) from None
    return real, rel, loaded.text, loaded.size


def _run(call: Call) -> ToolResult:
    args = call.args
    raw = bool(args.get("raw", False))
    start_arg: int | None = args.get("start")
    end_arg: int | None = args.get("end")
    nb_path, cell_id = address.split(args["path"])
    broken = False
    if address.is_notebook(nb_path):
        as_cells = _read_notebook(call, nb_path, cell_id, start_arg, end_arg, raw)
        if as_cells is not None:
            return as_cells
        broken = True
    real, rel, text, size = load_text(call, args["path"])
    lines = split_lines(text)
    total = len(lines)
    details: dict[str, Any] = {"path": rel, "lines": total, "size": size}
    if total == 0:
        record_view(call.session, real, lines, {}, set())
        return ToolResult.success(EMPTY_FILE, **details, start=0, end=0)
    start = 1 if start_arg is None else start_arg
    if start > total:
        raise ToolError(
            f"read failed: start {start} is past the end of {rel}, which has {total} line(s). "
            f"Retry with start between 1 and {total}.",
            error="start_past_eof",
            path=rel,
            lines=total,
        )
    end = total if end_arg is None else min(end_arg, total)
    if end < start:
        raise ToolError(
            f"read failed: end {end_arg} is before start {start}. Retry with end >= start "
            f"(or omit end to read to the end of the file).",
            error="bad_range",
            path=rel,
        )
    rows: list[str] = []
    shown: dict[int, str] = {}
    cut: set[int] = set()
    chars = 0
    shown_end = start - 1
    for number in range(start, end + 1):
        if number - start >= MAX_LINES or (rows and chars >= MAX_OUTPUT_CHARS):
            break
        row, _hh, was_cut = render_row(number, lines[number - 1], raw=raw)
        rows.append(row)
        chars += len(row) + 1
        shown[number] = lines[number - 1]
        if was_cut:
            cut.add(number)
        shown_end = number
    record_view(call.session, real, lines, shown, cut)
    notes: list[str] = []
    clamped = shown_end < end
    if clamped:
        why = (
            f"{MAX_LINES} lines"
            if shown_end - start + 1 >= MAX_LINES
            else f"about {MAX_OUTPUT_CHARS} characters"
        )
        next_end = min(shown_end + MAX_LINES, end)
        notes.append(
            f"[Showing lines {start}-{shown_end} of {total}: one read shows at most {why}. "
            f"Next page: read path='{rel}' start={shown_end + 1} end={next_end}]"
        )
    if cut:
        notes.append(cut_notice(len(cut)))
    if broken:
        notes.append(NOT_A_NOTEBOOK.format(rel=rel))
        details["notebook"] = False
    body = "\n".join(rows)
    if notes:
        body += "\n" + "\n".join(notes)
    details.update(start=start, end=shown_end, clamped=clamped, cut=sorted(cut))
    return ToolResult.success(body, **details)


def _read_notebook(
    call: Call, path: str, cell_id: str | None, start: int | None, end: int | None, raw: bool
) -> ToolResult | None:
    """A ``.ipynb`` reads as cells (``cellview``); ``PATH#CELL_ID`` as one cell. None when the
    file does not parse as a notebook: the caller reads it as text, so it can be repaired."""
    try:
        loaded = cellview.load(call, path)
    except ToolError as exc:
        if exc.details.get("error") != "not_notebook" or cell_id is not None:
            raise
        return None  # not JSON a notebook is made of (a merge conflict?): read it as text
    if cell_id is None:
        if start is not None or end is not None:
            raise ToolError(
                f"read failed: start/end select lines inside one cell of a notebook; read "
                f"path='{loaded.rel}#CELL_ID' start=... (read path='{loaded.rel}' lists the "
                "cells and their ids).",
                error="bad_range",
                path=loaded.rel,
            )
        text, details = cellview.read_notebook(call, loaded, raw=raw)
    else:
        text, details = cellview.read_cell(call, loaded, cell_id, start=start, end=end, raw=raw)
    return ToolResult.success(text, **details)


TOOL = Tool(
    name="read",
    profile="kli",
    gate=GATE_READ,
    description=(
        "Read a text file and return its lines with anchors. Each line comes back as "
        "LINE:HH|content, where LINE is the 1-based line number and HH a two-hex-digit hash of "
        "the line's content; edit references lines by these LINE:HH anchors, and a file must be "
        "read (or matched by search) in this session before edit may change it. "
        "start/end select an inclusive 1-based range: a start past the end of the file is an "
        "error, an end past it clamps to the last line. raw=true returns the content with no "
        "LINE:HH| prefix. Limits: a file over 2 MiB (2097152 bytes) is refused — use search on "
        f"it instead; one read shows at most {MAX_LINES} lines (the result then ends with the "
        "exact read call for the next page); a line wider than "
        f"{MAX_LINE_CHARS} characters is shown cut with a '… [+N chars]' marker and edit will "
        "not replace it. An empty file reads as (empty file). Binary files are refused. "
        "A notebook (.ipynb) reads as cells: a header line per cell ('── nb.ipynb#CELL_ID · "
        "cell N/M · code · In [3] · out: …' with a one-line summary of its outputs), then its "
        "source as LINE:HH|content rows numbered from 1 inside the cell; path='nb.ipynb#CELL_ID' "
        "reads one cell (start/end inside it) and its outputs, bounded (text head and tail, "
        "errors, a table's shape and first and last rows, one line per image: look shows "
        "images). Edit a cell with an '@@ nb.ipynb#CELL_ID' "
        "section; add, delete, move or retype cells with the cells tool."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to read, relative to the workspace root; "
                "nb.ipynb#CELL_ID reads one notebook cell.",
            },
            "start": {
                "type": "integer",
                "minimum": 1,
                "description": "First line of an inclusive 1-based range. Past end-of-file is an error.",
            },
            "end": {
                "type": "integer",
                "minimum": 1,
                "description": "Last line of the range. Past end-of-file clamps to the last line.",
            },
            "raw": {
                "type": "boolean",
                "description": "When true, return line content with no LINE:HH| prefix. Default false.",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    run=_run,
    main_arg="path",
    aliases={"file": "path", "file_path": "path", "start_line": "start", "end_line": "end"},
    touches_image=False,
)
