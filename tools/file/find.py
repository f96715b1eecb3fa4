"""``find``: file paths matching a glob, no content.

Spec (kli-tools.txt, find): ``*`` within one segment, a bare ``**`` any depth including zero;
symlinks to files match, symlinked directories are not descended; at most ``MAX_PATHS`` paths,
sorted, overflow counted; the walk stops at ``walk.MAX_ENTRIES`` entries or
``walk.MAX_SECONDS`` seconds and says so. The walk itself is ``kli.tools.file.walk``.
"""

from __future__ import annotations

import fnmatch
import os

from kli.tools.core.registry import GATE_READ, Call, Tool
from kli.tools.core.result import ToolResult
from kli.tools.file import walk as walk_mod
from kli.tools.notebook import address

MAX_PATHS = 1000  # spec: at most 1000 paths are reported


def _cells(call: Call, paths: list[str], cell_glob: str) -> tuple[list[str], int]:
    """``nb.ipynb#CELL_ID`` of each cell of ``paths`` whose id matches ``cell_glob`` (an
    ``fnmatch`` pattern), and how many notebooks could not be read as notebooks."""
    out: list[str] = []
    skipped = 0
    for rel in paths:
        try:
            nb = call.ws.notebooks.load(call.ws.jail.resolve(rel).real)
        except (OSError, ValueError):  # not a notebook, unreadable, too large
            skipped += 1
            continue
        out += [f"{rel}#{cid}" for cid in nb.ids() if fnmatch.fnmatchcase(cid, cell_glob)]
        if len(out) > MAX_PATHS:
            break
    return out, skipped


def _run(call: Call) -> ToolResult:
    pattern: str = call.args["pattern"]
    nb_pattern, cell_glob = address.split(pattern)
    result = walk_mod.walk(call.ws.jail, nb_pattern)
    paths, skipped = (
        _cells(call, result.paths, cell_glob) if cell_glob is not None else (result.paths, 0)
    )
    shown = paths[:MAX_PATHS]
    overflow = len(paths) - len(shown)
    lines = list(shown)
    if not shown:
        lines.append(f"No files match {pattern!r}.")
        folder = os.path.join(call.ws.root, pattern)
        if not os.path.isabs(pattern) and os.path.isdir(folder):
            base = pattern.rstrip("/")
            lines.append(
                f"{base} is a folder: find lists files, so use pattern='{base}/*' for its "
                f"files or '{base}/**' for every depth."
            )
        elif "/" not in pattern and "*" not in pattern:
            lines.append(
                f"A bare name matches only at the root; try pattern='**/{pattern}' to match "
                "it at any depth."
            )
    if overflow:
        lines.append(
            f"[{overflow} more matching path(s) not shown; at most {MAX_PATHS} are listed. "
            "Narrow the pattern to see them.]"
        )
    if skipped:
        lines.append(f"[{skipped} matching file(s) are not notebooks the tools can read; skipped.]")
    note = result.stop_note()
    if note:
        lines.append(f"[{note}]")
    return ToolResult.success(
        "\n".join(lines),
        pattern=pattern,
        count=len(paths),
        shown=len(shown),
        overflow=overflow,
        visited=result.visited,
        stopped=result.stopped,
    )


TOOL = Tool(
    name="find",
    profile="kli",
    gate=GATE_READ,
    description=(
        "List file paths (relative to the workspace root) matching a glob pattern; returns "
        "paths only, no file content. '*' spans a run of characters within one path segment "
        "and also matches names starting with '.'; a bare '**' segment spans any depth, "
        "including zero (src/**/*.py matches src/a.py and src/x/y/b.py); '?' is one character, "
        "[abc] a class, {a,b} alternatives. Only files are listed; symlinks to files match, "
        "symlinked directories are not descended, and version-control folders (.git, .hg, "
        ".svn, .bzr, _darcs) are skipped unless the pattern starts with one. At most "
        f"{MAX_PATHS} paths are reported, sorted, with the overflow counted. The walk stops "
        f"with a partial result after visiting {walk_mod.MAX_ENTRIES} entries or running "
        f"{walk_mod.MAX_SECONDS:g} seconds, and says so: then narrow the pattern with a "
        "directory prefix. Patterns may not leave the workspace root ('..'). A pattern "
        "ending in '.ipynb#GLOB' lists notebook cells as nb.ipynb#CELL_ID (e.g. "
        "'**/*.ipynb#*' every cell of every notebook), the addresses read and edit take."
    ),
    parameters={
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Glob pattern relative to the workspace root, e.g. src/**/*.py.",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
    run=_run,
    main_arg="pattern",
    aliases={"glob": "pattern"},
    touches_image=False,
)
