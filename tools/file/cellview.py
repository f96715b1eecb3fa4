"""A notebook shown as cells: what ``read``, ``search``, ``cells`` and the ``ws_*`` tools show
of a ``.ipynb``, and the views they record.

Each cell is one keyed text (``PATH#CELL_ID``, ``notebook.address.key``) in the session's views,
exactly as a file is: its rows are ``LINE:HH|content`` numbered from 1 inside the cell, the same
hash as files; what was shown of it is recorded with ``anchors.record_view``, so edit checks a
cell's anchors as it checks a file's. The notebook itself is recorded too (keyed by its real
path, its "lines" being the cell ids in order): the ``cells`` tool's read-before-change rule for
an insert at the start or the end.

A cell's header line::

    ── nb.ipynb#ab12cd34 · cell 2/5 · code · In [3] · out: stdout 2 lines; [image/png 640×480, 23 KB]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kli.tools.core.registry import Call
from kli.tools.core.result import ToolError
from kli.tools.core.session import Session
from kli.tools.core.textfile import IsDirectory, NotRegular, NotText, TooLarge, split_lines
from kli.tools.file.anchors import (
    MAX_LINES,
    MAX_OUTPUT_CHARS,
    cut_notice,
    record_view,
    render_row,
)
from kli.tools.notebook import address, outputs
from kli.tools.notebook.model import Notebook, NotebookError

HEADER = "──"
EMPTY_CELL = "(empty cell)"
STAND_IN_NOTE = (
    "[This notebook has no cell ids yet: the ids shown are stand-ins made from each cell's "
    "type and source. edit and cells accept them; the first change written gives every cell "
    "its id (the stand-in shown), in the file.]"
)


@dataclass
class Loaded:
    """A notebook loaded for a tool: its real and shown paths, and the notebook."""

    real: str
    rel: str
    nb: Notebook
    ids: list[str]


def cell_source(text: str, before: str) -> str:
    """A cell's new source from an edited text (which ends with a newline, as every text the
    file tools patch does): without that final newline, as Jupyter stores a source, unless the
    cell's source had one."""
    if text.endswith("\n") and not before.endswith("\n"):
        return text[:-1]
    return text


def load(call: Call, path: str, *, verb: str = "read", write: bool = False) -> Loaded:
    """Resolve and load the notebook ``path`` through the workspace's store, or ToolError."""
    resolved = call.ws.jail.resolve(path, write=write)
    real, rel = resolved.real, resolved.rel
    fail = f"{verb} failed" if verb in ("read", "search") else f"{verb} rejected"
    try:
        nb = call.ws.notebooks.load(real)
    except FileNotFoundError:
        raise ToolError(
            f"{fail}: {rel} does not exist. Check the path, or list notebooks with "
            "find pattern='**/*.ipynb'.",
            error="not_found",
            path=rel,
        ) from None
    except IsDirectory:
        raise ToolError(f"{fail}: {rel} is a directory.", error="is_directory", path=rel) from None
    except NotRegular:
        raise ToolError(
            f"{fail}: {rel} is not a regular file (a pipe, socket or device).",
            error="not_regular",
            path=rel,
        ) from None
    except TooLarge as exc:
        raise ToolError(
            f"{fail}: {rel} is over the {exc.limit}-byte notebook limit. Search it with "
            f"search pattern='REGEX' path='{rel}'.",
            error="too_large",
            path=rel,
        ) from None
    except NotText:
        raise ToolError(f"{fail}: {rel} is a binary file, not a notebook.", error="binary",
                        path=rel) from None
    except NotebookError as exc:
        raise ToolError(
            f"{fail}: {rel} is not a notebook the tools can read as cells: {exc}. Read it as "
            "text with bash (e.g. head) instead.",
            error="not_notebook",
            path=rel,
        ) from None
    except OSError as exc:
        raise ToolError(f"{fail}: cannot open {rel} ({exc.strerror}).", error="io",
                        path=rel) from None
    return Loaded(real, rel, nb, nb.ids())


def find_cell(loaded: Loaded, cell_id: str, *, verb: str = "read") -> int:
    """The index of ``cell_id`` (an id or a stand-in), or a ToolError listing the ids."""
    index = loaded.nb.index_of(cell_id)
    if index is None:
        known = ", ".join(loaded.ids[:20]) + (" …" if len(loaded.ids) > 20 else "")
        standin = (
            " Its ids are stand-ins made from each cell's source, so a cell whose source "
            "changed has a new one."
            if not all(loaded.nb.has_own_id(i) for i in range(len(loaded.ids)))
            else ""
        )
        fail = f"{verb} failed" if verb == "read" else f"{verb} rejected"
        raise ToolError(
            f"{fail}: {loaded.rel} has no cell {cell_id!r} (its cells: {known or 'none'}).{standin} "
            f"Read the notebook (read path='{loaded.rel}') for its current cell ids."
            + ("" if verb == "read" else " Nothing was written."),
            error="no_cell",
            path=f"{loaded.rel}#{cell_id}",
        )
    return index


