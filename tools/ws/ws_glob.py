"""ws_glob — find files by glob pattern; ``**`` spans any number of folders. At most
``GLOB_MAX_HITS`` (200) paths are returned and the cap is announced.

The walk is ``kli.tools.file.walk`` (jailed, bounded, skips VCS folders). Matches inside
dependency and cache folders (``SKIPPED_DIRS``: node_modules, .venv, __pycache__, …) are left
out unless the pattern or ``path`` names such a folder, and the result says how many were left
out — otherwise one virtualenv would fill the 200 hits.
"""

from __future__ import annotations

import functools
import os
import re

from kli.tools.core.registry import GATE_READ, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.file.walk import walk
from kli.tools.ws.common import compact_json

GLOB_MAX_HITS = 200
SKIPPED_DIRS = frozenset(
    {
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".kli",
    }
)

DESCRIPTION = """Find files whose path matches a glob pattern, relative to the project root.
`*` matches within one folder name, `**` any number of folders, `?` one character, `{a,b}`
alternatives: "**/*_test.go", "src/**/*.py", "*.md" (top level only). Optional path= limits
the search to one folder. Returns at most 200 paths, sorted; the cap is announced. Skips
.git and dependency/cache folders (node_modules, .venv, __pycache__, …) unless your pattern or
path names them. To search file contents use ws_grep."""


def drop_skipped(rels: list[str], named: str) -> list[str]:
    """``rels`` without those lying in a SKIPPED_DIRS folder that ``named`` (the pattern)
    does not mention: one compiled search per path, the regex looked up once (ws_grep and
    ws_glob filter every file of a walk)."""
    skipped = _skipped_folder(named)
    if skipped is None:
        return rels
    search = skipped.search
    return [rel for rel in rels if search(rel) is None]


@functools.lru_cache(maxsize=64)
def _skipped_folder(named: str) -> re.Pattern[str] | None:
    """A regex finding a folder segment (``NAME/`` at the start or after ``/``) that is one of
    the SKIPPED_DIRS ``named`` does not mention: one C-speed search per path, where a split
    and a Python loop per path showed in ws_grep's profile over a large tree."""
    names = sorted(s for s in SKIPPED_DIRS if s not in named)
    if not names:
        return None
    return re.compile("(?:^|/)(?:" + "|".join(re.escape(n) for n in names) + ")/")


def join_pattern(base: str | None, pattern: str) -> str:
    base = (base or "").strip().strip("/")
    if base in ("", "."):
        return pattern
    return f"{base}/{pattern.lstrip('/')}"


def _run(call: Call) -> ToolResult:
    pattern = call.args["pattern"]
    base = call.args.get("path")
    if base:
        folder = call.ws.jail.resolve(base)  # jail the base folder with the usual messages
        if not os.path.isdir(folder.real):
            raise ToolError(
                f"ws_glob: path {folder.rel} is not a folder. Give a folder to search in (see "
                f"ws_list {compact_json({'path': '.'})}), or leave path out to search the project.",
                error="not_found",
            )
    full = join_pattern(base, pattern)
    result = walk(call.ws.jail, full)
    paths = drop_skipped(result.paths, full)
    left_out = len(result.paths) - len(paths)
    notes: list[str] = []
    if left_out:
        notes.append(
            f"[left out {left_out} match(es) inside dependency/cache folders (node_modules, "
            ".venv, __pycache__, .kli, …); name the folder in the pattern to include them]"
        )
    if result.stopped:
        notes.append(f"[{result.stop_note()}]")
    if not paths:
        text = f"(no files match {full})"
        if "/" not in pattern and "**" not in pattern:
            text += (
                f" — a pattern without / matches only the top level of "
                f"{base or 'the project root'}; to search every folder use ws_glob "
                f"{compact_json({'pattern': '**/' + pattern, **({'path': base} if base else {})})}"
            )
        return ToolResult.success("\n".join([text, *notes]), count=0, paths=[])
    shown = paths[:GLOB_MAX_HITS]
    lines = list(shown)
    if len(paths) > GLOB_MAX_HITS:
        lines.append(
            f"[{GLOB_MAX_HITS}-hit cap reached: showing the first {GLOB_MAX_HITS} of {len(paths)} matches; "
            "narrow the pattern or pass path= to see the rest]"
        )
    else:
        lines.insert(0, f"{len(paths)} file(s) match {full}:")
    return ToolResult.success(
        "\n".join(lines + notes),
        count=len(paths),
        paths=shown,
        capped=len(paths) > GLOB_MAX_HITS,
    )


TOOL = Tool(
    name="ws_glob",
    profile="slmcode",
    gate=GATE_READ,
    description=DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": 'Glob, e.g. "**/*.py".'},
            "path": {"type": "string", "description": "Folder to search in (default: root)."},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
    run=_run,
    main_arg="pattern",
    aliases={"glob": "pattern", "dir": "path", "directory": "path"},
    touches_image=False,
)
