"""Running real git for the tools (git_status, git_diff, ws_mv): no pager, no colour, no prompts,
a bounded time, the workspace root as the working directory — and no program that the
repository's configuration names.

A repository's configuration can make git run programs: ``core.fsmonitor`` (git status runs
it), ``core.hooksPath``, pagers, external diff and ``diff.<driver>.command``, textconv, the
``filter.<driver>`` clean/smudge/process commands (git status runs the clean filter on a file
whose timestamp is racy), credential helpers, ``core.sshCommand``, editors, gpg programs. A
cloned repository, or a file an agent wrote, would then run as the kernel's user under a gate
(``file/read``) that covers no program. So every git this module starts:

- is found on a ``PATH`` without the workspace's folders (``programs.trusted_which``), and
  gets that ``PATH`` itself;
- gets an environment without the inherited ``GIT_*`` variables (``GIT_EXTERNAL_DIFF``,
  ``GIT_SSH_COMMAND``, ``GIT_ASKPASS``, ``GIT_EDITOR``, ``GIT_CONFIG_PARAMETERS``, …);
- gets, as command-line configuration (``GIT_CONFIG_COUNT``/``KEY_n``/``VALUE_n``, which take
  keys verbatim, whatever their subsection holds), every program switched off: the fixed keys
  of ``SWITCHED_OFF``, and each configured key whose variable names a program
  (``PROGRAM_VARIABLES``: ``filter.<driver>.clean``, ``diff.<driver>.textconv``, …) found by
  ``git config --list --includes`` first (which runs nothing); no transport at all
  (``protocol.allow=never``), so no ssh, credential helper or remote helper;
- with ``--no-pager`` and ``--literal-pathspecs`` (a path is a path, never ``:(top)`` magic).

The configuration is read a second time by the command itself; between the two reads only a
file outside the root or under a ``.git`` folder could change it, and tools write neither.
A configuration file that tools could change (one under the root that is not repository control
state: an ``include.path`` of the project, a ``~/.gitconfig`` when the root is the home folder)
is refused: ``GitRefused``, nothing runs.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from kli.tools.core.jail import is_git_name
from kli.tools.core.programs import trusted_path, trusted_which
from kli.tools.core.result import ToolError

GIT_TIMEOUT = 30.0
_ENV_OVERRIDES = {
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",  # read-only commands must not take the index lock
    "LC_ALL": "C",
}
# Inherited variables that name a program for git (besides every GIT_* one).
_DROPPED_ENV = ("SSH_ASKPASS", "EDITOR", "VISUAL")
_FLAGS = ["--no-pager", "--literal-pathspecs"]

# Configuration every git call gets, whatever the files say.
SWITCHED_OFF: dict[str, str] = {
    "core.quotepath": "off",
    "color.ui": "false",
    "core.fsmonitor": "false",
    "core.hookspath": os.devnull,
    "core.pager": "cat",
    "diff.external": "",
    "core.sshcommand": "",
    "core.askpass": "",
    "core.editor": ":",
    "sequence.editor": ":",
    "core.gitproxy": "",
    "core.alternaterefscommand": "",
    "credential.helper": "",  # an empty value clears the list of helpers
    "gpg.program": "",
    "log.showsignature": "false",  # verifying a signature runs gpg
    "protocol.allow": "never",
    # A root laid out as a bare repository (HEAD, objects/, refs/, config: files tools can
    # write) is no repository: only a .git folder or file is.
    "safe.barerepository": "explicit",
    "submodule.recurse": "false",
    "gc.auto": "0",
    "maintenance.auto": "false",
}
# A configured key whose last part is one of these names a program: it is set to "" (run
# nothing). ``filter.<driver>.required`` goes false with it, so a switched-off filter is no error.
PROGRAM_VARIABLES = frozenset({
    "clean", "smudge", "process",  # filter.<driver>
    "command", "textconv",  # diff.<driver>
    "driver",  # merge.<driver>
    "helper",  # credential.<url>
    "program",  # gpg.<format>
    "cmd",  # difftool/mergetool/browser.<tool>
    "sshcommand", "askpass", "editor", "fsmonitor", "hookspath", "external", "gitproxy",
    "uploadpack", "receivepack", "vcs", "proxycommand", "packobjectshook",
    "alternaterefscommand",
})


class GitRefused(ToolError):
    """Git was not started: its configuration comes from a file tools can change."""


@dataclass(frozen=True)
class GitOutput:
    code: int
    stdout: str
    stderr: str


def git_env(root: str | None = None) -> dict[str, str]:
    """The environment git runs with: the kernel's, without ``GIT_*`` and the variables that
    name programs, with ``_ENV_OVERRIDES`` and a ``PATH`` without the workspace's folders."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k not in _DROPPED_ENV
    }
    env.update(_ENV_OVERRIDES)
    env["PATH"] = trusted_path(root)
    return env


