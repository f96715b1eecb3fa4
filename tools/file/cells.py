"""``cells``: the structure of a notebook — insert, delete, move, retype a cell, clear outputs.

One op per call, named by ``op``; cells are named by id (``read path='nb.ipynb'`` shows them).
A cell's *source* is edited with ``edit`` (``@@ nb.ipynb#CELL_ID`` sections); ``cells`` changes
which cells there are and where, and never a cell's source (a new cell's first source aside).

The read-before-change rule is edit's: every cell an op names (the cell it acts on, and the
``anchor`` a cell is put next to) must have been read in this session (``read`` of the notebook
or of that cell, a ``search`` hit, or an edit's fresh anchors) and its source must still be what
the session saw; otherwise the op is refused as stale and nothing is written. An insert at the
start or the end needs the notebook's cell list read (``read path='nb.ipynb'``). A notebook
without cell ids gets them written (the stand-ins read showed) with the first op, as with edit.
The change is one ``NotebookStore.commit``: the notebook on disk must still be what was loaded.
"""

from __future__ import annotations

from typing import Any

from kli.tools.core import approval
from kli.tools.core.atomic import Busy, Stale
from kli.tools.core.changes import file_change
from kli.tools.core.registry import GATE_EDIT, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.session import version_of
from kli.tools.core.textfile import split_lines
from kli.tools.file import cellview
from kli.tools.notebook import address
from kli.tools.notebook.model import CELL_TYPES, clear_outputs, new_cell, new_cell_id, set_type

OPS = ("insert", "delete", "move", "set_type", "clear_outputs")
WHERE = ("before", "after", "start", "end")


def _need(args: dict[str, Any], name: str, op: str, example: str) -> Any:
    value = args.get(name)
    if value is None or value == "":
        raise ToolError(
            f"cells op={op} needs {name}: e.g. cells {example}. Nothing was written.",
            error="bad_arguments",
        )
    return value


def _stale(loaded: cellview.Loaded, cell_id: str, why: str) -> ToolError:
    return ToolError(
        f"cells rejected: stale cell {loaded.rel}#{cell_id}: {why} Read it again (read "
        f"path='{loaded.rel}#{cell_id}', or read path='{loaded.rel}' for every cell) and send "
        "the op again. Nothing was written.",
        error="stale",
        path=f"{loaded.rel}#{cell_id}",
    )


def _checked(call: Call, loaded: cellview.Loaded, cell_id: str) -> int:
    """The index of ``cell_id``, after checking the session read it and it is unchanged."""
    key = address.key(loaded.real, cell_id)
    view = call.session.views.get(key)
    index = loaded.nb.index_of(cell_id)
    if view is None:
        if index is None:
            cellview.find_cell(loaded, cell_id, verb="cells")
        raise ToolError(
            f"cells rejected: cell {loaded.rel}#{cell_id} has not been read in this session. "
            f"Read it first (read path='{loaded.rel}' shows every cell), then send the op "
            "again. Nothing was written.",
            error="unread",
            path=f"{loaded.rel}#{cell_id}",
        )
    if index is None:
        raise _stale(
            loaded,
            cell_id,
            "the notebook has no such cell now (deleted, or — without ids — its source "
            "changed, which changes its stand-in id).",
        )
    if view.base != version_of(split_lines(loaded.nb.source(index))):
        raise _stale(loaded, cell_id, "its source changed since you read it.")
    if cellview.twin_moved(call.session, loaded, index):
        raise _stale(
            loaded,
            cell_id,
            "the notebook has no ids and several identical cells, and its cells changed "
            "since you read it, so this stand-in id may name another of them now.",
        )
    return index


