"""ws_checkpoints — list the checkpoint store and restore a checkpoint's exact bytes.

``list`` (the default) shows the newest checkpoints, optionally only those of one ``path``.
``restore`` puts a checkpoint's bytes back at its original path (or at ``path`` when given);
if that path exists with different bytes, they are checkpointed first so the restore can be
undone too.
"""

from __future__ import annotations

import os

from kli.tools.core import approval
from kli.tools.core.atomic import ANY, Stale
from kli.tools.core.changes import file_change
from kli.tools.core.checkpoints import LIVE
from kli.tools.core.registry import GATE_WRITE, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.session import FileView
from kli.tools.core.textfile import NotText, decode, read_bytes
from kli.tools.ws import checkpoints
from kli.tools.ws.common import compact_json

LIST_MAX = 50

DESCRIPTION = """List or restore file checkpoints (the saved bytes of files that ws_delete deleted
or ws_write overwrote).
  ws_checkpoints {"action": "list"}                  newest first (optional "path" filter; the default)
  ws_checkpoints {"action": "restore", "id": "cp-…"}  put the exact bytes back
Restore writes to the checkpoint's original path, or to "path" if you give one; whatever is
there is checkpointed first, so a restore can be undone the same way."""


def _list(call: Call) -> ToolResult:
    root = call.ws.root
    want = call.args.get("path")
    rel = call.ws.jail.resolve(want).rel if want else None
    found = [c for c in checkpoints.list_all(root) if rel is None or c.path == rel]
    if not found:
        where = f" for {rel}" if rel else ""
        return ToolResult.success(
            f"(no checkpoints{where}; checkpoints are made when ws_delete deletes or ws_write "
            "overwrites a file)",
            checkpoints=[],
        )
    shown = found[:LIST_MAX]
    text = f"{len(found)} checkpoint(s), newest first:\n" + "\n".join(c.summary() for c in shown)
    if len(found) > LIST_MAX:
        text += f"\n[showing the newest {LIST_MAX}; pass path= to see one file's checkpoints]"
    text += '\nRestore one with ws_checkpoints {"action":"restore","id":"<id>"}.'
    return ToolResult.success(text, checkpoints=[c.to_json() for c in shown])


def _restore(call: Call) -> ToolResult:
    cp_id = call.args.get("id")
    if not cp_id:
        raise ToolError(
            'ws_checkpoints: restore needs "id". List them with ws_checkpoints {"action":"list"}.',
            error="bad_arguments",
        )
    root = call.ws.root
    cp = checkpoints.get(root, cp_id)
    if cp.kind == LIVE:
        raise ToolError(
            f"ws_checkpoints: {cp.id} records a change of notebook {cp.path} in its live document "
            f"(cells {', '.join(cp.cells or [])}), not a file's bytes; take it back with undo "
            f"change={cp.change}. Nothing was changed.", error="live_change")
    if cp.part is not None:
        raise ToolError(
            f"ws_checkpoints: {cp.id} records the {cp.kind} part of change {cp.change} ({cp.path}), "
            f"not a file's bytes; take it back with undo change={cp.change}. Nothing was "
            "changed.", error="live_change")
    data = checkpoints.data_of(root, cp)
    dest = call.ws.jail.resolve(call.args.get("path") or cp.path, write=True)
    with call.ws.writing([dest.real], tool="ws_checkpoints", rel=dest.rel):
        before: str | None = None
        verified: object = None  # nothing there: restore creates it
        saved = None
        if os.path.lexists(dest.real):
            if not os.path.islink(dest.real) and not os.path.isfile(dest.real):
                raise ToolError(
                    f"ws_checkpoints: {dest.rel} is now a folder (or another non-file); restore "
                    "to another path with "
                    f"{compact_json({'action': 'restore', 'id': cp.id, 'path': cp.path + '.restored'})}.",
                    error="is_directory",
                )
            same = False
            if not os.path.islink(dest.real) and cp.kind == "file":
                current = read_bytes(dest.real, call.ws.jail)  # no outside file swapped in
                verified = current
                same = current == data
                try:
                    before = decode(current)
                except NotText:
                    before = None
            if same:
                return ToolResult.success(
                    f"{dest.rel} already holds exactly the bytes of checkpoint {cp.id}; nothing "
                    "to restore.",
                    path=dest.rel,
                    checkpoint=cp.id,
                )
            saved = checkpoints.create(
                root,
                dest.real,
                dest.rel,
                reason="before restore",
                tool="ws_checkpoints",
                session=call.session.id,
                keep=10**9,
            )
            if os.path.islink(dest.real) or cp.kind != "file":
                verified = ANY
        try:
            checkpoints.restore_bytes(dest.real, cp, data, verified)
        except Stale as exc:
            raise ToolError(exc.refusal("ws_checkpoints", dest.rel), error="stale") from None
    call.session.record_view(dest.real, FileView(whole=True))
    text = f"restored {dest.rel} from checkpoint {cp.id} ({cp.size} bytes, exact)"
    if saved is not None:
        text += f"; the version it replaced is saved as checkpoint {saved.id}"
    try:
        after: str | None = decode(data) if cp.kind == "file" else None
    except NotText:
        after = None
    return ToolResult.success(
        text,
        path=dest.rel,
        checkpoint=cp.id,
        replaced_checkpoint=saved.id if saved else None,
        files=[file_change(dest.rel, before, after, "written")],
    )


def _run(call: Call) -> ToolResult:
    # An id without an action can only mean restore.
    action = call.args.get("action") or ("restore" if call.args.get("id") else "list")
    if action == "restore":
        return _restore(call)
    return _list(call)


TOOL = Tool(
    name="ws_checkpoints",
    profile="slmcode",
    gate=GATE_WRITE,
    description=DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["list", "restore"]},
            "id": {"type": "string", "description": "Checkpoint id (for restore)."},
            "path": {
                "type": "string",
                "description": "list: only this file's checkpoints; restore: write here instead.",
            },
        },
        "additionalProperties": False,
    },
    run=_run,
    main_arg="id",
    aliases={"checkpoint": "id", "checkpoint_id": "id"},
    mutates=True,
    touches_image=False,
    action=approval.FILE,  # a restore is held under review like any write; a list writes nothing
)
