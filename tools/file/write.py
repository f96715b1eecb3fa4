"""``write``: replace a file whole with the given content.

Spec (kli-tools.txt, write): the content replaces the file whole; missing parent directories
are created; the prior content rides in the result details for the diff view. Decisions where
the spec is silent:

- The content is written exactly as given (no newline conversion, no trailing newline added):
  ``write`` is the one tool that sets a file's bytes precisely.
- The write is atomic and keeps an existing file's mode (``kli.tools.core.atomic``); nothing
  is written under ``.kli/`` except ``.kli/scratch/`` (the jail).
- The session's view of the file is forgotten: ``write`` shows no anchors, so a following
  ``edit`` needs a ``read`` (or ``search``) of the new content first — anchors from before the
  write are refused instead of being applied to different text.
- The diff view's texts are bounded by ``changes.MAX_DIFF_TEXT``: a larger prior file is not
  held in memory (its lines are only counted), and the counts are then whole-file line counts.
"""

from __future__ import annotations

import os

from kli.tools.core import approval
from kli.tools.core.atomic import ANY, Stale, permission_hint, write_atomic
from kli.tools.core.changes import MAX_DIFF_TEXT, file_change
from kli.tools.core.jail import Jail
from kli.tools.core.registry import GATE_WRITE, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.textfile import (
    NotRegular,
    NotText,
    TooLarge,
    decode,
    encode,
    open_regular,
    read_bytes,
    split_lines,
)
from kli.tools.notebook import address


def _prior(real: str, jail: Jail) -> tuple[bool, str | None, int]:
    """(existed, prior text or None when too large / binary, prior line count), read through
    the shared loader (never an outside file swapped in since the resolve); ``NotRegular``
    for a pipe, socket or device at the path."""
    try:
        data = read_bytes(real, jail, limit=MAX_DIFF_TEXT)
    except (FileNotFoundError, NotADirectoryError):
        return False, None, 0
    except TooLarge:
        return True, None, _count_lines(real, jail)
    try:
        text = decode(data)
    except NotText:
        return True, None, 0
    return True, text, len(split_lines(text))


def _verified(existed: bool, before: str | None) -> object:
    """What the replace checks the file still holds: the prior text read (so the diff shown
    is what was replaced), nothing for a new file, anything when it was too large to carry."""
    if not existed:
        return None
    return ANY if before is None else encode(before)


def _count_lines(real: str, jail: Jail) -> int:
    """Lines of a file too large to carry, counted block by block (no text held)."""
    count = 0
    last = b"\n"
    with open_regular(real, jail) as fh:
        while block := fh.read(1 << 20):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (0 if last == b"\n" else 1)


def _run(call: Call) -> ToolResult:
    path: str = call.args["path"]
    content: str = call.args["content"]
    nb_path, cell_id = address.split(path)
    if cell_id is not None and not os.path.lexists(os.path.join(call.ws.root, path)):
        raise ToolError(
            f"write refused: {path} names a cell of the notebook {nb_path}, and write replaces "
            f"whole files. Change the cell's source with edit (an '@@ {path}' section, after "
            f"read path='{path}'), or add a cell with cells op=insert. Nothing was written.",
            error="notebook_cell",
            path=path,
        )
    resolved = call.ws.jail.resolve(path, write=True)
    real, rel = resolved.real, resolved.rel
    if os.path.isdir(real):
        raise ToolError(
            f"write failed: {rel} is a directory; give a file path such as {rel}/name.txt.",
            error="is_directory",
            path=rel,
        )
    try:
        data = encode(content)
    except UnicodeEncodeError as exc:
        raise ToolError(
            f"write failed: content cannot be encoded as UTF-8 ({exc.reason} at character "
            f"{exc.start}); remove the lone surrogate and retry.",
            error="encoding",
            path=rel,
        ) from None
    parent = os.path.dirname(real)
    created_dirs = not os.path.isdir(parent)
    with call.ws.writing([real], tool="write", rel=rel):
        try:
            existed, before, before_lines = _prior(real, call.ws.jail)
            write_atomic(real, data, _verified(existed, before))
        except Stale as exc:
            raise ToolError(exc.refusal("write", rel), error="stale", path=rel) from None
        except NotRegular:
            raise ToolError(
                f"write failed: {rel} is not a regular file (a pipe, socket or device); write "
                "replaces files only — choose another path. Nothing was changed.",
                error="not_regular",
                path=rel,
            ) from None
        except OSError as exc:
            raise ToolError(
                f"write failed: cannot write {rel} ({exc.strerror}). Nothing was changed."
                f"{permission_hint(exc)}",
                error="io",
                path=rel,
            ) from None
    call.session.forget(real)
    after_lines = len(split_lines(content))
    if before is None and existed:
        change = file_change(rel, None, None, "written", added=after_lines, removed=before_lines)
        change["too_large"] = True
        change["after"] = content if len(content) <= MAX_DIFF_TEXT else None
    else:
        change = file_change(rel, before, content, "written")
    change["existed"] = existed
    verb = "Replaced" if existed else "Created"
    extra = "; created missing parent folders" if created_dirs else ""
    text = (
        f"{verb} {rel} ({after_lines} line(s), {len(data)} bytes; "
        f"+{change['added']} -{change['removed']}{extra}). "
        "Read it before editing: write shows no anchors."
    )
    return ToolResult.success(
        text, path=rel, bytes=len(data), lines=after_lines, existed=existed, files=[change]
    )


TOOL = Tool(
    name="write",
    profile="kli",
    gate=GATE_WRITE,
    description=(
        "Write content to a file, replacing it whole (or creating it). Missing parent folders "
        "are created. The content is written exactly as given — include the final newline you "
        "want. The write is atomic and keeps an existing file's permissions. Files under .kli/ "
        "(kli control state) and .git/ (the repository's) cannot be written, except "
        ".kli/scratch/. The file's prior content "
        "is kept in the result details for a diff view. write shows no LINE:HH anchors: to "
        "edit the file afterwards, read it (or search it) first. Prefer edit for small changes "
        "to an existing file."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to write, relative to the workspace root.",
            },
            "content": {"type": "string", "description": "Full new content of the file."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    },
    run=_run,
    main_arg="content",
    aliases={"file": "path", "file_path": "path", "text": "content"},
    mutates=True,
    idempotent=True,  # the same content again leaves the same file
    touches_image=False,
    action=approval.FILE,
)
