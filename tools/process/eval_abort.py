"""eval_abort — end a parked evaluation; its frames are freed (kli profile, gate image/eval)."""

from __future__ import annotations

from kli.tools.core.registry import GATE_EVAL, Call, Tool
from kli.tools.core.result import ToolResult
from kli.tools.process import parked

DESCRIPTION = """\
End a parked evaluation (one that eval with on_error "interactive" parked): it is dropped and \
its frames and their locals are freed; the statements after the failing one never run. \
Parameter: park (the id, e.g. p1)."""

PARAMETERS = {
    "type": "object",
    "properties": {"park": {"type": "string", "description": "The parked evaluation's id."}},
    "required": ["park"],
    "additionalProperties": False,
}


def _run(call: Call) -> ToolResult:
    p = parked.find(call)
    parked.session_parked(call.session).pop(p.id, None)
    left = ", ".join(parked.session_parked(call.session)) or "none"
    return ToolResult.success(
        f"aborted {p.id} ({type(p.exc).__name__} at line {p.line}); the statements after it did "
        f"not run. Parked now: {left}.", park=p.id)


TOOL = Tool(
    name="eval_abort",
    profile="kli",
    gate=GATE_EVAL,
    description=DESCRIPTION,
    parameters=PARAMETERS,
    run=_run,
    main_arg="park",
    mutates=True,
)