def twin_moved(session: Session, loaded: Loaded, index: int) -> bool:
    """Whether the stand-in id of cell ``index`` may now name another cell than the one the
    session saw: identical cells are numbered ``H``, ``H-2`` … in order, so when the cell list
    changed since the session saw it (its recorded outline), the k-th of the twins may be
    another cell. Own ids, and stand-ins without twins, never move."""
    if loaded.nb.has_own_id(index):
        return False
    outline = session.views.get(loaded.real)
    if outline is None:
        return False
    seen = [outline.texts[n] for n in sorted(outline.texts)]
    base = loaded.ids[index].split("-", 1)[0]
    twins = [cid for cid in seen if cid.split("-", 1)[0] == base]
    return len(twins) > 1 and seen != loaded.ids


def header(loaded: Loaded, index: int) -> str:
    cell = loaded.nb.cells[index]
    kind = str(cell.get("cell_type"))
    parts = [f"{loaded.rel}#{loaded.ids[index]}", f"cell {index + 1}/{len(loaded.ids)}", kind]
    if kind == "code":
        count = cell.get("execution_count")
        parts.append(f"In [{count if count is not None else ' '}]")
    if not loaded.nb.has_own_id(index):
        parts.append("stand-in id")
    outs = cell.get("outputs") if kind == "code" else None
    said = outputs.summary(outs) if isinstance(outs, list) else ""
    if said:
        parts.append("out: " + said)
    attachments = cell.get("attachments")
    if isinstance(attachments, dict) and attachments:
        parts.append(f"{len(attachments)} attachment(s)")
    return f"{HEADER} " + " · ".join(parts)


@dataclass
class Shown:
    rows: list[str]
    chars: int
    cut: int
    start: int
    end: int


def show_cell(
    session: Session,
    loaded: Loaded,
    index: int,
    *,
    start: int = 1,
    end: int | None = None,
    raw: bool = False,
    room: int = MAX_OUTPUT_CHARS,
    max_lines: int = MAX_LINES,
    marker_for: dict[int, str] | None = None,
    only: set[int] | None = None,
) -> Shown:
    """Rows of one cell's source (``start``..``end``, 1-based, inside the cell), recorded as
    the session's view of ``PATH#ID``; at most ``max_lines`` rows and about ``room``
    characters (at least one row). ``only`` limits the rows to those line numbers (a search's
    hits and context, ``--`` between separate groups); ``marker_for`` prefixes rows (``*``)."""
    lines = split_lines(loaded.nb.source(index))
    stop = len(lines) if end is None else min(end, len(lines))
    rows: list[str] = []
    shown: dict[int, str] = {}
    cut: set[int] = set()
    chars = 0
    last = start - 1
    previous = None
    for number in range(start, stop + 1):
        if only is not None and number not in only:
            continue
        if len(shown) >= max_lines or (rows and chars >= room):
            break
        if only is not None and previous is not None and number != previous + 1:
            rows.append("--")
        previous = number
        mark = marker_for.get(number, " ") if marker_for is not None else ""
        row, _hh, was_cut = render_row(number, lines[number - 1], raw=raw, marker=mark)
        rows.append(row)
        chars += len(row) + 1
        shown[number] = lines[number - 1]
        if was_cut:
            cut.add(number)
        last = number
    key = address.key(loaded.real, loaded.ids[index])
    record_view(session, key, lines, shown, cut)
    return Shown(rows, chars, len(cut), start, last)


def record_outline(session: Session, loaded: Loaded) -> None:
    """Record that the session has seen the notebook's cell list (ids in order)."""
    ids = list(loaded.ids)
    record_view(session, loaded.real, ids, {i + 1: cid for i, cid in enumerate(ids)}, set())


