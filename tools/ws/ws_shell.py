"""ws_shell — run one shell command, bounded in time and output.

- The command is checked by ``shell_policy.check`` first (one command, no substitution, no
  backgrounding, the write-redirection guard, the safety tiers against ``shell_policy``).
- It runs under ``bash -c`` (``sh -c`` without bash) in the project root (or ``path``), with
  stdin at end-of-file, through ``kli.tools.process.runner.run_command``: its own process
  group, killed whole on timeout; each stream captured into a bounded head+tail buffer while
  it runs (``SHELL_CAPTURE_CHARS``), so a runaway command cannot exhaust memory.
- Timeout: ``shell_timeout`` (120 s) by default; a per-call ``timeout`` is capped by
  ``shell_timeout_max`` (600 s), the harness's cap.
- Output over ``max_tool_chars`` is saved whole (as captured) under ``.kli/scratch/shell/``
  and the profile's cap names that file.
- Empty output is reported explicitly: ``(command succeeded with no output: …)``.
"""

from __future__ import annotations

import os

from kli.tools.core import approval, sandbox, scratch
from kli.tools.core.programs import trusted_which
from kli.tools.core.registry import GATE_EXEC, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.truncate import captured
from kli.tools.process.runner import run_command
from kli.tools.ws import shell_policy
from kli.tools.ws.common import call_setting

SHELL_CAPTURE_CHARS = 256 * 1024  # per stream, kept while the command runs
SHELL_CAPTURE_TAIL = 64 * 1024  # of which the end of a long stream
SCRATCH_SUBDIR = "shell"
SCRATCH_KEEP = 20  # saved outputs kept (scratch.keep_newest)
_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb", "NO_COLOR": "1",
        "GIT_TERMINAL_PROMPT": "0", "PYTHONUNBUFFERED": "1"}

DESCRIPTION = """Run ONE shell command in the project root and get its output and exit code.
Parameters: command (one command line; && and pipes are fine), timeout (seconds, default 120,
capped by the harness), path (folder to run in, default the root).
Not allowed: several commands (newline or ;), command substitution $(…) or backticks,
backgrounding with &, and writing files with > / >> / tee (use ws_write / ws_edit; redirecting
to /dev/null or .kli/scratch/ is fine). Read-only commands (ls, cat, grep, find, git status/diff/
log, …) always run; build/test commands (pytest, make, npm test, go test, cargo test,
python -m …) run by default; other commands only if the shell_policy setting allows. stdin is
empty (interactive programs get end-of-file). A pipeline's exit code is its last command's, as
in bash (`pytest | tail` reports tail's). Long output keeps its head and tail."""


def _policy(call: Call) -> str:
    policy = call_setting(call, "shell_policy")
    if policy not in shell_policy.POLICIES:
        raise ToolError(
            f"setting 'shell_policy' must be one of {', '.join(shell_policy.POLICIES)}, got "
            f"{policy!r}; fix .kli/settings.json.",
            error="bad_settings",
        )
    return str(policy)


def _save_full(call: Call, text: str) -> str | None:
    """Save ``text`` under .kli/scratch/shell/; returns its root-relative path."""
    try:
        return scratch.save(
            call.ws.jail, text, prefix="ws_shell", suffix="log", keep=SCRATCH_KEEP,
            folder=SCRATCH_SUBDIR,
        )
    except OSError:
        return None