def _overrides(settings: dict[str, str]) -> dict[str, str]:
    """``GIT_CONFIG_COUNT`` / ``GIT_CONFIG_KEY_n`` / ``GIT_CONFIG_VALUE_n`` for ``settings``."""
    env = {"GIT_CONFIG_COUNT": str(len(settings))}
    for i, (key, value) in enumerate(settings.items()):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def switched_off(keys: list[str]) -> dict[str, str]:
    """``SWITCHED_OFF`` plus an override for each configured key in ``keys`` (as ``git config
    --list`` prints them: section and variable lower-case, subsection verbatim) that names a
    program."""
    settings = dict(SWITCHED_OFF)
    for key in keys:
        section, _, rest = key.partition(".")
        variable = rest.rpartition(".")[2]
        if section == "pager":
            settings[key] = "false"
        elif variable == "fsmonitor":
            settings[key] = "false"
        elif variable == "hookspath":
            settings[key] = os.devnull
        elif variable == "editor":
            settings[key] = ":"  # git's "no editor" (an empty one falls back to vi)
        elif variable in PROGRAM_VARIABLES:
            settings[key] = ""
            driver = rest.rpartition(".")[0]
            if section == "filter" and driver:
                settings[f"filter.{driver}.required"] = "false"
    return settings


def _configuration(exe: str, root: str, env: dict[str, str]) -> tuple[list[str], list[str]] | GitOutput:
    """The configured keys and the files they come from (``git config --list --includes``,
    which runs no program), or the failure."""
    try:
        proc = subprocess.run(
            [exe, *_FLAGS, "config", "--null", "--list", "--includes", "--show-origin"],
            cwd=root, env=env, capture_output=True, stdin=subprocess.DEVNULL, timeout=GIT_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return GitOutput(124, "", f"git config timed out after {GIT_TIMEOUT:g}s")
    if proc.returncode != 0:
        return GitOutput(proc.returncode, "", proc.stderr.decode("utf-8", "replace"))
    fields = proc.stdout.split(b"\0")
    keys: list[str] = []
    origins: list[str] = []
    for origin, entry in zip(fields[0::2], fields[1::2], strict=False):
        origins.append(os.fsdecode(origin))
        keys.append(os.fsdecode(entry.split(b"\n", 1)[0]))
    return keys, origins


def _writable_origin(root: str, origins: list[str]) -> str | None:
    """The first configuration file that lies under ``root`` outside any ``.git`` folder (a
    file tools can write), as a root-relative path; None when there is none."""
    real_root = os.path.realpath(root)
    for origin in dict.fromkeys(origins):
        kind, _, where = origin.partition(":")
        if kind != "file":
            continue
        real = os.path.realpath(os.path.join(root, where))
        if not real.startswith(real_root + os.sep):
            continue
        rel = os.path.relpath(real, real_root)
        if not any(is_git_name(part) for part in rel.split(os.sep)):
            return rel.replace(os.sep, "/")
    return None


@dataclass(frozen=True)
class GitCommand:
    """What ``run_git`` starts: the argument vector and the environment."""

    argv: list[str]
    env: dict[str, str]


def git_command(root: str, args: list[str]) -> GitCommand | GitOutput:
    """The command line and environment for ``git <args>`` in ``root`` with every program the
    configuration names switched off (the module's docstring), or the failure of reading the
    configuration (code 127: git is not installed). Raises ``GitRefused`` when the
    configuration comes from a file that tools can change."""
    exe = trusted_which("git", root)
    if exe is None:
        return GitOutput(127, "", "git is not installed")
    env = git_env(root)
    env.update(_overrides(SWITCHED_OFF))
    found = _configuration(exe, root, env)
    if isinstance(found, GitOutput):
        return found
    keys, origins = found
    writable = _writable_origin(root, origins)
    if writable is not None:
        raise GitRefused(
            f"git was not run: its configuration includes {writable}, a file in the workspace "
            "that file tools can change, and a setting there could make git run a program. "
            "Ask the person to move that configuration out of the workspace (or into .git/); "
            "until then look at files with ws_list / ws_glob / ws_read.",
            error="git_config_in_workspace",
            path=writable,
        )
    env.update(_overrides(switched_off(keys)))
    return GitCommand([exe, *_FLAGS, *args], env)


def run_git(root: str, args: list[str], *, timeout: float = GIT_TIMEOUT) -> GitOutput:
    """``git -C root <args>`` as ``git_command`` builds it; code 127 when git is not installed,
    124 on timeout. Raises ``GitRefused`` when the configuration comes from a file that tools
    can change."""
    command = git_command(root, args)
    if isinstance(command, GitOutput):
        return command
    try:
        proc = subprocess.run(
            command.argv,
            cwd=root,
            env=command.env,
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
    """True when ``root`` lies inside a git work tree (a ``core.worktree`` elsewhere: False)."""
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
