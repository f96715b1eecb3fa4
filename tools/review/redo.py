"""``redo``: put back a change that ``undo`` took back (the undo of that undo)."""

from __future__ import annotations

from kli.tools.core import approval, undo
from kli.tools.core.registry import GATE_WRITE, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.review.undo import FORCE


def run_redo(call: Call) -> ToolResult:
    wanted = call.args["change"]
    all_changes = undo.timeline(call.ws.root)
    undo_id = undo.undone_by(all_changes).get(wanted)
    taken_by = next((c for c in all_changes if c.id == undo_id), None)
    if taken_by is None:
        raise ToolError(f"redo: change {wanted!r} has not been undone (or its undo was evicted); "
                        "list them with changes.", error="not_found")
    return undo.take_back(call, [taken_by], bool(call.args.get("force")), "redo", wanted)


TOOL = Tool(
    name="redo",
    profile="kli",
    gate=GATE_WRITE,
    description="Put back a change that undo took back (change=<the undone change's id>).",
    parameters={"type": "object", "properties": {
        "change": {"type": "string", "description": "The id of the change that was undone."},
        "force": FORCE,
    }, "required": ["change"], "additionalProperties": False},
    run=run_redo,
    main_arg="change",
    mutates=True,
    touches_image=False,
    image_when=undo.reaches_parts,  # a change holding a live image part: after a running cell
    action=approval.FILE,
)
