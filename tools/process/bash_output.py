"""bash_output — read what a background job printed since the last read (kli profile, gate
process/exec).

- ``job_id``: a job this session started with ``bash`` ``run_in_background``; another
  session's job, or an unknown id, is an error naming ``bash_jobs``.
- ``wait``: seconds to wait for new output or the job's exit before answering (default 0,
  at most ``MAX_WAIT``); the call returns as soon as either happens.
- Each stream shows only the characters produced since the previous read, labelled, head and
  tail past ``present.MODEL_STREAM_CHARS`` (the rest saved under ``.kli/scratch/``); what the
  1 MiB capture dropped while the job ran is counted.
- The result says whether the job is running or has exited (with its exit code); an exit is
  not an error result, whatever its code (the read itself succeeded) — ``details`` carry it.
- The files the job created, modified or deleted under the root are shown as they happen:
  a read while it runs shows (and records as one change) those since its start or the last
  read that showed some; the first read after it ended, the rest (``details["files"]``,
  detected as after a foreground ``bash``; ``details["change"]`` the change ``undo`` takes
  back, the newest one in every later read too).
"""

from __future__ import annotations

import time

from kli.tools.core.registry import GATE_EXEC, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.process import jobs
from kli.tools.process.bash import OUTPUT_CAP
from kli.tools.process.present import stream_section

MAX_WAIT = 30
POLL = 0.05

DESCRIPTION = f"""\
Read new output from a background shell job started with bash's run_in_background option: \
what it printed to stdout and stderr since the last read, and whether it is still running or \
has exited (with its exit code). Parameters: job_id; wait (seconds to wait for new output or \
the exit, default 0, at most {MAX_WAIT}). Output past the 1 MiB capture per stream is counted, \
not kept; a long read is shown head and tail with the rest saved under .kli/scratch/."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "job_id": {"type": "string", "description": "The id bash returned, e.g. job3."},
        "wait": {
            "type": "number",
            "description": f"Seconds to wait for new output or the exit; default 0, at most "
            f"{MAX_WAIT}.",
        },
    },
    "required": ["job_id"],
    "additionalProperties": False,
}


def find_job(call: Call) -> jobs.Job:
    """The session's job named by ``job_id``, or a ToolError saying how to find one."""
    job_id = call.args["job_id"]
    job = jobs.session_jobs(call.session).get(job_id)
    if job is None:
        known = ", ".join(jobs.session_jobs(call.session)) or "none"
        raise ToolError(
            f"no background job {job_id!r} in this session (its jobs: {known}). List them with "
            "bash_jobs; start one with bash and run_in_background: true.",
            error="unknown_job",
            job_id=job_id,
        )
    return job


def _run(call: Call) -> ToolResult:
    job = find_job(call)
    wait = call.args.get("wait") or 0
    if wait < 0:
        raise ToolError("wait must be 0 or more seconds.", error="bad_arguments")
    deadline = time.monotonic() + min(float(wait), MAX_WAIT)
    while (
        job.stdout.total == job.stdout.cursor
        and job.stderr.total == job.stderr.cursor
        and not job.done.is_set()
        and time.monotonic() < deadline
    ):
        job.done.wait(POLL)
    # One moment for the whole answer: a job that ends while its output is read is answered as
    # running (its last output may not be in yet), and the next read gets the rest and the end.
    done = job.done.is_set()
    parts = [job.describe(finished=done)]
    facts: dict[str, object] = {}
    for label, stream in (("stdout", job.stdout), ("stderr", job.stderr)):
        head, tail, total = stream.take_new()
        text, stream_facts = stream_section(
            label, head, tail, total, jail=call.ws.jail, tool="bash_output", cap=OUTPUT_CAP
        )
        facts.update({f"new_{k}": v for k, v in stream_facts.items()})
        parts.append(text.replace(f"{label}:", f"{label} (new):", 1) if total else
                     f"{label}: (nothing new)")
    changed = job.changes if done else jobs.changes_so_far(job)
    if changed is not None and not job.changes_shown:  # the files it changed: shown once
        job.changes_shown = done
        parts.extend(changed.text.split("\n")[1:])
        facts.update({k: changed.details[k] for k in ("files", "detection", "change_error")
                      if k in changed.details})
    status = job.facts()
    if not done:
        status.update(status="running", exit_code=None, signal=None)
    return ToolResult.success("\n".join(parts), **status, **facts)


TOOL = Tool(
    name="bash_output",
    profile="kli",
    gate=GATE_EXEC,
    description=DESCRIPTION,
    parameters=PARAMETERS,
    run=_run,
    main_arg="job_id",
    touches_image=False,
)