def _position(call: Call, loaded: cellview.Loaded, where: str, anchor: str | None, op: str) -> int:
    """The index a cell goes to (before removal of a moved cell is accounted by the caller)."""
    if where in ("start", "end"):
        if not call.session.has_read(loaded.real):
            raise ToolError(
                f"cells rejected: read the notebook's cells first (read path='{loaded.rel}'), "
                f"then send the op again. Nothing was written.",
                error="unread",
                path=loaded.rel,
            )
        return 0 if where == "start" else len(loaded.nb.cells)
    if not anchor:
        raise ToolError(
            f"cells op={op} where={where} needs anchor, the id of the cell to go {where}: e.g. "
            f"cells path='{loaded.rel}' op={op} where={where} anchor=CELL_ID. Nothing was "
            "written.",
            error="bad_arguments",
        )
    index = _checked(call, loaded, anchor)
    return index if where == "before" else index + 1


def _run(call: Call) -> ToolResult:
    args = call.args
    op = args["op"]
    resolved = call.ws.jail.resolve(args["path"], write=True)
    with call.ws.writing([resolved.real], tool="cells", rel=resolved.rel):
        loaded = cellview.load(call, args["path"], verb="cells", write=True)
        nb = loaded.nb.copy()
        added_ids = nb.assign_ids()  # before any change: each id is the stand-in read showed
        rel = loaded.rel
        ids = loaded.ids
        files: list[dict[str, Any]] = []
        shown_index: int | None = None
        forget: str | None = None
        if op == "insert":
            # The cell to insert next to: anchor, or cell when only that was given.
            anchor = args.get("anchor") or args.get("cell")
            where = args.get("where") or ("after" if anchor else "end")
            kind = args.get("type") or "code"
            at = _position(call, loaded, where, anchor, op)
            cid = new_cell_id(set(ids))
            source = args.get("source") or ""
            nb.cells.insert(at, new_cell(kind, source, cid))
            shown_index = at
            target = f"{rel}#{cid}"
            place = (
                f"at the {where}"
                if where in ("start", "end")
                else f"{where} {rel}#{anchor}"
            )
            summary = f"Inserted {kind} cell {target} {place} (cell {at + 1}/{len(nb.cells)})."
            files.append(file_change(target, None, source, "written",
                                     added=len(split_lines(source)), removed=0,
                                     cell_index=at + 1))
            details: dict[str, Any] = {"cell": cid, "index": at + 1}
        else:
            cell_id = _need(args, "cell", op, f"path='{rel}' op={op} cell=CELL_ID")
            index = _checked(call, loaded, cell_id)
            cell = nb.cells[index]
            source = loaded.nb.source(index)
            target = f"{rel}#{cell_id}"
            details = {"cell": cell_id}
            if op == "delete":
                del nb.cells[index]
                forget = cell_id
                summary = (
                    f"Deleted {cell.get('cell_type')} cell {target} (was cell {index + 1}; "
                    f"{len(split_lines(source))} line(s)). {len(nb.cells)} cell(s) remain."
                )
                files.append(file_change(target, source, None, "written", added=0,
                                         removed=len(split_lines(source)),
                                         cell_index=index + 1))
            elif op == "move":
                where = _need(args, "where", op, f"path='{rel}' op=move cell={cell_id} "
                              "where=after anchor=ID")
                if args.get("anchor") == cell_id:
                    raise ToolError(
                        "cells rejected: a cell cannot move next to itself; give another "
                        "cell as anchor. Nothing was written.",
                        error="bad_arguments",
                    )
                at = _position(call, loaded, where, args.get("anchor"), op)
                moved = nb.cells.pop(index)
                if at > index:
                    at -= 1
                nb.cells.insert(at, moved)
                shown_index = at
                summary = f"Moved cell {target} from position {index + 1} to {at + 1}."
                details["index"] = at + 1
            elif op == "set_type":
                kind = _need(args, "type", op, f"path='{rel}' op=set_type cell={cell_id} "
                             "type=markdown")
                old = cell.get("cell_type")
                set_type(cell, kind)
                shown_index = index
                summary = f"Changed cell {target} from {old} to {kind}."
                if old == "code" and kind != "code":
                    summary += " Its outputs and execution count were dropped."
            else:  # clear_outputs
                if cell.get("cell_type") != "code":
                    raise ToolError(
                        f"cells rejected: {target} is a {cell.get('cell_type')} cell; only code "
                        "cells have outputs. Nothing was written.",
                        error="bad_arguments",
                        path=target,
                    )
                had = clear_outputs(cell)
                shown_index = index
                summary = f"Cleared the outputs of {target}." if had else (
                    f"{target} had no outputs; nothing to clear."
                )
        try:
            call.ws.notebooks.commit([(loaded.real, nb)])
        except (Stale, Busy) as exc:
            raise ToolError(
                exc.refusal("cells", rel),
                error="stale" if isinstance(exc, Stale) else "busy",
                path=rel,
            ) from None
        except OSError as exc:
            raise ToolError(
                f"cells failed writing {rel}: {exc.strerror or exc}. Nothing was written.",
                error="io",
                path=rel,
            ) from None
        after = cellview.Loaded(loaded.real, rel, nb, nb.ids())
        if forget is not None:
            call.session.forget(address.key(loaded.real, forget))
        cellview.record_outline(call.session, after)
        rows = [summary]
        if added_ids:
            rows.append(
                f"{rel} had no cell ids: wrote ids for {len(added_ids)} cell(s), each the "
                "stand-in id read showed, so your anchors stay valid."
            )
            details["ids_written"] = added_ids
        if shown_index is not None:
            rows.append(cellview.header(after, shown_index))
            shown = cellview.show_cell(call.session, after, shown_index)
            rows.extend(shown.rows or [cellview.EMPTY_CELL])
    return ToolResult.success(
        "\n".join(rows), path=rel, op=op, cells=len(nb.cells), files=files, **details
    )


