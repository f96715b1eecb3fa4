"""ws_todo — write or replace a short checklist and echo it back.

The echo is the point: the plan stays in recent context, where a small model's attention is.
The list lives in the session (``call.session.todo``: ``[{"text", "status"}]``), so each
agent connection has its own. Items may be objects ``{"text", "status"}`` or plain strings
(``"[x] done thing"``, ``"- [ ] open thing"``, or just ``"thing"`` = pending). Calling with no
``items`` shows the current list; an empty list clears it.
"""

from __future__ import annotations

import re
from typing import Any

from kli.tools.core.registry import Call, Tool
from kli.tools.core.result import ToolError, ToolResult

TODO_MAX_ITEMS = 20
TODO_MAX_ITEM_CHARS = 200
STATUSES = ("pending", "in_progress", "done")
_STATUS_ALIASES = {
    "pending": "pending",
    "todo": "pending",
    "open": "pending",
    "not_started": "pending",
    "in_progress": "in_progress",
    "in-progress": "in_progress",
    "doing": "in_progress",
    "active": "in_progress",
    "started": "in_progress",
    "wip": "in_progress",
    "done": "done",
    "completed": "done",
    "complete": "done",
    "finished": "done",
}
_MARKS = {"pending": "[ ]", "in_progress": "[>]", "done": "[x]"}
_BOX = re.compile(r"^\s*(?:[-*]\s*|\d+[.)]\s*)?\[([ xX>~-])\]\s*")
_BOX_STATUS = {
    " ": "pending",
    "x": "done",
    "X": "done",
    ">": "in_progress",
    "~": "in_progress",
    "-": "in_progress",
}

DESCRIPTION = """Write or replace your short checklist (the whole list each call) and get it echoed back.
Use it to plan multi-step work and tick items off as you go.
  ws_todo {"items": [{"text": "add parser test", "status": "done"},
                     {"text": "fix off-by-one in split()", "status": "in_progress"},
                     {"text": "run the tests", "status": "pending"}]}
status is pending, in_progress or done. Items may also be strings like "[x] add test".
At most 20 items. Call with no items to see the current list; "items": [] clears it."""


def _item(raw: Any, i: int) -> dict[str, str]:
    text: Any
    if isinstance(raw, str):
        text, status = raw, "pending"
        m = _BOX.match(raw)
        if m:
            status = _BOX_STATUS[m.group(1)]
            text = raw[m.end() :]
        else:
            text = re.sub(r"^\s*(?:[-*]|\d+[.)])\s+", "", raw)
    elif isinstance(raw, dict):
        text = raw.get("text", raw.get("content", raw.get("task", raw.get("title"))))
        given = raw.get("status", "pending")
        if isinstance(raw.get("done"), bool):
            given = "done" if raw["done"] else "pending"
        status = _STATUS_ALIASES.get(str(given).strip().lower(), "")
        if not status:
            raise ToolError(
                f"ws_todo: item {i + 1} has status {given!r}; use one of pending, in_progress, "
                "done.",
                error="bad_arguments",
            )
    else:
        raise ToolError(
            f'ws_todo: item {i + 1} must be an object {{"text": …, "status": …}} or a '
            f"string, got {type(raw).__name__}.",
            error="bad_arguments",
        )
    if not isinstance(text, str) or not text.strip():
        raise ToolError(
            f'ws_todo: item {i + 1} has no text; give each item a "text".', error="bad_arguments"
        )
    text = " ".join(text.split())
    if len(text) > TODO_MAX_ITEM_CHARS:
        text = text[: TODO_MAX_ITEM_CHARS - 1] + "…"
    return {"text": text, "status": status}


def render(todo: list[dict[str, str]]) -> str:
    if not todo:
        return "(checklist is empty)"
    done = sum(1 for t in todo if t["status"] == "done")
    rows = [f"Checklist ({done}/{len(todo)} done):"]
    for n, t in enumerate(todo, 1):
        tail = "  ← in progress" if t["status"] == "in_progress" else ""
        rows.append(f"{_MARKS[t['status']]} {n}. {t['text']}{tail}")
    return "\n".join(rows)


def _run(call: Call) -> ToolResult:
    raw = call.args.get("items")
    if raw is None:
        return ToolResult.success(render(call.session.todo), items=list(call.session.todo))
    if isinstance(raw, str):
        raw = [line for line in raw.splitlines() if line.strip()]
    if not isinstance(raw, list):
        raise ToolError("ws_todo: items must be a list.", error="bad_arguments")
    if len(raw) > TODO_MAX_ITEMS:
        raise ToolError(
            f"ws_todo: {len(raw)} items is too many — keep the checklist to at most "
            f"{TODO_MAX_ITEMS} short steps (merge small ones).",
            error="too_many",
        )
    items = [_item(r, i) for i, r in enumerate(raw)]
    call.session.todo = items
    text = render(items)
    if sum(1 for t in items if t["status"] == "in_progress") > 1:
        text += "\n[more than one item is in progress — finish one before starting the next]"
    return ToolResult.success(text, items=list(items))


TOOL = Tool(
    name="ws_todo",
    profile="slmcode",
    gate=None,
    description=DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "description": 'The whole checklist: [{"text": "...", "status": "pending"}].',
                "items": {
                    "anyOf": [
                        {
                            "type": "object",
                            "properties": {
                                "text": {"type": "string"},
                                "status": {"type": "string", "enum": list(STATUSES)},
                            },
                            "required": ["text", "status"],
                        },
                        {"type": "string"},
                    ]
                },
            },
        },
        "additionalProperties": False,
    },
    run=_run,
    aliases={"todos": "items", "todo": "items", "checklist": "items", "tasks": "items"},
    touches_image=False,
)
