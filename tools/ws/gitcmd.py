"""Running real git for the slmcode tools (git_status, git_diff, ws_mv): no pager, no colour,
no prompts, a bounded time, the workspace root as the working directory."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass

GIT_TIMEOUT = 30.0
_ENV_OVERRIDES = {
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",  # read-only commands must not take the index lock
    "LC_ALL": "C",
}


@dataclass(frozen=True)
class GitOutput:
    code: int
    stdout: str
    stderr: str


def git_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(_ENV_OVERRIDES)
    return env


def run_git(root: str, args: list[str], *, timeout: float = GIT_TIMEOUT) -> GitOutput:
    """``git -C root <args>``; code 127 when git is not installed, 124 on timeout."""
    exe = shutil.which("git")
    if exe is None:
        return GitOutput(127, "", "git is not installed")
    try:
        proc = subprocess.run(
            [exe, "-c", "core.quotepath=off", "-c", "color.ui=false", *args],
            cwd=root,
            env=git_env(),
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return GitOutput(124, "", f"git {' '.join(args)} timed out after {timeout:g}s")
    return GitOutput(
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def in_work_tree(root: str) -> bool:
    out = run_git(root, ["rev-parse", "--is-inside-work-tree"])
    return out.code == 0 and out.stdout.strip() == "true"


def is_tracked(root: str, rel: str) -> bool:
    """True when ``rel`` (a file, or a folder holding tracked files) is tracked by git."""
    out = run_git(root, ["ls-files", "--error-unmatch", "--", rel])
    return out.code == 0


def not_a_repo_message(tool: str, root: str) -> str:
    return (
        f"{tool}: not a git repository — {root} is not inside a git work tree, so there is no "
        "git status or diff to show. Look at files with ws_list / ws_glob / ws_read instead."
    )