TOOL = Tool(
    name="cells",
    profile="kli",
    gate=GATE_EDIT,
    description=(
        "Change the cells of a notebook (.ipynb): one op per call. Cells are named by the ids "
        "read shows (read path='nb.ipynb' lists every cell as '── nb.ipynb#CELL_ID · …'). "
        "To change the source of a cell use edit with an '@@ nb.ipynb#CELL_ID' section.\n"
        "  op=insert where=before|after anchor=ID type=code|markdown|raw source=TEXT  "
        "(where=start|end needs no anchor; where defaults to after the anchor, or to the end "
        "without one; type defaults to code)\n"
        "  op=delete cell=ID\n"
        "  op=move cell=ID where=before|after anchor=ID   (or where=start|end)\n"
        "  op=set_type cell=ID type=code|markdown|raw\n"
        "  op=clear_outputs cell=ID\n"
        "Every cell named (cell and anchor) must have been read in this session and be "
        "unchanged since; otherwise the op is refused as stale and nothing is written (read "
        "it again). An insert at start or end needs the notebook read. The result shows the "
        "cell with fresh LINE:HH anchors, ready for edit. A notebook without cell ids gets "
        "them written with the first change (the ids read showed stay valid)."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The notebook, e.g. analysis.ipynb."},
            "op": {"type": "string", "enum": list(OPS), "description": "What to do."},
            "cell": {
                "type": "string",
                "description": "Id of the cell to delete, move, retype or clear.",
            },
            "where": {
                "type": "string",
                "enum": list(WHERE),
                "description": "insert/move: before or after anchor, or at the start / end "
                "(insert: default end).",
            },
            "anchor": {
                "type": "string",
                "description": "insert/move with where=before|after: the id of the cell to go "
                "next to.",
            },
            "type": {
                "type": "string",
                "enum": list(CELL_TYPES),
                "description": "insert: the new cell's type (default code); set_type: the new "
                "type.",
            },
            "source": {"type": "string", "description": "insert: the new cell's source."},
        },
        "required": ["path", "op"],
        "additionalProperties": False,
    },
    run=_run,
    main_arg="path",
    aliases={"cell_id": "cell", "cell_type": "type", "position": "where", "content": "source"},
    mutates=True,
    touches_image=False,
    action=approval.FILE,
)
