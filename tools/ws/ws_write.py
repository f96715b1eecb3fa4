"""ws_write — create a new file (overwrite only a file read in this session).

Refusals, each saying how to retry:
- the path is a Windows reserved device name (nul, con, prn, aux, com0–9, lpt0–9, any
  extension, any case);
- the content is empty and the file is new (the spec's message, naming the accepted body keys
  and any unrecognized key of the call) — or the file exists and ``allow_shrink`` is not true;
- the file exists and was not read in this session (``read_before_edit``): the ws_edit recipe;
- the catastrophic-truncation guard: a file of at least ``SHRINK_MIN_LINES`` lines rewritten to
  less than ``SHRINK_RATIO`` of its lines, or of at least ``SHRINK_MIN_BYTES`` bytes rewritten
  to less than ``SHRINK_RATIO`` of its bytes (minified files are one long line), unless
  ``allow_shrink`` is true;
- the post-edit syntax check (tools/ws/syntax.py): a file that parsed before and would not
  after is left unchanged (EDIT REVERTED); ``disable_syntax_check`` turns it off.

An overwrite is checkpointed first (``file_checkpoints``), so ws_checkpoints can restore it.
"""

from __future__ import annotations

import os
import re
from typing import Any

from kli.tools.core import approval
from kli.tools.core.atomic import ANY, Stale, permission_hint
from kli.tools.core.changes import file_change
from kli.tools.core.registry import GATE_WRITE, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.session import FileView
from kli.tools.core.textfile import (
    NotRegular,
    NotText,
    encode,
    read_bytes,
    read_text,
    split_lines,
)
from kli.tools.notebook import address
from kli.tools.ws import checkpoints, syntax
from kli.tools.ws.common import (
    call_setting,
    compact_json,
    reserved_device_name,
    reserved_name_error,
)

# The catastrophic-truncation guard: an existing file of at least SHRINK_MIN_LINES lines (or
# SHRINK_MIN_BYTES bytes) rewritten with fewer than SHRINK_RATIO of its lines (or bytes) is
# refused without allow_shrink.
SHRINK_MIN_LINES = 20
SHRINK_MIN_BYTES = 4096
SHRINK_RATIO = 0.5

BODY_KEYS = ("content", "contents", "text", "body")
_KNOWN = {"path", "content", "allow_shrink", "disable_syntax_check"}

# "... rest of the file unchanged" — the usual reason a rewrite came out tiny.
_ELISION = re.compile(
    r"(rest of (the )?(file|code|class|function)|existing code|remains? (the same|unchanged)|"
    r"unchanged (code|content)|\.\.\. ?(omitted|snip))",
    re.IGNORECASE,
)

DESCRIPTION = """Create a new file with the given content (parent folders are created).
Parameters: path, content (the whole file text; also accepted as contents/text/body),
allow_shrink (default false), disable_syntax_check (default false).
ws_write is for NEW files. To change an existing file use ws_edit (replace old_str with new_str)
or ws_patch. Overwriting an existing file is refused unless you ws_read it in this session;
rewriting a large file as a much smaller one is refused unless allow_shrink is true. Windows
device names (nul, con, prn, aux, com1, lpt1, …) are refused. .py/.json/.js/.go/.ts files are
syntax-checked after writing: a file that parsed before and would not parse after is left
unchanged."""


def _unknown_keys(args: dict[str, Any]) -> list[str]:
    return [k for k in args if k not in _KNOWN]


def _empty_refusal(rel: str, args: dict[str, Any]) -> ToolError:
    unknown = _unknown_keys(args)
    text = (
        f"Write refused — content is empty, so this would create {rel} as a 0-byte file. "
        'Put the whole file text in "content" (accepted body keys: content, contents, text, '
        "body)."
    )
    if unknown:
        text += " Unrecognized key(s) in your call: " + ", ".join(repr(k) for k in unknown) + "."
    else:
        text += " Your call had no body key."
    text += (
        " If an empty file really is what you want, say so with a comment line, or use "
        "ws_shell `touch`."
    )
    return ToolError(text, error="empty_content", unknown_keys=unknown)


