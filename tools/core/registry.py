"""Registry types: what a tool is, what a call hands it, and the registry core is given.

The list of tools itself lives in ``kli.tools.registry``, above core: core never imports a
tool. ``kli.tools`` hands core that registry (``provide``), and every ``Workspace`` finds its
tools, its profiles, its default notebook store and the hooks run after a call there
(``current``). What core must know of a tool — does it decide repair previews, are its file
changes detected, what a held Accept of it needs — is a field of its ``Tool``, never its name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from kli.tools.core.jail import Jail
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


# Who made a call (``Call.source``; the ``source`` of a call event, docs/protocol.md). Only an
# agent's calls are ever held for review (``approval.HELD_SOURCE``); the others run as asked.
AGENT, MAGIC, UI, WIDGET, CLI, API = "agent", "magic", "ui", "widget", "cli", "api"
SOURCES = (AGENT, MAGIC, UI, WIDGET, CLI, API)


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

    ``makes_preview`` marks the tool whose calls leave repair previews in a session's queue and
    decide them (``edit``: ``accept_repair`` / ``reject_repair``): approval never holds a call
    that decides one, and a person's Accept of a preview, or Reject of any proposal, is a call
    of it. ``detects_changes`` marks a tool whose file changes are not all made through the
    atomic writers (``bash``, ``ws_shell``, ``eval``): the tree is snapshot around each call and
    the files it changed are detected (``kli.tools.core.undo``). What a held call records
    beyond core's own writes (``ws_mv``'s ``git mv``) it records as an ``approval.HeldStep``,
    which says itself what its Accept checks and does.
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
    makes_preview: bool = False
    detects_changes: bool = False
    # A tool that runs code in the live image says where (``ImageScope``), so its changes to
    # the image are recorded with the call's change and undone with it; None: it does not.
    image_scope: Callable[[Call], ImageScope] | None = None
    # A tool that does not touch the image (``touches_image`` False) but whose call does for
    # some arguments (an undo of a change that holds a live image part) says which: ``(ws,
    # args)`` → whether this call runs in the image, after a running cell (``in_image``).
    image_when: Callable[[Any, dict[str, Any]], bool] | None = None
    # MCP tool annotations (``annotations()``) are derived from the facts above; an entry
    # states one of these only where the derivation would be wrong for it.
    title: str | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    def in_image(self, ws: Any, args: Any) -> bool:
        """Whether a call with ``args`` runs in the image (after a running cell):
        ``touches_image``, or ``image_when`` says so for these arguments."""
        if self.touches_image:
            return True
        if self.image_when is None or not isinstance(args, dict):
            return False
        try:
            return bool(self.image_when(ws, args))
        except Exception:  # a bad argument is the tool's to refuse, wherever it runs
            return False

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


ALL = "all"  # where a face takes a profile: the tools of every profile
AfterCall = Callable[[Call, "ToolResult"], "ToolResult"]


@dataclass
class Registry:
    """Every tool of every profile, by name, and what the layer that lists them gives each
    workspace besides: ``notebooks`` makes a workspace's default notebook store from its jail
    (a ``NotebookStore``, kli.tools.roles; a host may put a live one in its place), and
    ``after_call`` rewrite a call's result after its tool ran, in order, before the profile's
    ``after`` (an edited module the image imported is said to be stale)."""

    tools: dict[str, Tool] = field(default_factory=dict)
    profiles: dict[str, Profile] = field(default_factory=dict)
    notebooks: Callable[[Jail], Any] | None = None
    after_call: tuple[AfterCall, ...] = ()

    @classmethod
    def build(cls, tools: list[Tool], profiles: list[Profile], *,
              notebooks: Callable[[Jail], Any] | None = None,
              after_call: tuple[AfterCall, ...] = ()) -> Registry:
        reg = cls(notebooks=notebooks, after_call=after_call)
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

    def unknown_profile(self, name: object) -> str:
        """What every face says of a profile name it does not know: the names it takes."""
        return (f"unknown profile {name!r}; the profiles are {', '.join(self.profiles)} "
                f"and {ALL} (every tool).")

    def select(self, profile: str | None) -> list[Tool]:
        """The tools of ``profile`` in registry order; ``all`` (or None) is every tool. Raises
        ValueError (``unknown_profile``) for any other name."""
        if profile is None or profile == ALL:
            return list(self.tools.values())
        if profile not in self.profiles:
            raise ValueError(self.unknown_profile(profile))
        return [t for t in self.tools.values() if t.profile == profile]


_provided: list[Callable[[], Registry]] = []
_current: list[Registry] = []


def provide(get: Callable[[], Registry]) -> None:
    """Hand core the registry: ``get`` returns it, and is called once, when a workspace first
    needs a tool (``kli.tools`` provides ``kli.tools.registry.REGISTRY`` at import, so
    importing core stays cheap and core imports no tool)."""
    _provided[:] = [get]
    _current.clear()


def current() -> Registry:
    """The registry ``provide`` handed core. RuntimeError when none was: core alone has no
    tools."""
    if not _current:
        if not _provided:
            raise RuntimeError("no tool registry was provided to kli.tools.core; import kli.tools")
        _current.append(_provided[0]())
    return _current[0]
