"""THE registry: every tool of both profiles, listed once.

Adding a tool means adding one module (which defines ``TOOL``) and one entry below. Every face —
Python API, CLI, magics, comm, JSON schemas, MCP — reads this registry; none keeps its own list.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kli.tools.core.registry import Profile, Tool
from kli.tools.file import cells, edit, find, read, search, write
from kli.tools.image import (
    image_summary,
    inspect_object,
    look,
    redefine,
    trace,
    trace_read,
    untrace,
)
from kli.tools.process import (
    bash,
    bash_jobs,
    bash_kill,
    bash_output,
    eval_abort,
    eval_continue,
    eval_frame,
    run_cells,
)
from kli.tools.process import eval as eval_
from kli.tools.review import await_decision, changes, redo, undo
from kli.tools.ws import (
    git_diff,
    git_status,
    ws_checkpoints,
    ws_delete,
    ws_edit,
    ws_glob,
    ws_grep,
    ws_list,
    ws_mv,
    ws_patch,
    ws_read,
    ws_shell,
    ws_skill,
    ws_todo,
    ws_write,
)
from kli.tools.ws.profile import SLMCODE_PROFILE

# -- kli profile: process tools, then the hashline file surface ------------------------------
_KLI: list[Tool] = [
    bash.TOOL, bash_output.TOOL, bash_kill.TOOL, bash_jobs.TOOL,
    eval_.TOOL, eval_frame.TOOL, eval_continue.TOOL, eval_abort.TOOL, redefine.TOOL,
    read.TOOL, find.TOOL, search.TOOL, write.TOOL, edit.TOOL, cells.TOOL, run_cells.TOOL,
    image_summary.TOOL, inspect_object.TOOL, look.TOOL, trace.TOOL, untrace.TOOL, trace_read.TOOL,
    await_decision.TOOL, changes.TOOL, undo.TOOL, redo.TOOL,
]

# -- slmcode profile ---------------------------------------------------------------------------
_SLMCODE: list[Tool] = [
    ws_edit.TOOL, ws_patch.TOOL,
    ws_read.TOOL, ws_write.TOOL, ws_mv.TOOL, ws_delete.TOOL, ws_checkpoints.TOOL,
    ws_list.TOOL, ws_glob.TOOL, ws_grep.TOOL, ws_shell.TOOL, ws_todo.TOOL, ws_skill.TOOL,
    git_status.TOOL, git_diff.TOOL,
]

_TOOLS: list[Tool] = [*_KLI, *_SLMCODE]

# Profiles: rules applied around each of their tools' calls (kli: none; slmcode: the result
# cap and the loop guard, kli.tools.ws.profile).
_PROFILES: list[Profile] = [
    Profile("kli", title="the kli tool contract (spec/kli-tools.txt)"),
    SLMCODE_PROFILE,
]


@dataclass
class Registry:
    tools: dict[str, Tool] = field(default_factory=dict)
    profiles: dict[str, Profile] = field(default_factory=dict)

    @classmethod
    def build(cls, tools: list[Tool], profiles: list[Profile]) -> Registry:
        reg = cls()
        for profile in profiles:
            reg.profiles[profile.name] = profile
        for tool in tools:
            if tool.name in reg.tools:
                raise ValueError(f"tool {tool.name!r} registered twice")
            if tool.profile not in reg.profiles:
                raise ValueError(f"tool {tool.name!r} names unknown profile {tool.profile!r}")
            reg.tools[tool.name] = tool
        return reg

    def names(self, profile: str | None = None) -> list[str]:
        return [n for n, t in self.tools.items() if profile is None or t.profile == profile]


REGISTRY = Registry.build(_TOOLS, _PROFILES)

# The profile names, derived from the registry (every face that takes a profile uses these):
PROFILES: tuple[str, ...] = tuple(REGISTRY.profiles)
ALL = "all"  # where a face takes a profile: the tools of every profile
PROFILE_CHOICES: tuple[str, ...] = (*PROFILES, ALL)


def unknown_profile(name: object) -> str:
    """What every face says of a profile name it does not know: the names it takes."""
    return (f"unknown profile {name!r}; the profiles are {', '.join(PROFILES)} "
            f"and {ALL} (every tool).")


def profile_tools(profile: str | None) -> list[Tool]:
    """The tools of ``profile`` in registry order; ``all`` (or None) is every tool. Raises
    ValueError (``unknown_profile``) for any other name."""
    if profile is None or profile == ALL:
        return list(REGISTRY.tools.values())
    if profile not in REGISTRY.profiles:
        raise ValueError(unknown_profile(profile))
    return [t for t in REGISTRY.tools.values() if t.profile == profile]
