"""ws_list — the entries of one directory: folders first (with a trailing ``/``), then files
with their sizes. An empty or missing directory gets an explicit message, never an empty
string the model has to interpret."""

from __future__ import annotations

import os

from kli.tools.core.atomic import is_temporary
from kli.tools.core.registry import GATE_READ, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.ws.common import compact_json, human_size

LIST_MAX_ENTRIES = 500

DESCRIPTION = """List one directory (not recursive): folders first, marked with a trailing /,
then files with their sizes. Parameter: path (default "." = the project root). To find files
at any depth by name use ws_glob (e.g. "**/*_test.py"); to search contents use ws_grep."""


def _run(call: Call) -> ToolResult:
    path = call.args.get("path") or "."
    resolved = call.ws.jail.resolve(path)
    real, rel = resolved.real, resolved.rel
    if not os.path.exists(real):
        parent = os.path.dirname(rel.rstrip("/")) or "."
        raise ToolError(
            f"ws_list: directory {rel} does not exist. List its parent with ws_list "
            f"{compact_json({'path': parent})}, or find it with ws_glob "
            f"{compact_json({'pattern': '**/' + os.path.basename(rel) + '/**'})}.",
            error="not_found",
        )
    if not os.path.isdir(real):
        raise ToolError(
            f"ws_list: {rel} is a file, not a directory. Read it with ws_read "
            f"{compact_json({'path': rel})}.",
            error="not_a_directory",
        )
    try:
        # A killed writer's temporary file (.NAME.*.kli-tmp) is not an entry of the project.
        entries = [e for e in os.scandir(real) if not is_temporary(e.name)]
    except OSError as exc:
        raise ToolError(f"ws_list: cannot list {rel} ({exc.strerror}).") from None
    if not entries:
        return ToolResult.success(
            f"(directory {rel} is empty — it has no files or folders)", path=rel, count=0
        )
    dirs: list[str] = []
    files: list[str] = []
    for e in entries:
        try:
            if e.is_dir():
                dirs.append(e.name + "/" + ("  → symlink" if e.is_symlink() else ""))
                continue
            size = e.stat().st_size if e.is_file() else 0
        except OSError:
            size = 0
        link = "  → symlink" if e.is_symlink() else ""
        files.append(f"{e.name}  ({human_size(size)}){link}")
    rows = sorted(dirs, key=str.lower) + sorted(files, key=str.lower)
    total = len(rows)
    header = f"{rel}: {len(dirs)} folder(s), {len(files)} file(s)"
    shown = rows[:LIST_MAX_ENTRIES]
    text = header + "\n" + "\n".join(shown)
    if total > LIST_MAX_ENTRIES:
        text += (
            f"\n[showing {LIST_MAX_ENTRIES} of {total} entries; use ws_glob with a pattern to "
            "find specific files]"
        )
    return ToolResult.success(text, path=rel, count=total)


TOOL = Tool(
    name="ws_list",
    profile="slmcode",
    gate=GATE_READ,
    description=DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Directory relative to the project root."},
        },
        "additionalProperties": False,
    },
    run=_run,
    main_arg="path",
    aliases={"dir": "path", "directory": "path", "folder": "path"},
    touches_image=False,
)
