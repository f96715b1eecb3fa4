"""git_diff — ``git diff [--cached] [-- path]``, read-only, through real git (``gitcmd``: no
program the repository's configuration names ever runs; no external diff, no textconv)."""

from __future__ import annotations

from kli.tools.core.registry import GATE_READ, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.ws.gitcmd import in_work_tree, not_a_repo_message, run_git

DESCRIPTION = """Show uncommitted changes as a unified diff (read-only): `git diff`.
Parameters: path (limit to one file or folder), cached (true: show staged changes instead of
unstaged ones), stat (true: only a per-file summary). Untracked (new) files are not in a diff:
see git_status for them."""


# ``git diff`` refreshes the index's stat data of files whose content did not change and writes
# .git/index whenever it can take the lock, GIT_OPTIONAL_LOCKS=0 or not (git 2.39): a read
# tool must change nothing (issue 23). With autoRefreshIndex off it only compares (the same
# output: a file whose content is unchanged shows no diff either way).
READ_ONLY = ["-c", "diff.autoRefreshIndex=false"]


def _run(call: Call) -> ToolResult:
    root = call.ws.root
    if not in_work_tree(root):
        raise ToolError(not_a_repo_message("git_diff", root), error="not_a_repo")
    cached = call.args.get("cached") is True
    args = ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all"]
    if cached:
        args.append("--cached")
    if call.args.get("stat") is True:
        args.append("--stat")
    path = call.args.get("path")
    rel = call.ws.jail.resolve(path).rel if path else None
    args += ["--", rel or "."]  # only what lies under the root
    out = run_git(root, [*READ_ONLY, *args])
    if out.code != 0:
        raise ToolError(f"git_diff: git diff failed: {out.stderr.strip()}", error="git_failed")
    if out.stdout.strip():
        return ToolResult.success(out.stdout.rstrip("\n"), cached=cached, empty=False)
    what = "staged" if cached else "unstaged"
    where = f" in {rel}" if rel else ""
    other = (
        'pass "cached": false to see unstaged changes'
        if cached
        else 'pass "cached": true to see staged changes'
    )
    return ToolResult.success(
        f"(no {what} changes{where} — {other}; new untracked files show in git_status, not here)",
        cached=cached,
        empty=True,
    )


TOOL = Tool(
    name="git_diff",
    profile="slmcode",
    gate=GATE_READ,
    description=DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Limit to this file or folder."},
            "cached": {
                "type": "boolean",
                "description": "Show staged changes (git diff --cached).",
            },
            "stat": {"type": "boolean", "description": "Only the per-file summary (--stat)."},
        },
        "additionalProperties": False,
    },
    run=_run,
    main_arg="path",
    aliases={"staged": "cached"},
    touches_image=False,
)
