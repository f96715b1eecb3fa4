"""bash_kill — stop a background job with its whole process group (kli profile, gate
process/exec).

SIGTERM to the job's process group, SIGKILL to whatever is left after ``runner.KILL_GRACE``.
The job's captured output stays readable with ``bash_output`` until the session ends. Killing
a job that already exited is not an error: the result says it had exited.
"""

from __future__ import annotations

from kli.tools.core.registry import GATE_EXEC, Call, Tool
from kli.tools.core.result import ToolResult
from kli.tools.process.bash_output import find_job

DESCRIPTION = """\
Stop a running background shell job by its id: its whole process group gets SIGTERM, then \
SIGKILL after half a second. Its captured output stays readable with bash_output until the \
session ends. Parameter: job_id."""

PARAMETERS = {
    "type": "object",
    "properties": {"job_id": {"type": "string", "description": "The id bash returned."}},
    "required": ["job_id"],
    "additionalProperties": False,
}


def _run(call: Call) -> ToolResult:
    job = find_job(call)
    if not job.running:
        job.kill("bash_kill")  # members of its group may still run
        return ToolResult.success(f"{job.describe()}; nothing left to stop.", **job.facts())
    job.kill("bash_kill")
    return ToolResult.success(
        f"{job.describe()}. Its output so far is readable with bash_output.", **job.facts()
    )


TOOL = Tool(
    name="bash_kill",
    profile="kli",
    gate=GATE_EXEC,
    description=DESCRIPTION,
    parameters=PARAMETERS,
    run=_run,
    main_arg="job_id",
    mutates=True,
    open_world=False,  # signals only a job of this session
    touches_image=False,
)
