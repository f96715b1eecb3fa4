"""bash — run a shell command in a child process (kli profile, gate process/exec).

Rules (spec/kli-tools.txt, issue 3), each with its constant:

- ``SHELL -c COMMAND``, default shell ``DEFAULT_SHELL``; stdout and stderr captured separately
  and shown labelled.
- ``directory`` defaults to the workspace root; a relative directory is resolved against the
  root; an absolute one is used as given (the spec allows any working directory, and the
  command itself could ``cd`` anywhere, so jailing it would protect nothing).
- ``input`` is fed to stdin (empty by default: the command sees end of file at once).
- ``timeout`` defaults to ``DEFAULT_TIMEOUT`` and is clamped to ``MAX_TIMEOUT`` (the result
  says so); zero or negative is an error. Past it the whole process group is killed and the
  result is an error naming the timeout.
- Each stream is capped at ``OUTPUT_CAP`` characters while the command runs: the first
  ``OUTPUT_CAP - CAPTURE_TAIL`` and last ``CAPTURE_TAIL`` are kept, the rest counted and dropped.
  The model sees head and tail (``present.MODEL_STREAM_CHARS``); the capture goes to
  ``.kli/scratch/`` and is named in the result.
- Exit code in ``details["exit_code"]``; non-zero is an error result that still shows output.
- Interactive programs are refused before anything runs (``interactive.refusal``).
- Something the command started in the background that still holds its output pipes is
  killed shortly after the command ends (see ``runner``); redirect a background job's output
  (``nohup server > out.log 2>&1 &``) to keep it running.
- ``run_in_background: true`` starts the command as a background job of the session and
  returns its job id at once (``jobs``); ``bash_output`` reads what is new, ``bash_jobs`` lists
  the jobs, ``bash_kill`` stops one. A background job has no timeout unless one is given
  (then clamped to ``jobs.MAX_JOB_TIMEOUT``).
"""

from __future__ import annotations

import errno
import os
import signal

from kli.tools.core import approval, sandbox
from kli.tools.core.programs import trusted_path, trusted_which
from kli.tools.core.registry import GATE_EXEC, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.process import jobs
from kli.tools.process.interactive import refusal
from kli.tools.process.present import stream_section
from kli.tools.process.runner import run_command

DEFAULT_TIMEOUT = 30
MAX_TIMEOUT = 300
OUTPUT_CAP = 1_048_576  # characters per stream (1 MiB)
CAPTURE_TAIL = 65_536  # of OUTPUT_CAP, kept from the end of a stream that overflows
DEFAULT_SHELL = "sh"

