"""trace_read — the calls recorded by this session's traces, oldest first (kli profile, gate
image/inspect). It reads only the session's ring, not the image, so it is answered while a
cell runs (``touches_image`` false): trace a function, run the cell, watch its calls."""

from __future__ import annotations

from kli.tools.core.registry import GATE_INSPECT, Call, Tool
from kli.tools.core.result import ToolResult
from kli.tools.image import tracing

DESCRIPTION = f"""\
Return the calls recorded by this session's traces, oldest first: function, arguments, return \
value or exception, duration in seconds, thread. The ring keeps the most recent \
{tracing.TRACE_RING} calls; when older ones were dropped the result leads with how many. \
Read-only. Parameters: function (only this traced name; default all); clear (empty the ring \
after reading; default false)."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "function": {"type": "string", "description": "Only calls of this traced name."},
        "clear": {"type": "boolean", "description": "Empty the ring after reading."},
    },
    "additionalProperties": False,
}


def _run(call: Call) -> ToolResult:
    calls, evicted = tracing.session_ring(call.session).take(bool(call.args.get("clear")))
    only = call.args.get("function")
    if only:
        calls = [c for c in calls if c["function"] == only]
    traced = sorted(tracing.session_traces(call.session))
    lines = []
    if evicted:
        lines.append(f"[{evicted} older calls were dropped: the ring keeps {tracing.TRACE_RING}]")
    for c in calls:
        outcome = f"-> {c['returned']}" if "returned" in c else f"!! raised {c['raised']}"
        lines.append(f"{c['function']}({', '.join(c['args'])}) {outcome}  "
                     f"[{c['seconds'] * 1000:.3f} ms, {c['thread']}]")
    if not calls:
        lines.append("no calls recorded" + (f" for {only}" if only else "")
                     + f" (traced now: {', '.join(traced) or 'nothing'}).")
    return ToolResult.success("\n".join(lines), calls=calls, evicted=evicted, traced=traced)


TOOL = Tool(
    name="trace_read",
    profile="kli",
    gate=GATE_INSPECT,
    description=DESCRIPTION,
    parameters=PARAMETERS,
    run=_run,
    touches_image=False,
)
