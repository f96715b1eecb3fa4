"""Registry types: what a tool is, and what a call hands it.

The list of tools itself lives in ``kli.tools.registry``; this module only defines the shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kli.tools.core.result import ToolResult
    from kli.tools.core.session import Session
    from kli.tools.core.workspace import Workspace

# Capability gates (DESIGN.md, "Settings and the control directory").
GATE_EXEC = "process/exec"
GATE_EVAL = "image/eval"
GATE_INSPECT = "image/inspect"  # read-only looks at the live image, as kli has
GATE_READ = "file/read"
GATE_WRITE = "file/write"
GATE_EDIT = "file/edit"
GATES = (GATE_EXEC, GATE_EVAL, GATE_INSPECT, GATE_READ, GATE_WRITE, GATE_EDIT)


@dataclass
class Call:
    """One invocation of a tool: the workspace, the caller's session and validated arguments."""

    ws: Workspace
    session: Session
    tool: Tool
    args: dict[str, Any]
    source: str = "api"


@dataclass(frozen=True)
class Tool:
    """A registry entry.

    ``parameters`` is the JSON Schema (type object) of the arguments; validation and every face
    (CLI, magics, comm, function-calling specs) are derived from it. ``main_arg`` names the
    argument a ``%%kli TOOL`` cell body fills. ``aliases`` maps accepted alternative spellings
    to canonical argument names (the canonical key wins when both are given).

    ``touches_image`` says whether the call reads or changes the live image (the namespace a
    cell also uses, or objects in it). Such calls wait for a running cell; calls that do not
    (files, shell, background jobs) run while a cell runs (docs/concurrency.md). It defaults
    to True, so a new tool waits unless its entry says otherwise.

    ``action`` is the kind of action a call is for approval mode (``kli.tools.core.approval``:
    ``file``, ``shell``, ``eval``; None: never held). ``waits`` marks a tool that waits for a
    person (``await_decision``): it runs outside the session's lock.
    """

    name: str
    profile: str
    gate: str | None
    description: str
    parameters: dict[str, Any]
    run: Callable[[Call], ToolResult]
    main_arg: str | None = None
    aliases: dict[str, str] = field(default_factory=dict)
    mutates: bool = False
    touches_image: bool = True
    action: str | None = None
    waits: bool = False

    def spec(self) -> dict[str, Any]:
        """The function-calling spec: name, description, JSON-Schema parameters."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    @property
    def summary_args(self) -> tuple[str, ...]:
        """The arguments that best say what a call is about, preferred in this order by a
        one-line summary (the UI's activity rows): ``path`` when the tool takes one, then
        ``main_arg``."""
        props = self.parameters.get("properties", {})
        first = ("path",) if "path" in props else ()
        rest = (self.main_arg,) if self.main_arg and self.main_arg not in first else ()
        return first + rest

    def info(self) -> dict[str, Any]:
        """What a UI is told of the tool (ToolInfo of docs/protocol.md)."""
        return {"name": self.name, "profile": self.profile, "main_arg": self.main_arg,
                "summary_args": list(self.summary_args)}


@dataclass(frozen=True)
class Profile:
    """Rules a profile applies around each of its tools' calls.

    ``before`` may answer a call without running it (e.g. a loop-guard nudge); ``after`` may
    rewrite a result (e.g. capping). Both default to doing nothing. ``title`` says what the
    profile is, for the generated docs.
    """

    name: str
    title: str = ""
    before: Callable[[Call], ToolResult | None] = lambda call: None
    after: Callable[[Call, ToolResult], ToolResult] = lambda call, result: result


if TYPE_CHECKING:  # the entries are the Tool and Profile roles (kli.tools.roles)
    from kli.tools import roles

    def _is_tool(tool: Tool) -> roles.Tool:
        return tool

    def _is_profile(profile: Profile) -> roles.Profile:
        return profile
