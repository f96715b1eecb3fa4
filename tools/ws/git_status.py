"""git_status — ``git status --porcelain=v1 -b``, read-only, through real git (``gitcmd``: no
program the repository's configuration names ever runs)."""

from __future__ import annotations

from kli.tools.core.registry import GATE_READ, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.ws.gitcmd import in_work_tree, not_a_repo_message, run_git

DESCRIPTION = """Show the git working-tree status (read-only): `git status --porcelain=v1 -b`.
The first line is `## branch...upstream`; then one line per changed file with two status
letters (index, work tree): `M ` staged change, ` M` unstaged change, `A ` added, ` D` deleted,
`R ` renamed, `??` untracked. Optional path= limits it to one file or folder. Use git_diff to
see the changes themselves."""

LEGEND = "(XY: X = staged, Y = unstaged; M modified, A added, D deleted, R renamed, ?? untracked)"


def _run(call: Call) -> ToolResult:
    root = call.ws.root
    if not in_work_tree(root):
        raise ToolError(not_a_repo_message("git_status", root), error="not_a_repo")
    # Only what lies under the root ("." from the root: a work tree above it, or a
    # core.worktree, shows nothing outside); submodules are not entered (their configuration
    # is another repository's).
    args = ["status", "--porcelain=v1", "-b", "--untracked-files=normal", "--ignore-submodules=all"]
    path = call.args.get("path")
    args += ["--", call.ws.jail.resolve(path).rel if path else "."]
    out = run_git(root, args)
    if out.code != 0:
        raise ToolError(f"git_status: git status failed: {out.stderr.strip()}", error="git_failed")
    lines = out.stdout.rstrip("\n").splitlines()
    if len(lines) <= 1:
        text = "\n".join([*lines, "(working tree clean — nothing to commit)"])
    else:
        text = "\n".join([*lines, LEGEND])
    return ToolResult.success(text, changed=max(0, len(lines) - 1))


TOOL = Tool(
    name="git_status",
    profile="slmcode",
    gate=GATE_READ,
    description=DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Limit to this file or folder."},
        },
        "additionalProperties": False,
    },
    run=_run,
    main_arg="path",
    touches_image=False,
)
