"""THE registry: every tool of both profiles, listed once.

Adding a tool means adding one module (which defines ``TOOL``) and one entry below. Every face —
Python API, CLI, magics, comm, JSON schemas, MCP — reads this registry; none keeps its own list.
``kli.tools`` hands it to core (``kli.tools.core.registry.provide``) with what every workspace
gets from this layer: the on-disk notebook store and the hooks run after a call.
"""

from __future__ import annotations

from kli.tools.core.registry import ALL, Profile, Registry, Tool
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
from kli.tools.image.stale import after_call as stale_after_call
from kli.tools.notebook.disk import DiskNotebooks
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


REGISTRY = Registry.build(_TOOLS, _PROFILES, notebooks=DiskNotebooks,
                          after_call=(stale_after_call,))

# The profile names, derived from the registry (every face that takes a profile uses these):
PROFILES: tuple[str, ...] = tuple(REGISTRY.profiles)
PROFILE_CHOICES: tuple[str, ...] = (*PROFILES, ALL)

unknown_profile = REGISTRY.unknown_profile  # what every face says of an unknown profile name
profile_tools = REGISTRY.select  # the tools of a profile (``all``: every tool)