def _run(call: Call) -> ToolResult:
    command = call.args["command"]
    cwd_arg = call.args.get("path")
    cwd = call.ws.jail.resolve(cwd_arg).real if cwd_arg else call.ws.root
    if not os.path.isdir(cwd):
        raise ToolError(
            f"ws_shell: path {cwd_arg} is not a folder; give a folder to run in, or leave path out "
            "to run in the project root.",
            error="bad_arguments",
        )
    verdict = shell_policy.check(command, _policy(call), call.ws.root, cwd)
    if not verdict.allowed:
        call.session.telemetry["ws_shell.refused." + verdict.rule] += 1
        return ToolResult.error(verdict.message, error="refused", rule=verdict.rule, tier=verdict.tier)
    default = call_setting(call, "shell_timeout")
    cap = call_setting(call, "shell_timeout_max")
    asked = call.args.get("timeout")
    timeout = float(asked) if asked else float(default)
    notes: list[str] = []
    if timeout > cap:
        notes.append(f"[timeout {timeout:g}s capped at {cap}s by the harness (shell_timeout_max)]")
        timeout = float(cap)
    if ".kli/scratch" in command:
        call.ws.jail.scratch_dir()  # so `> .kli/scratch/out.txt` finds its folder
    root = call.ws.root
    shell = trusted_which("bash", root) or trusted_which("sh", root) or "/bin/sh"
    env = dict(os.environ)
    env.update(_ENV)
    try:
        argv, _exe = sandbox.command(call.ws, [shell, "-c", command])
        out = run_command(
            argv,
            cwd=cwd,
            timeout=timeout,
            cap=SHELL_CAPTURE_CHARS,
            tail=SHELL_CAPTURE_TAIL,
            env=env,
        )
    except OSError as exc:
        raise ToolError(f"ws_shell: could not start the shell ({exc.strerror}).") from None
    stdout = captured(out.stdout, out.stdout_tail, out.stdout_total)
    stderr = captured(out.stderr, out.stderr_tail, out.stderr_total)
    call.session.telemetry["ws_shell.run"] += 1
    details = {
        "exit_code": out.exit_code,
        "timed_out": out.timed_out,
        "cancelled": out.cancelled,
        "duration": round(out.duration, 3),
        "stdout_chars": out.stdout_total,
        "stderr_chars": out.stderr_total,
        "tier": verdict.tier,
    }
    if out.cancelled:
        body = "\n".join(p for p in (stdout.rstrip("\n"), stderr.rstrip("\n")) if p)
        text = (f"{body}\n" if body else "") + (
            f"[cancelled after {out.duration:.1f}s — the request was cancelled, so the command "
            "and everything it started were killed; run it again if it is still wanted]")
        return ToolResult.error("\n".join([*notes, text]), **details)
    if out.timed_out:
        body = "\n".join(p for p in (stdout.rstrip("\n"), stderr.rstrip("\n")) if p)
        text = (
            f"{body}\n" if body else ""
        ) + (
            f"[timed out after {timeout:g}s — the whole process group was killed. If the command "
            f"needs longer pass \"timeout\": N (at most {cap}), or run a narrower command "
            "(e.g. one test file)]"
        )
        return ToolResult.error("\n".join([*notes, text]), **details)
    if not stdout and not stderr:
        if out.exit_code == 0:
            text = f"(command succeeded with no output: {command})"
        else:
            text = f"(command failed with exit code {out.exit_code} and no output: {command})"
        text = "\n".join([*notes, text])
        return ToolResult(out.exit_code == 0, text, details)
    parts = [*notes]
    if stdout:
        parts.append(stdout.rstrip("\n"))
    if stderr:
        parts.append("[stderr]\n" + stderr.rstrip("\n"))
    status = f"[exit code {out.exit_code} · {out.duration:.2f}s]"
    kill_note = out.kill_note()
    if kill_note is not None:
        status += f" [{kill_note}]"
    parts.append(status)
    text = "\n".join(parts)
    if len(text) > call_setting(call, "max_tool_chars"):
        saved = _save_full(call, text)
        if saved:
            details["full_output"] = saved
    return ToolResult(out.exit_code == 0, text, details)


TOOL = Tool(
    name="ws_shell",
    profile="slmcode",
    gate=GATE_EXEC,
    description=DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "One shell command line."},
            "timeout": {
                "type": "number",
                "minimum": 0.1,
                "description": "Seconds before the command is killed (default 120).",
            },
            "path": {"type": "string", "description": "Folder to run in (default: root)."},
        },
        "required": ["command"],
        "additionalProperties": False,
    },
    run=_run,
    main_arg="command",
    aliases={"cmd": "command", "script": "command", "cwd": "path", "dir": "path"},
    touches_image=False,
    action=approval.SHELL,
    detects_changes=True,
)