DESCRIPTION = f"""\
Run a shell command with `{DEFAULT_SHELL} -c` in a child process and return its exit code, \
stdout and stderr (labelled). Parameters: command; directory (default the workspace root, \
relative paths resolve against it); input (text fed to stdin, default empty); shell (default \
{DEFAULT_SHELL}); timeout in seconds (default {DEFAULT_TIMEOUT}, at most {MAX_TIMEOUT}).
A non-zero exit is an error result that still shows the output. Past the timeout the command \
and everything it started are killed: retry with a larger timeout, or start long jobs with \
`nohup CMD > out.log 2>&1 &` and read out.log. Each stream keeps at most 1 MiB; long output is \
shown head and tail, with the full capture saved under .kli/scratch/ (its path is in the \
result) — read it with the read or search tools, or pipe through head/tail/grep. Interactive \
programs (vi, vim, nvim, nano, emacs, less, more, man, top, htop, watch, ssh, mosh, tmux, \
screen) are refused: there is no terminal; use non-interactive commands.
With run_in_background: true the command starts as a background job of this session and the \
call returns its job id at once; read its new output with bash_output, list jobs with \
bash_jobs, stop one with bash_kill. A background job has no timeout unless you give one; its \
output keeps the same 1 MiB caps; it is killed with its process group when the session ends."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "The shell command to run."},
        "directory": {
            "type": "string",
            "description": "Working directory; default the workspace root. Relative paths "
            "resolve against the root.",
        },
        "input": {"type": "string", "description": "Text fed to stdin; default empty."},
        "shell": {
            "type": "string",
            "description": f"Shell binary invoked with -c; default {DEFAULT_SHELL}.",
        },
        "timeout": {
            "type": "integer",
            "description": f"Seconds; default {DEFAULT_TIMEOUT}, clamped to {MAX_TIMEOUT}. "
            "For a background job: no limit unless given.",
        },
        "run_in_background": {
            "type": "boolean",
            "description": "Start as a background job and return its job id at once; "
            "default false.",
        },
    },
    "required": ["command"],
    "additionalProperties": False,
}


def clamp_timeout(value: float | None) -> tuple[float, str | None]:
    """The timeout to use and a note when it was clamped; raises for a non-positive one.

    Shared with ``eval``, which has the same time budget.
    """
    if value is None:
        return float(DEFAULT_TIMEOUT), None
    if value <= 0:
        raise ToolError(
            f"timeout must be a positive number of seconds (got {value}); omit it for the "
            f"default of {DEFAULT_TIMEOUT} or give up to {MAX_TIMEOUT}.",
            error="bad_arguments",
        )
    if value > MAX_TIMEOUT:
        return float(MAX_TIMEOUT), f"timeout {value} s was clamped to the maximum {MAX_TIMEOUT} s"
    return float(value), None


def _directory(call: Call) -> str:
    given = call.args.get("directory")
    if given is None or given == "":
        return call.ws.root
    path = given if os.path.isabs(given) else os.path.join(call.ws.root, given)
    path = os.path.normpath(path)
    if not os.path.isdir(path):
        what = "does not exist" if not os.path.exists(path) else "is not a directory"
        raise ToolError(
            f"directory {given!r} {what}; give an existing directory (relative paths resolve "
            f"against the workspace root {call.ws.root}). Nothing was run.",
            error="bad_directory",
            directory=path,
        )
    return path


_found_shells: dict[tuple[str, str], str] = {}


def _which(shell: str, root: str) -> str:
    """The shell's executable, found on a PATH without the workspace's folders
    (``programs.trusted_which``); ``FileNotFoundError`` when there is none. Found ones are
    cached (Popen would search PATH on every call); a miss is not, so a shell installed later
    is found."""
    path = trusted_path(root)
    found = _found_shells.get((shell, path))
    if found is None:
        found = trusted_which(shell, root, path=path)
        if found is None:
            raise FileNotFoundError(errno.ENOENT, "not found on a PATH outside the workspace")
        _found_shells[(shell, path)] = found
    return found


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _run(call: Call) -> ToolResult:
    command: str = call.args["command"]
    shell: str = call.args.get("shell") or DEFAULT_SHELL
    timeout, clamp_note = clamp_timeout(call.args.get("timeout"))
    refused = refusal(command)
    if refused is not None:
        raise ToolError(refused, error="interactive")
    cwd = _directory(call)
    if call.args.get("run_in_background"):
        return _start_background(call, command, shell, cwd)
    try:
        argv, executable = sandbox.command(call.ws, [shell, "-c", command],
                                           _which(shell, call.ws.root))
        outcome = run_command(
            argv,
            executable=executable,
            cwd=cwd,
            input_text=call.args.get("input") or "",
            timeout=timeout,
            cap=OUTPUT_CAP,
            tail=CAPTURE_TAIL,
        )
    except KeyboardInterrupt:
        raise ToolError(
            "interrupted: the command was stopped by an interrupt (the kernel's stop button) "
            "and killed with its process group.",
            error="interrupted",
        ) from None
    except FileNotFoundError as exc:
        raise ToolError(
            f"shell {shell!r} was not found ({exc.strerror}); use sh (the default), bash or "
            "another installed shell. Nothing was run.",
            error="bad_shell",
        ) from None
    except PermissionError as exc:
        raise ToolError(
            f"cannot start {shell!r} in {cwd}: {exc.strerror}. Nothing was run.",
            error="cannot_start",
        ) from None

    out_text, out_facts = stream_section(
        "stdout",
        outcome.stdout,
        outcome.stdout_tail,
        outcome.stdout_total,
        jail=call.ws.jail,
        tool="bash",
        cap=OUTPUT_CAP,
    )
    err_text, err_facts = stream_section(
        "stderr",
        outcome.stderr,
        outcome.stderr_tail,
        outcome.stderr_total,
        jail=call.ws.jail,
        tool="bash",
        cap=OUTPUT_CAP,
    )
    if outcome.cancelled:
        status = (
            f"cancelled after {_seconds(outcome.duration)}: the request was cancelled (its "
            "client cancelled it or went away), so the command was killed with everything it "
            "started. Run it again if it is still wanted."
        )
    elif outcome.timed_out:
        status = (
            f"timed out after {_seconds(timeout)}: the command was killed with its whole "
            f"process group. Retry with a larger timeout (at most {MAX_TIMEOUT} s), or run it "
            "in the background with nohup CMD > out.log 2>&1 & and read out.log."
        )
    elif outcome.signal is not None:
        try:
            name = signal.Signals(outcome.signal).name
        except ValueError:
            name = ""
        status = (
            f"killed by signal {outcome.signal} {name}".rstrip()
            + f" (exit code {outcome.exit_code})"
        )
    else:
        status = f"exit code {outcome.exit_code}"
    notes = []
    boxed = argv[0] != shell or sandbox.inside() is not None  # its own box, or the kernel's
    if boxed and outcome.exit_code != 0:
        notes.append(sandbox.BOXED_NOTE)
    if clamp_note:
        notes.append(clamp_note)
    kill_note = outcome.kill_note()
    if kill_note is not None:
        if outcome.orphans_killed:
            kill_note += (
                "; redirect a background job's output (> out.log 2>&1) to keep it running, "
                "or use run_in_background"
            )
        notes.append(kill_note)
    text = "\n".join([status, out_text, err_text, *(f"[{n}]" for n in notes)])
    details: dict[str, object] = {
        "exit_code": outcome.exit_code,
        "timed_out": outcome.timed_out,
        "cancelled": outcome.cancelled,
        "timeout": timeout,
        "signal": outcome.signal,
        "duration": round(outcome.duration, 6),
        "directory": cwd,
        "shell": shell,
        "orphans_killed": outcome.orphans_killed,
        "boxed": boxed,
        "escaped_killed": outcome.escaped,
        "survivors": list(outcome.survivors),
        **out_facts,
        **err_facts,
    }
    if outcome.cancelled:
        return ToolResult.error(text, error="cancelled", **details)
    if outcome.timed_out:
        return ToolResult.error(text, error="timeout", **details)
    if outcome.exit_code != 0:
        return ToolResult.error(text, error="exit", **details)
    return ToolResult.success(text, **details)


def _start_background(call: Call, command: str, shell: str, cwd: str) -> ToolResult:
    given = call.args.get("timeout")
    timeout: float | None = None
    note = ""
    if given is not None:
        if given <= 0:
            raise ToolError(
                f"timeout must be a positive number of seconds (got {given}); omit it to let "
                "the background job run until it exits or is killed. Nothing was run.",
                error="bad_arguments",
            )
        timeout = float(min(given, jobs.MAX_JOB_TIMEOUT))
        if given > jobs.MAX_JOB_TIMEOUT:
            note = f" [timeout {given} s was clamped to the maximum {jobs.MAX_JOB_TIMEOUT} s]"
    try:
        argv, executable = sandbox.command(call.ws, [shell, "-c", command],
                                           _which(shell, call.ws.root))
        job = jobs.start_job(
            call.session,
            argv,
            command=command,
            executable=executable,
            cwd=cwd,
            input_text=call.args.get("input") or "",
            timeout=timeout,
            cap=OUTPUT_CAP,
            tail=CAPTURE_TAIL,
        )
    except RuntimeError as exc:
        raise ToolError(str(exc), error="too_many_jobs") from None
    except FileNotFoundError as exc:
        raise ToolError(
            f"shell {shell!r} was not found ({exc.strerror}); use sh (the default), bash or "
            "another installed shell. Nothing was run.",
            error="bad_shell",
        ) from None
    except PermissionError as exc:
        raise ToolError(
            f"cannot start {shell!r} in {cwd}: {exc.strerror}. Nothing was run.",
            error="cannot_start",
        ) from None
    limit = f"; it is killed after {timeout:g} s" if timeout else ""
    return ToolResult.success(
        f"started background job {job.id} (pid {job.proc.pid}){limit}. Read its new output "
        f"with bash_output {{\"job_id\": \"{job.id}\"}}; stop it with bash_kill; list jobs with "
        f"bash_jobs.{note}",
        directory=cwd,
        shell=shell,
        timeout=timeout,
        background=True,
        **job.facts(),
    )


TOOL = Tool(
    name="bash",
    profile="kli",
    gate=GATE_EXEC,
    description=DESCRIPTION,
    parameters=PARAMETERS,
    run=_run,
    main_arg="command",
    mutates=True,
    touches_image=False,
    action=approval.SHELL,
    detects_changes=True,
)
