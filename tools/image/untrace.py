"""untrace — stop tracing one function: the original is put back (kli profile, gate
image/eval). Only that trace is removed; an untraced name is an error listing the traced
ones."""

from __future__ import annotations

from kli.tools.core.registry import GATE_EVAL, Call, ImageScope, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.image import tracing

DESCRIPTION = """\
Stop tracing one function of the live image — the reverse of trace: the original function is \
put back where trace replaced it. Only that trace is removed; calls already recorded stay \
readable with trace_read. Errors when the function is not traced by this session. Changes the \
image. Parameter: function (the dotted name given to trace)."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "function": {"type": "string", "description": "The dotted name given to trace."},
    },
    "required": ["function"],
    "additionalProperties": False,
}


def _run(call: Call) -> ToolResult:
    traces = tracing.session_traces(call.session)
    name = call.args["function"].strip()
    trace = traces.pop(name, None)
    if trace is None:
        listed = ", ".join(sorted(traces)) or "none"
        raise ToolError(f"{name} is not traced by this session (traced: {listed}).",
                        error="not_traced", function=name)
    restored = trace.restore()
    how = "" if restored else (" — it had been defined again since trace, so the new "
                               "definition was left in place")
    return ToolResult.success(f"untraced {name} ({trace.calls} calls were recorded){how}.",
                              function=name, calls=trace.calls, restored=restored)


def image_scope(call: Call) -> ImageScope:
    """Where the trace put its wrapper (the owner it puts the original back on), for the
    image's undo record."""
    name = call.args["function"].strip()
    trace = tracing.session_traces(call.session).get(name)
    if trace is None:
        return ImageScope([], [])
    return ImageScope([(name.rsplit(".", 1)[0] if "." in name else "__main__", trace.owner)], [])


TOOL = Tool(
    name="untrace",
    profile="kli",
    gate=GATE_EVAL,
    description=DESCRIPTION,
    parameters=PARAMETERS,
    run=_run,
    main_arg="function",
    mutates=True,
    destructive=False, idempotent=True, open_world=False,  # restores the original
    image_scope=image_scope,
)
