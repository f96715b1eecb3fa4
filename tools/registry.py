"""THE registry: every tool of both profiles, listed once.

Adding a tool means adding one module (which defines ``TOOL``) and one line below. Every face —
Python API, CLI, magics, comm, JSON schemas — reads this registry; none keeps its own list.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kli.tools.core.registry import Profile, Tool

# Each section below is owned by one area; add one import and one list entry per tool.
# -- kli profile: process tools (kli.tools.process) ------------------------------------------
from kli.tools.process.bash import TOOL as _BASH
from kli.tools.process.eval import TOOL as _EVAL

_PROCESS: list[Tool] = [_BASH, _EVAL]

# -- kli profile: the hashline file surface (kli.tools.file) --------------------------------
from kli.tools.file import find as _find  # noqa: E402
from kli.tools.file import read as _read  # noqa: E402
from kli.tools.file import search as _search  # noqa: E402
from kli.tools.file import write as _write  # noqa: E402

_FILE_READ: list[Tool] = [_read.TOOL, _find.TOOL, _search.TOOL, _write.TOOL]
from kli.tools.file import edit as _edit  # noqa: E402

_FILE_EDIT: list[Tool] = [_edit.TOOL]  # edit

# -- slmcode profile (kli.tools.ws) ---------------------------------------------------------
from kli.tools.ws import ws_edit as _ws_edit  # noqa: E402
from kli.tools.ws import ws_patch as _ws_patch  # noqa: E402

_WS_EDIT: list[Tool] = [_ws_edit.TOOL, _ws_patch.TOOL]  # ws_edit, ws_patch
from kli.tools.ws import git_diff as _git_diff  # noqa: E402
from kli.tools.ws import git_status as _git_status  # noqa: E402
from kli.tools.ws import ws_checkpoints as _ws_checkpoints  # noqa: E402
from kli.tools.ws import ws_delete as _ws_delete  # noqa: E402
from kli.tools.ws import ws_glob as _ws_glob  # noqa: E402
from kli.tools.ws import ws_grep as _ws_grep  # noqa: E402
from kli.tools.ws import ws_list as _ws_list  # noqa: E402
from kli.tools.ws import ws_mv as _ws_mv  # noqa: E402
from kli.tools.ws import ws_read as _ws_read  # noqa: E402
from kli.tools.ws import ws_shell as _ws_shell  # noqa: E402
from kli.tools.ws import ws_skill as _ws_skill  # noqa: E402
from kli.tools.ws import ws_todo as _ws_todo  # noqa: E402
from kli.tools.ws import ws_write as _ws_write  # noqa: E402
from kli.tools.ws.profile import SLMCODE_PROFILE as _WS_PROFILE  # noqa: E402

_WS_OTHER: list[Tool] = [
    _ws_read.TOOL, _ws_write.TOOL, _ws_mv.TOOL, _ws_delete.TOOL, _ws_checkpoints.TOOL,
    _ws_list.TOOL, _ws_glob.TOOL, _ws_grep.TOOL, _ws_shell.TOOL, _ws_todo.TOOL, _ws_skill.TOOL,
    _git_status.TOOL, _git_diff.TOOL,
]

_TOOLS: list[Tool] = [*_PROCESS, *_FILE_READ, *_FILE_EDIT, *_WS_EDIT, *_WS_OTHER]

_KLI_PROFILE = Profile("kli")
_SLMCODE_PROFILE = _WS_PROFILE  # kli.tools.ws.profile: result cap, loop guard
_PROFILES: list[Profile] = [_KLI_PROFILE, _SLMCODE_PROFILE]


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
