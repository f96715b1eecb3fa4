"""bash_jobs — list this session's background jobs (kli profile, gate process/exec).

One line per job: id, status (running / exited / killed / timed out), exit code, seconds,
characters captured per stream and how many are unread, the change its file changes were
recorded as once it ended (``undo change=…`` takes them back), and the command (cut to
``COMMAND_CHARS``). At most ``jobs.MAX_KEPT_JOBS`` jobs are remembered per session.
"""

from __future__ import annotations

from kli.tools.core.registry import GATE_EXEC, Call, Tool
from kli.tools.core.result import ToolResult
from kli.tools.process import jobs

COMMAND_CHARS = 80

DESCRIPTION = f"""\
List the background shell jobs of this session: each job's id, whether it is running or has \
exited (with its exit code), how long it ran, and how many characters of output it captured \
and how many are unread. Read-only; at most {jobs.MAX_KEPT_JOBS} jobs are remembered."""

PARAMETERS: dict[str, object] = {"type": "object", "properties": {},
                                 "additionalProperties": False}


def _run(call: Call) -> ToolResult:
    listed = list(jobs.session_jobs(call.session).values())
    if not listed:
        return ToolResult.success(
            "no background jobs in this session (start one with bash and "
            "run_in_background: true).", jobs=[])
    lines = []
    for job in listed:
        code = "" if job.running else f" exit {job.exit_code}"
        cmd = job.command if len(job.command) <= COMMAND_CHARS else \
            job.command[: COMMAND_CHARS - 1] + "…"
        facts = job.facts()
        changed = f"  changed files: change {facts['change']}" if "change" in facts else ""
        lines.append(
            f"{job.id}  {job.status}{code}  {job.seconds():.1f} s  stdout {job.stdout.total} "
            f"stderr {job.stderr.total} chars ({facts['unread']} unread){changed}  $ {cmd}"
        )
    running = sum(1 for j in listed if j.running)
    head = f"{len(listed)} background jobs, {running} running:"
    return ToolResult.success("\n".join([head, *lines]), jobs=[j.facts() for j in listed])


TOOL = Tool(
    name="bash_jobs",
    profile="kli",
    gate=GATE_EXEC,
    description=DESCRIPTION,
    parameters=PARAMETERS,
    run=_run,
    touches_image=False,
)
