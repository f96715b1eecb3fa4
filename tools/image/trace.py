"""trace — record the calls of a live function (kli profile, gate image/eval: it changes the
image). See ``tracing`` for what is recorded and the limits."""

from __future__ import annotations

from kli.tools.core import approval
from kli.tools.core.registry import GATE_EVAL, Call, ImageScope, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.image import tracing
from kli.tools.image.names import resolve

DESCRIPTION = f"""\
Trace a function or method of the live image by dotted name (my_func, mymod.helper, \
mymod.Cls.method): its calls — arguments, return value or exception, duration — accrue in this \
session's ring of the last {tracing.TRACE_RING} calls, read with trace_read; cells that call it \
are traced too. Only calls that look the name up are seen (a reference taken earlier, as by \
`from mod import f`, calls the original). Undo with untrace; the trace ends with the session. \
Changes the image. Parameter: function."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "function": {"type": "string", "description": "Dotted name of the function."},
    },
    "required": ["function"],
    "additionalProperties": False,
}


def _run(call: Call) -> ToolResult:
    found = resolve(call, call.args["function"])
    if found.owner is None:
        raise ToolError(f"{found.dotted} is a module; trace one of its functions.",
                        error="not_traceable")
    try:
        trace = tracing.install(call.session, found.dotted, found.owner, found.attr)
    except ValueError as exc:
        raise ToolError(str(exc), error="not_traceable", function=found.dotted) from None
    return ToolResult.success(
        f"tracing {trace.dotted}: its calls are recorded; read them with trace_read, stop with "
        "untrace.", function=trace.dotted)


def image_scope(call: Call) -> ImageScope:
    """The owner of the traced name (the namespace, a module, a class), for the image's undo
    record: trace replaces an attribute there."""
    owner = resolve(call, call.args["function"].strip()).owner
    label = call.args["function"].strip().rsplit(".", 1)[0] if "." in call.args["function"] \
        else "__main__"
    return ImageScope([(label, owner)] if owner is not None else [], [])


TOOL = Tool(
    name="trace",
    profile="kli",
    gate=GATE_EVAL,
    description=DESCRIPTION,
    parameters=PARAMETERS,
    run=_run,
    main_arg="function",
    mutates=True,
    # It replaces a function of the live image (every later call goes through the wrapper):
    # held under review for eval like the code it stands for. untrace, which only puts back
    # what this session's trace replaced, is not.
    action=approval.EVAL,
    destructive=False, open_world=False,  # reversible (untrace), inside the image
    image_scope=image_scope,
)
