"""``changes``: the recorded changes to files, newest first (the timeline of
``kli.tools.core.undo``), optionally of one session."""

from __future__ import annotations

from kli.tools.core import undo
from kli.tools.core.registry import Call, Tool
from kli.tools.core.result import ToolResult


def run_changes(call: Call) -> ToolResult:
    session = call.args.get("session")
    limit = int(call.args.get("limit", undo.LIST_MAX))
    found = [c for c in undo.timeline(call.ws.root) if undo.of_session(c, session)]
    if not found:
        return ToolResult.success("(no recorded changes" + (f" of session {session}" if session else "")
                                  + "; every change made through the tools is recorded)", changes=[])
    shown, _total = undo.timeline_json(call.ws.root, session, limit)
    taken = {c["id"]: c["undone_by"] for c in shown if c["undone_by"]}
    text = f"{len(found)} change(s), newest first:\n" + "\n".join(
        c.line() + (f"  [undone by {taken[c.id]}]" if c.id in taken else "")
        for c in found[:limit])
    text += "\nUndo one with undo change=<id>; everything of a session since a time with " \
            "undo session=<session id, in parentheses> since=HH:MM."
    return ToolResult.success(text, changes=shown)


TOOL = Tool(
    name="changes",
    profile="kli",
    gate=None,
    description="List the recorded changes to files (every edit, write, delete, move, cell edit, "
    "and files a bash/ws_shell/eval call changed), newest first, optionally of one session.",
    parameters={"type": "object", "properties": {
        "session": {"type": "string", "description": "Session id or label (a label may name "
                    "several sessions)."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 500},
    }, "additionalProperties": False},
    run=run_changes,
    main_arg="session",
    touches_image=False,
)
