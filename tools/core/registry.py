"""Registry types: what a tool is, and what a call hands it.

The list of tools itself lives in ``kli.tools.registry``; this module only defines the shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

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


class ImageScope(NamedTuple):
    """Where a call runs code in the live image (``Tool.image_scope``): ``places``, each
    (label, a namespace dict or an object whose attributes are its names: a module, a class),
    and ``code``, the sources it runs (what they store into or call is what they may change in
    place). The live image's undo records these (``kli.tools.image.record``)."""

    places: list[tuple[str, Any]]
    code: list[str]


# A derived title (``Tool.annotations``) is at most this long: the description's first clause.
TITLE_CHARS = 48


def _title(description: str) -> str:
    """A short human title from a description: its first clause, cut at a word."""
    first = description.strip().splitlines()[0] if description.strip() else ""
    first = first.split(". ")[0].rstrip(".")
    for stop in (": ", " (", "; ", " — ", ", ", " and return", " and get"):
        if stop in first:
            first = first.split(stop)[0]
    if len(first) > TITLE_CHARS:
        first = first[:TITLE_CHARS].rsplit(" ", 1)[0] + "…"
    return first


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

    ``sources`` (a shell or eval tool) reads what a call would run beyond its arguments — the
    cells ``run_cells`` runs, the module file ``redefine`` reloads — as a list of
    ``approval.source_entry``: a held call shows them with their sha256, and Accept runs only
    when they are unchanged (``kli.tools.core.approval``).
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
    sources: Callable[[Call], list[dict[str, Any]]] | None = None
    # A tool that runs code in the live image says where (``ImageScope``), so its changes to
    # the image are recorded with the call's change and undone with it; None: it does not.
    image_scope: Callable[[Call], ImageScope] | None = None
    # MCP tool annotations (``annotations()``) are derived from the facts above; an entry
    # states one of these only where the derivation would be wrong for it.
    title: str | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    def spec(self) -> dict[str, Any]:
        """The function-calling spec: name, description, JSON-Schema parameters."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    def annotations(self) -> dict[str, Any]:
        """MCP tool annotations (title and behaviour hints), derived from the entry's facts.

        - read-only: the tool changes nothing (``mutates`` false) and runs no command or code
          of the caller's (its ``action`` is not ``shell`` / ``eval``);
        - destructive (only meaningful when not read-only): True unless the entry says its
          changes are additive or reversible (``destructive=False``);
        - idempotent: read-only tools are; a changing tool only when its entry says so (a
          whole-file write repeated leaves the same file);
        - open world: a shell command or code in the image can reach anything (network,
          other processes); file and job tools stay inside the workspace and the session.
        """
        read_only = not self.mutates and self.action not in ("shell", "eval")
        runs_anything = self.action in ("shell", "eval") or (
            self.gate in ("process/exec", "image/eval") and self.mutates)
        return {
            "title": self.title or _title(self.description),
            "readOnlyHint": read_only,
            "destructiveHint": False if read_only else
            (self.destructive if self.destructive is not None else True),
            "idempotentHint": read_only if self.idempotent is None else self.idempotent,
            "openWorldHint": runs_anything if self.open_world is None else self.open_world,
        }

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