def _not_read_refusal(rel: str) -> ToolError:
    return ToolError(
        f"Write refused — {rel} already exists and you have not read it in this session. "
        "ws_write creates new files; change an existing file with ws_edit:\n"
        f"  1. ws_read {compact_json({'path': rel})}\n"
        f'  2. ws_edit {{"path":"{rel}","old_str":"<the exact lines to change, copied from '
        'ws_read without the NNN| prefix>","new_str":"<their replacement>"}\n'
        "Include 2–3 surrounding lines in old_str if the span repeats. Only if you really mean "
        "to replace the whole file: ws_read it first, then repeat this ws_write.",
        error="not_read",
    )


def _shrinks(before: str, content: str) -> bool:
    old_lines, new_lines = len(split_lines(before)), len(split_lines(content))
    old_bytes, new_bytes = len(encode(before)), len(encode(content))
    by_lines = old_lines >= SHRINK_MIN_LINES and new_lines < old_lines * SHRINK_RATIO
    by_bytes = old_bytes >= SHRINK_MIN_BYTES and new_bytes < old_bytes * SHRINK_RATIO
    return by_lines or by_bytes


def _shrink_refusal(rel: str, before: str, content: str) -> ToolError:
    old_lines, new_lines = len(split_lines(before)), len(split_lines(content))
    old_bytes, new_bytes = len(encode(before)), len(encode(content))
    text = (
        f"Write refused — {rel} has {old_lines} lines ({old_bytes:,} bytes) and this write would "
        f"leave {new_lines} ({new_bytes:,} bytes): "
        "rewriting a large file as a tiny one usually loses code (catastrophic truncation). "
        "To change part of the file use ws_edit with the exact old_str. If replacing the whole "
        'file with this shorter text really is the intent, repeat the call with "allow_shrink": '
        "true."
    )
    if _ELISION.search(content):
        text += (
            " Your content contains a placeholder such as '... rest of file unchanged' — "
            "ws_write writes exactly what you send; it never fills in elided code."
        )
    return ToolError(text, error="shrink", old_lines=old_lines, new_lines=new_lines)


def _not_a_file(rel: str) -> ToolError:
    return ToolError(
        f"ws_write: {rel} exists and is not a regular file (a device, socket or pipe); "
        "choose another path.",
        error="not_a_file",
    )


def _same_as_read_file(call: Call, real: str, content: str) -> str | None:
    """A file read in this session that still exists with exactly ``content`` (a rename done
    as write-a-copy), as a root-relative path; None when there is none."""
    data = encode(content)
    for other in list(call.session.views):
        if other == real or not os.path.isfile(other):
            continue
        try:
            if os.path.getsize(other) != len(data):
                continue
            if read_bytes(other, call.ws.jail) == data:  # never an outside file swapped in
                return call.ws.jail.rel(other)
        except OSError:
            continue
    return None


