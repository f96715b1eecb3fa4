"""eval_frame — evaluate code in one frame of a parked evaluation (kli profile, gate
image/eval). See ``parked`` for what a frame's namespace is."""

from __future__ import annotations

from kli.tools.core import approval
from kli.tools.core.registry import GATE_EVAL, Call, ImageScope, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.process import eval as eval_
from kli.tools.process import parked
from kli.tools.process.bash import DEFAULT_TIMEOUT, MAX_TIMEOUT, clamp_timeout

DESCRIPTION = f"""\
Evaluate Python code in one frame of a parked evaluation (one that eval with on_error \
"interactive" parked): the frame's globals and a copy of its local variables as they were when \
it raised. Values and output come back as from eval. Assignments change that copy (seen by the \
next eval_frame of the frame), not the ended frame. Parameters: park (the id, e.g. p1); frame \
(the index the parked result lists; default the innermost, where it raised); code; timeout \
(default {DEFAULT_TIMEOUT}, at most {MAX_TIMEOUT})."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "park": {"type": "string", "description": "The parked evaluation's id, e.g. p1."},
        "frame": {"type": "integer", "description": "Frame index; default the innermost."},
        "code": {"type": "string", "description": "Python source run in that frame."},
        "timeout": {"type": "integer", "description": f"Seconds; default {DEFAULT_TIMEOUT}."},
    },
    "required": ["park", "code"],
    "additionalProperties": False,
}


def _run(call: Call) -> ToolResult:
    p = parked.find(call)
    timeout, clamp_note = clamp_timeout(call.args.get("timeout"))
    index = call.args.get("frame")
    last = len(p.frames) - 1
    if index is None:
        index = last
    if not 0 <= index <= last:
        raise ToolError(f"frame {index} is not a frame of {p.id}: give 0 to {last} (0 is the "
                        "outermost, the eval's own statement).", error="bad_frame", park=p.id)
    frame = p.frames[index]
    _filename, units = eval_.prepare(call, call.args["code"])
    outcome = eval_.run_units(units, frame.frame.f_globals, timeout, frame.locals)
    where = f"frame [{index}] {frame.function} of {p.id}"
    result = eval_.report(call, outcome, tool="eval_frame", clamp_note=clamp_note,
                          extra={"park": p.id, "frame": index})
    return type(result)(result.ok, f"in {where}:\n{result.text}", result.details)


def image_scope(call: Call) -> ImageScope:
    """The frame's globals and the code, for the image's undo record (the frame's locals are a
    copy that has no other reader)."""
    p = parked.find(call)
    index = call.args.get("frame")
    frame = p.frames[len(p.frames) - 1 if index is None else index]
    return ImageScope([(frame.frame.f_globals.get("__name__", "globals"), frame.frame.f_globals)],
                      [call.args.get("code") or ""])


TOOL = Tool(
    name="eval_frame",
    profile="kli",
    gate=GATE_EVAL,
    description=DESCRIPTION,
    parameters=PARAMETERS,
    run=_run,
    main_arg="code",
    mutates=True,
    action=approval.EVAL,  # runs the agent's code in the image
    image_scope=image_scope,
)