def read_notebook(call: Call, loaded: Loaded, *, raw: bool = False) -> tuple[str, dict[str, Any]]:
    """The whole notebook, cell by cell, within one read's bounds: cells past the bound are
    listed by header only (not recorded), with the read that shows each."""
    session = call.session
    total = len(loaded.ids)
    out: list[str] = []
    chars = 0
    lines_shown = 0
    cut = 0
    shown_cells: list[str] = []
    listed_only: list[str] = []
    for index in range(total):
        head = header(loaded, index)
        out.append(head)
        chars += len(head) + 1
        room_lines = MAX_LINES - lines_shown
        if room_lines <= 0 or chars >= MAX_OUTPUT_CHARS:
            listed_only.append(loaded.ids[index])
            continue
        lines = split_lines(loaded.nb.source(index))
        if not lines:
            out.append(EMPTY_CELL)
            record_view(session, address.key(loaded.real, loaded.ids[index]), [], {}, set())
            shown_cells.append(loaded.ids[index])
            continue
        shown = show_cell(
            session, loaded, index, raw=raw, room=MAX_OUTPUT_CHARS - chars, max_lines=room_lines
        )
        out.extend(shown.rows)
        chars += shown.chars
        lines_shown += len(shown.rows)
        cut += shown.cut
        shown_cells.append(loaded.ids[index])
        if shown.end < len(lines):
            out.append(
                f"[cell shown to line {shown.end} of {len(lines)}; the rest: read "
                f"path='{loaded.rel}#{loaded.ids[index]}' start={shown.end + 1}]"
            )
    record_outline(session, loaded)
    if not total:
        out.append("(no cells)")
    notes: list[str] = []
    if listed_only:
        notes.append(
            f"[{len(listed_only)} cell(s) listed by header only: one read shows at most "
            f"{MAX_LINES} lines. Read one with read path='{loaded.rel}#CELL_ID'.]"
        )
    if cut:
        notes.append(cut_notice(cut))
    if not all(loaded.nb.has_own_id(i) for i in range(total)):
        notes.append(STAND_IN_NOTE)
    text = "\n".join(out + notes)
    details: dict[str, Any] = {
        "path": loaded.rel,
        "notebook": True,
        "cells": total,
        "cell_ids": list(loaded.ids),
        "shown_cells": shown_cells,
        "stand_in_ids": not all(loaded.nb.has_own_id(i) for i in range(total)),
        "nbformat": list(loaded.nb.version),
    }
    return text, details


def read_cell(
    call: Call, loaded: Loaded, cell_id: str, *, start: int | None, end: int | None, raw: bool
) -> tuple[str, dict[str, Any]]:
    """One cell: its header, its rows ``start``..``end`` (inside the cell), and its outputs
    bounded (``notebook.outputs.render``)."""
    index = find_cell(loaded, cell_id)
    cid = loaded.ids[index]
    lines = split_lines(loaded.nb.source(index))
    where = f"{loaded.rel}#{cid}"
    first = 1 if start is None else start
    if lines and first > len(lines):
        raise ToolError(
            f"read failed: start {first} is past the end of cell {where}, which has "
            f"{len(lines)} line(s). Retry with start between 1 and {len(lines)}.",
            error="start_past_eof",
            path=where,
            lines=len(lines),
        )
    if end is not None and end < first:
        raise ToolError(
            f"read failed: end {end} is before start {first}.", error="bad_range", path=where
        )
    out = [header(loaded, index)]
    details: dict[str, Any] = {
        "path": where,
        "notebook": loaded.rel,
        "cell": cid,
        "cell_type": loaded.nb.cells[index].get("cell_type"),
        "lines": len(lines),
        "stand_in_id": not loaded.nb.has_own_id(index),
    }
    if not lines:
        out.append(EMPTY_CELL)
        record_view(call.session, address.key(loaded.real, cid), [], {}, set())
        details.update(start=0, end=0)
    else:
        shown = show_cell(call.session, loaded, index, start=first, end=end, raw=raw)
        out.extend(shown.rows)
        details.update(start=shown.start, end=shown.end)
        stop = len(lines) if end is None else min(end, len(lines))
        if shown.end < stop:
            out.append(
                f"[Showing lines {first}-{shown.end} of {len(lines)}. Next page: read "
                f"path='{where}' start={shown.end + 1}]"
            )
        if shown.cut:
            out.append(cut_notice(shown.cut))
    cell_outputs = loaded.nb.cells[index].get("outputs")
    if isinstance(cell_outputs, list) and cell_outputs:
        out.append("outputs:")
        out.extend(outputs.render(cell_outputs,
                                  outputs.widget_lookup(loaded.nb.data.get("metadata"))))
    if not loaded.nb.has_own_id(index):
        out.append(STAND_IN_NOTE)
    return "\n".join(out), details