def _run(call: Call) -> ToolResult:
    args = call.args
    path = args["path"]
    nb_path, cell_id = address.split(path)
    if cell_id is not None and not os.path.lexists(os.path.join(call.ws.root, path)):
        raise ToolError(
            f"ws_write: {path} names a cell of the notebook {nb_path}; ws_write writes whole "
            f"files. Change the cell with ws_edit {compact_json({'path': path})} (old_str / "
            "new_str) or ws_patch. Nothing was written.",
            error="notebook_cell",
        )
    resolved = call.ws.jail.resolve(path, write=True)
    real, rel = resolved.real, resolved.rel
    bad = reserved_device_name(rel)
    if bad is not None:
        raise reserved_name_error("ws_write", rel, bad)
    content = args.get("content")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise ToolError(
            f"ws_write: content must be a string (the whole file text), got "
            f"{type(content).__name__}. Send the file text as one JSON string.",
            error="bad_arguments",
        )
    allow_shrink = args.get("allow_shrink") is True
    if os.path.isdir(real):
        raise ToolError(
            f"ws_write: {rel} is a directory; give a file path inside it, e.g. {rel}/new_file.py.",
            error="is_directory",
        )
    exists = os.path.exists(real)
    if exists and not os.path.isfile(real):
        raise _not_a_file(rel)
    with call.ws.writing([real], tool="ws_write", rel=rel):
        before: str | None = None
        if exists:
            try:
                before = read_text(real, call.ws.jail).text  # never an outside file swapped in
            except NotText:
                before = None
            except NotRegular:
                raise _not_a_file(rel) from None
            except OSError as exc:
                raise ToolError(f"ws_write: cannot read {rel} ({exc.strerror}).") from None
        if content == "" and not exists:
            raise _empty_refusal(rel, args)
        if exists:
            if call_setting(call, "read_before_edit") and not call.session.has_read(real):
                raise _not_read_refusal(rel)
            old_lines = len(split_lines(before or ""))
            if content == "" and not allow_shrink:
                raise ToolError(
                    f"Write refused — content is empty, so this would empty {rel} "
                    f"({old_lines} lines). If emptying it really is the intent, repeat the call "
                    'with "allow_shrink": true; to delete the file use ws_delete.',
                    error="empty_content",
                    unknown_keys=_unknown_keys(args),
                )
            if not allow_shrink and _shrinks(before or "", content):
                raise _shrink_refusal(rel, before or "", content)
        if before is not None and before == content:
            return ToolResult.success(
                f"{rel} unchanged — it already has exactly this content.",
                path=rel,
                files=[file_change(rel, before, content, "unchanged")],
            )
        cp = None

        def checkpoint() -> None:
            nonlocal cp
            if exists:
                cp = checkpoints.save_before(call, real, rel, reason="overwrite")

        try:
            wrote, note, outcome = syntax.apply_with_syntax_check(
                call.ws,
                resolved,
                before,
                content,
                disabled=args.get("disable_syntax_check") is True,
                before_write=checkpoint,
                tool="ws_write",
                expected=None if not exists else ANY if before is None else encode(before),
            )
        except Stale as exc:
            raise ToolError(exc.refusal("ws_write", rel), error="stale", path=rel) from None
        except OSError as exc:
            raise ToolError(
                f"ws_write: cannot write {rel} ({exc.strerror}). Nothing was written."
                f"{permission_hint(exc)}",
                error="write_failed",
            ) from None
        if not wrote:
            message = (
                note.replace("EDIT REVERTED", "WRITE REVERTED")
                .replace("in new_str", "in content")
            )
            return ToolResult.error(
                message,
                error="syntax_reverted",
                syntax=outcome.status,
                files=[file_change(rel, before, content, "reverted", message=outcome.message)],
            )
    call.session.record_view(real, FileView(whole=True))
    lines = len(split_lines(content))
    verb = "overwrote" if exists else "created"
    text = f"{verb} {rel} ({lines} lines, {len(encode(content))} bytes)"
    if cp is not None:
        text += f" — previous version saved as checkpoint {cp.id}"
    unknown = _unknown_keys(args)
    if unknown:
        text += "\n[ignored unrecognized key(s): " + ", ".join(repr(k) for k in unknown) + "]"
    twin = None if exists else _same_as_read_file(call, real, content)
    if twin is not None:
        text += (
            f"\n[note: this is exactly the content of {twin}, which still exists. If you meant to "
            f"rename it, undo this with ws_delete {compact_json({'path': rel})} and use ws_mv "
            f"{compact_json({'src': twin, 'dst': rel})} — ws_mv is the way to rename]"
        )
    if note:
        text += "\n" + note
    call.session.telemetry["ws_write." + ("overwrite" if exists else "create")] += 1
    return ToolResult.success(
        text,
        path=rel,
        created=not exists,
        checkpoint=cp.id if cp else None,
        syntax=outcome.status,
        files=[file_change(rel, before, content, "written", message=note or None)],
    )


TOOL = Tool(
    name="ws_write",
    profile="slmcode",
    gate=GATE_WRITE,
    description=DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path relative to the project root."},
            "content": {"type": "string", "description": "The whole text of the file."},
            "allow_shrink": {
                "type": "boolean",
                "description": "Allow replacing a large file with a much smaller (or empty) one.",
            },
            "disable_syntax_check": {
                "type": "boolean",
                "description": "Skip the post-write syntax check.",
            },
        },
        "required": ["path"],
        # Unknown keys reach the tool so an empty-content refusal can name them.
        "additionalProperties": True,
    },
    run=_run,
    main_arg="content",
    aliases={
        "contents": "content",
        "text": "content",
        "body": "content",
        "file_path": "path",
        "file": "path",
        "filename": "path",
    },
    mutates=True,
    idempotent=True,  # the same content again leaves the same file
    touches_image=False,
    action=approval.FILE,
)
