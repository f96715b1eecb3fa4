"""ws_delete — delete one file (or symlink, or empty folder).

Irreversible except through the checkpoint store: with ``file_checkpoints`` on (the default)
the exact bytes are saved under ``.kli/checkpoints/`` first and the result names the
ws_checkpoints call that restores them. A folder with contents is refused (delete its files
one by one), so one call never removes a tree.
"""

from __future__ import annotations

import os

from kli.tools.core import approval, atomic
from kli.tools.core.atomic import permission_hint
from kli.tools.core.changes import file_change
from kli.tools.core.registry import GATE_WRITE, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.textfile import encode, read_text
from kli.tools.ws import checkpoints
from kli.tools.ws.common import call_setting, compact_json
from kli.tools.ws.ws_read import missing_message

DESCRIPTION = """Delete one file: ws_delete {"path": "old/unused.py"}.
With file_checkpoints on (the default) the file's exact bytes are saved first and the result
gives the ws_checkpoints call that restores them; otherwise deletion cannot be undone. Only
files, symlinks and empty folders can be deleted — delete a folder's files first. To rename,
use ws_mv instead of writing a copy and deleting the original."""


def _run(call: Call) -> ToolResult:
    jail = call.ws.jail
    path = call.args["path"]
    resolved = jail.resolve(path)
    lexical = os.path.normpath(os.path.join(jail.root, path))
    link = os.path.islink(lexical)
    # A link is deleted itself: what it leads to is not checked (read-only or not).
    jail.resolve(path, write=True, read_only_ok=link)
    if link:
        # Delete the link itself, never what it points to.
        parent = jail.resolve(os.path.dirname(lexical) or ".", write=True)
        target = os.path.join(parent.real, os.path.basename(lexical))
        rel = jail.rel(target)
        jail.check_writable(type(resolved)(real=target, rel=rel), shown=path, read_only_ok=True)
    else:
        target, rel = resolved.real, resolved.rel
    if not os.path.lexists(target):
        raise ToolError(missing_message(call, rel, "ws_delete"), error="not_found")
    if target == jail.root:
        raise ToolError("ws_delete refused — that is the project root itself.", error="refused")
    if os.path.isdir(target) and not os.path.islink(target):
        entries = os.listdir(target)
        if entries:
            raise ToolError(
                f"ws_delete refused — {rel} is a folder with {len(entries)} entries; ws_delete "
                "removes one file at a time so nothing is lost by accident. Delete its files "
                f"first (see ws_list {compact_json({'path': rel})}), or move the folder with ws_mv.",
                error="not_empty",
            )
        with call.ws.writing([target], tool="ws_delete", rel=rel):
            try:  # through the checked parent folder; held for review: removed on Accept
                atomic.rmdir(target)
            except OSError as exc:  # a file created in it meanwhile, no permission…
                raise ToolError(
                    f"ws_delete: cannot delete folder {rel} ({exc.strerror}).{permission_hint(exc)}",
                    error="delete_failed",
                ) from None
        return ToolResult.success(f"deleted empty folder {rel}", path=rel)
    before: str | None = None
    with call.ws.writing([target], tool="ws_delete", rel=rel):
        if not os.path.islink(target) and os.path.isfile(target):
            try:
                before = read_text(target, jail).text
            except OSError:  # binary (NotText), unreadable, or swapped for a pipe: no diff text
                before = None
        cp = checkpoints.save_before(call, target, rel, reason="delete")
        try:
            # Through the checked folder (no swapped-in symlink), and only if it still holds
            # what the checkpoint kept.
            atomic.remove(target, atomic.ANY if before is None else encode(before))
        except atomic.Stale as exc:
            raise ToolError(exc.refusal("ws_delete", rel), error="stale", path=rel) from None
        except OSError as exc:
            raise ToolError(
                f"ws_delete: cannot delete {rel} ({exc.strerror}).{permission_hint(exc)}",
                error="delete_failed",
            ) from None
    call.session.forget(target)
    call.session.telemetry["ws_delete"] += 1
    if cp is not None:
        restore = compact_json({"action": "restore", "id": cp.id})
        text = f"deleted {rel} (checkpoint {cp.id}; undo with ws_checkpoints {restore})"
    elif not call_setting(call, "file_checkpoints"):
        text = f"deleted {rel} — file_checkpoints is off, so this cannot be undone"
    else:
        text = f"deleted {rel} — not a regular file, so no checkpoint was kept"
    return ToolResult.success(
        text,
        path=rel,
        checkpoint=cp.id if cp else None,
        files=[file_change(rel, before, None, "deleted")],
    )


TOOL = Tool(
    name="ws_delete",
    profile="slmcode",
    gate=GATE_WRITE,
    description=DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path relative to the project root."},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    run=_run,
    main_arg="path",
    aliases={"file": "path", "file_path": "path", "filename": "path"},
    mutates=True,
    touches_image=False,
    action=approval.FILE,
)
