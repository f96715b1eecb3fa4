"""The Workspace: one root, its settings, its sessions, and ``call`` — the single entry every
face goes through.

``call`` never raises for a tool-level failure: unknown tool, bad arguments, denied gate,
``ToolError`` from the tool and unexpected exceptions all become error results. Every call is
reported to the workspace's listeners as an event (the kernel forwards these to the UI), and so is
every decision on a pending proposal (``decide``).
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import sys
import threading
import time
import traceback
import types
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from typing import Any

from kli.tools.core import approval, atomic, imports, interrupts, sandbox, suggest, undo
from kli.tools.core.atomic import permission_hint
from kli.tools.core.jail import Jail
from kli.tools.core.proposal import DISCARDED, KERNEL, REJECTED, Decision, Proposal
from kli.tools.core.registry import Call, Registry, Tool, current
from kli.tools.core.result import ImagePart, ToolError, ToolResult
from kli.tools.core.schema import normalise_aliases, show, validate
from kli.tools.core.session import Session
from kli.tools.core.settings import SettingsLoader, granted

Listener = Callable[[dict[str, Any]], None]
MAX_EXPIRED = 200  # proposals kept after their session closed; the oldest is discarded beyond
MAX_DECIDED = 500  # decided proposals remembered for await_decision
_depth = threading.local()  # Workspace.call nesting on this thread (eval code may call tools)
_event_ids = itertools.count(1)



def image_event(part: ImagePart) -> dict[str, Any]:
    """What a ``call`` event says of an image the model was handed (``look``): its size and
    label, and a thumbnail as a data URL for the activity panel — never the image itself."""
    out: dict[str, Any] = {"mime": part.mime, "width": part.width, "height": part.height,
                           "bytes": len(part.data), "label": part.label}
    if part.thumbnail is not None:
        out["thumbnail"] = (f"data:{part.thumbnail_mime};base64,"
                            + base64.b64encode(part.thumbnail).decode())
    return out


def denied_text(tool: str, gate: str | None, reader: str) -> str:
    """Why a call of ``tool`` was not run (``gate`` not granted), for its reader: the agent is
    told to ask for the capability; the person, who typed a magic, where to grant it."""
    head = (f"{tool} denied: capability '{gate}' is not granted by the 'capabilities' setting "
            "(.kli/settings.json). Nothing was run.")
    if reader == "person":
        return (f"{head} To allow it, add \"{gate}\" to the \"capabilities\" list in "
                ".kli/settings.json (%kli caps shows what is granted, and from which files).")
    return f"{head} Ask the user to grant '{gate}', or use a tool whose capability is granted."


class Workspace:
    """Tools of both profiles, callable on one root.

    ``settings`` is a dict deep-merged over the settings files. ``namespace`` is the dict that
    ``eval`` runs ``__main__`` code in (the kernel passes the notebook's namespace); when None a
    fresh module's namespace is created on first use.

    Two host hooks describe the live image to the image tools: ``hidden_names`` (names of the
    namespace that are the host's, not the user's — the kernel gives IPython's
    ``user_ns_hidden``) and ``modules`` (the image's imported modules; ``sys.modules`` of this
    process by default, which is right whenever the Workspace runs in the image's process).
    """

    def __init__(
        self,
        root: str,
        settings: dict[str, Any] | None = None,
        *,
        namespace: dict[str, Any] | None = None,
        hidden_names: Callable[[], Container[str]] | None = None,
        modules: Callable[[], Mapping[str, Any]] | None = None,
        registry: Registry | None = None,
    ) -> None:
        imports.install()  # before any cell runs: what is imported now is the host's
        self.jail = Jail(root)
        self.root = self.jail.root
        self._settings = SettingsLoader(self.root, dict(settings or {}))
        self._namespace = namespace
        self.hidden_names: Callable[[], Container[str]] = hidden_names or (lambda: ())
        self.modules: Callable[[], Mapping[str, Any]] = modules or (lambda: sys.modules)
        self.sessions: dict[str, Session] = {}
        # Proposals whose session closed while they were pending (``close_session``).
        self.expired: dict[str, Proposal] = {}
        # Recently decided proposals, by id, for ``await_decision`` (the newest MAX_DECIDED).
        self.decided: dict[str, Proposal] = {}
        self.decisions = threading.Condition()  # notified on every decision
        self.default_session = self.open_session("default")
        self._listeners: list[Listener] = []
        # Serialises changes to files so two sessions' edits never interleave.
        self.file_lock = threading.RLock()
        # The tools this workspace calls: the one core was given (``registry.current``) unless
        # one is handed to it (a test's own tools).
        self._registry = registry
        # Where notebooks are loaded and changed (a NotebookStore, kli.tools.roles): the
        # registry's on-disk store unless the host puts a live store here (``notebooks``).
        self._notebooks: Any = None
        # How run_cells runs a cell as a cell (a CellRunner, kli.tools.roles): the kernel host
        # gives one; None elsewhere.
        self.cell_runner: Any = None
        # The notebook the host was started for (root-relative; the kernel's), recorded on
        # every change its calls make so a notebook's Timeline shows its own. None elsewhere.
        self.notebook: str | None = None

    @property
    def registry(self) -> Registry:
        """The tools, profiles, default notebook store and post-call hooks of this workspace."""
        return self._registry if self._registry is not None else current()

    @registry.setter
    def registry(self, registry: Registry) -> None:
        self._registry = registry

    @property
    def notebooks(self) -> Any:
        """The notebook store (made on first use by the registry's ``notebooks``: on disk);
        None when the registry gives none (a test's registry of tools that load no notebook)."""
        if self._notebooks is None and self.registry.notebooks is not None:
            self._notebooks = self.registry.notebooks(self.jail)
        return self._notebooks

    @notebooks.setter
    def notebooks(self, store: Any) -> None:
        self._notebooks = store

    # -- settings -------------------------------------------------------------------------
    @property
    def settings(self) -> dict[str, Any]:
        return self._settings.load()[0]

    def settings_error(self) -> str | None:
        return self._settings.load()[1]

    def granted(self, gate: str | None) -> bool:
        return granted(self.settings, gate)

    def set_setting(self, name: str, value: Any) -> None:
        """Set ``name`` in the host's settings layer (above every file) from now on."""
        self._settings.overrides[name] = value
        self._settings._key = None  # re-merge on the next load

    def host_setting(self, name: str) -> tuple[bool, Any]:
        """Whether the host's settings layer sets ``name``, and its value there."""
        return name in self._settings.overrides, self._settings.overrides.get(name)

    def drop_setting(self, name: str) -> None:
        """Remove ``name`` from the host's settings layer: the files' value counts again."""
        self._settings.overrides.pop(name, None)
        self._settings._key = None

    # -- eval namespace ---------------------------------------------------------------------
    @property
    def namespace(self) -> dict[str, Any]:
        if self._namespace is None:
            module = types.ModuleType("__main__")
            self._namespace = module.__dict__
        return self._namespace

    # -- writing ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def writing(self, paths: Iterable[str], *, tool: str, rel: str) -> Iterator[None]:
        """Hold the locks a writing tool needs from loading what it verifies until it has
        written: ``file_lock`` (this process's threads) and the cross-process folder locks of
        ``paths`` (``atomic.locked``). Another process holding one too long is a ``busy``
        refusal of ``tool`` naming ``rel``."""
        with self.file_lock:
            held = contextlib.ExitStack()
            try:
                held.enter_context(atomic.locked(list(paths)))
            except atomic.Busy as exc:
                raise ToolError(exc.refusal(tool, rel), error="busy", path=rel) from None
            with held:
                yield

    # -- sessions -------------------------------------------------------------------------
    def open_session(self, label: str = "") -> Session:
        session = Session.new(label)
        self.sessions[session.id] = session
        return session

    def close_session(self, session_id: str) -> None:
        """End a session: its pending proposals stay in the queue as expired (``expired —
        LABEL disconnected``, in ``self.expired``, one ``expired`` event) — a person can still
        decide them — then its closers run (background jobs killed, traces removed)."""
        if session_id == getattr(self, "default_session", Session("")).id:
            return
        session = self.sessions.get(session_id)
        if session is None:
            return
        left = list(session.candidates.values())
        label = f"expired — {session.label} disconnected"
        for proposal in left:
            proposal.expired = label
            proposal.session_label = session.label
            self.expired[proposal.id] = proposal
        session.candidates.clear()
        while len(self.expired) > MAX_EXPIRED:
            self.decide(self.expired[next(iter(self.expired))], Decision(REJECTED, DISCARDED, KERNEL))
        self.sessions.pop(session_id, None)
        if left and self._listeners:
            self.emit({"kind": "expired", "candidates": [p.id for p in left],
                       "session": session.id, "session_label": session.label, "text": label})
        session.close()

    def close(self) -> None:
        """End every session, the default one included (the host is shutting down)."""
        for session in list(self.sessions.values()):
            session.close()

    def find_candidate(self, candidate_id: str) -> Proposal | None:
        """A pending proposal (repair candidate or held call, expired ones too) by id."""
        for session in list(self.sessions.values()):
            found = session.candidates.get(candidate_id)
            if found is not None:
                return found
        return self.expired.get(candidate_id)

    def pending_candidates(self) -> list[Proposal]:
        """Every pending proposal, the expired ones last: the one queue a person decides."""
        live = [c for s in list(self.sessions.values()) for c in s.candidates.values()]
        return live + list(self.expired.values())

    def hold(self, session: Session, proposal: Proposal, bound: int) -> None:
        """Add ``proposal`` to ``session``'s pending ones; beyond ``bound`` the oldest is
        decided ``discarded``."""
        while len(session.candidates) >= bound:
            oldest = session.candidates[next(iter(session.candidates))]
            self.decide(oldest, Decision(REJECTED, DISCARDED, KERNEL))
        session.candidates[proposal.id] = proposal
        if self._listeners:  # the Proposal object itself: a host turns it into its wire shape
            self.emit({"kind": "proposed", "proposal": proposal})

    def decide(self, proposal: Proposal, decision: Decision) -> None:
        """End ``proposal``: drop it from every session, record ``decision`` on it, and report
        one ``resolved`` event (``kli.tools.core.proposal``)."""
        for session in list(self.sessions.values()):
            session.candidates.pop(proposal.id, None)
        self.expired.pop(proposal.id, None)
        proposal.status = decision.code
        proposal.decision = decision
        approval.notify(self, proposal)
        with self.decisions:
            self.decided[proposal.id] = proposal
            while len(self.decided) > MAX_DECIDED:
                self.decided.pop(next(iter(self.decided)))
            self.decisions.notify_all()
        if not self._listeners:
            return
        owner = self.sessions.get(proposal.session_id)
        self.emit(
            {
                "kind": "resolved",
                "id": f"e{next(_event_ids)}",
                "time": time.time(),
                "session": proposal.session_id,
                "session_label": owner.label if owner else proposal.session_label,
                "path": proposal.path,
                **decision.to_json(proposal.id),
                "text": decision.text,
            }
        )

    # -- events ---------------------------------------------------------------------------
    def add_listener(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def emit(self, event: dict[str, Any]) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # a broken listener must never break a tool call
                traceback.print_exc()

    # -- specs ----------------------------------------------------------------------------
    def tools(self, profile: str | None = None) -> list[Tool]:
        """The tools of ``profile`` (``"all"`` or None: every tool); ValueError naming the
        profiles for an unknown one."""
        return self.registry.select(profile)

    def specs(self, profile: str | None = "kli") -> list[dict[str, Any]]:
        """JSON-Schema function-calling specs of a profile's tools (``"all"`` or None: every
        tool); ValueError naming the profiles for an unknown one."""
        return [t.spec() for t in self.tools(profile)]

    # -- the call -------------------------------------------------------------------------
    def call(
        self,
        name: str,
        args: dict[str, Any] | None = None,
        session: Session | None = None,
        *,
        source: str = "api",
    ) -> ToolResult:
        """Run tool ``name`` with ``args`` in ``session`` (the default session when None)."""
        session = session or self.default_session
        started = time.perf_counter()
        result: ToolResult | None = None
        try:
            with approval.running_for(source):  # a magic the agent's code runs is not a person
                result = self._call(name, args if args is not None else {}, session, source)
            if source == approval.HELD_SOURCE:
                result = approval.deliver(session, result, name if isinstance(name, str) else "")
        except KeyboardInterrupt:
            if getattr(_depth, "n", 0):  # a tool called from eval code: the eval is what stops
                raise
            if result is None:  # once the call has its result, a late interrupt changes nothing
                result = self._interrupted_before_run(name)
        except Exception as exc:  # never raises: whatever escaped is an error result
            result = ToolResult.error(
                f"{name if isinstance(name, str) else show(name)} failed with an internal error: "
                f"{type(exc).__name__}. The call may be retried; if it fails again, report it.",
                error="internal",
                traceback=_traceback(),
            )
        if not self._listeners:
            return result  # nobody watches: the event is not built
        self.emit_call(name if isinstance(name, str) else show(name),
                       args if isinstance(args, dict) else {"_": show(args)},
                       session, source, result, time.perf_counter() - started)
        return result

    def emit_call(self, tool: str, args: dict[str, Any], session: Session, source: str,
                  result: ToolResult, seconds: float) -> None:
        """Report a ``call`` event: one tool call's arguments, result and duration (the shape
        docs/protocol.md documents; a background job's changes are reported as one too)."""
        self.emit(
            {
                "kind": "call",
                "id": f"e{next(_event_ids)}",
                "time": time.time(),
                "tool": tool,
                "args": args,
                "session": session.id,
                "session_label": session.label,
                "source": source,
                "ok": result.ok,
                "text": result.text,
                "details": result.details,
                "duration_ms": round(seconds * 1000, 3),
                **({"images": [image_event(p) for p in result.images]} if result.images else {}),
            }
        )

    def _call(self, name: str, args: Any, session: Session, source: str) -> ToolResult:
        registry = self.registry
        tool = registry.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            known = sorted(registry.tools)
            close = suggest.close_names(name, known) if isinstance(name, str) else []
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            return ToolResult.error(
                f"unknown tool {show(name)}.{hint} Available tools: {', '.join(known)}.",
                error="unknown_tool",
            )
        if isinstance(args, dict):
            args = normalise_aliases(args, tool.aliases)
        cleaned, problem = validate(tool.name, tool.parameters, args)
        if problem is not None:
            return ToolResult.error(problem, error="bad_arguments")
        # One settings load per call (each load stats the settings files up the tree).
        settings, settings_problem = self._settings.load()
        if settings_problem is not None:
            return ToolResult.error(settings_problem, error="bad_settings")
        if not granted(settings, tool.gate):
            return ToolResult.error(denied_text(tool.name, tool.gate, "agent"), error="denied",
                                    gate=tool.gate)
        call = Call(ws=self, session=session, tool=tool, args=cleaned, source=source)
        boxed = sandbox.refusal(call, settings)  # an agent's shell or eval the box forbids
        if boxed is not None:
            return boxed
        profile = registry.profiles[tool.profile]
        outermost = not getattr(_depth, "n", 0)
        _depth.n = getattr(_depth, "n", 0) + 1
        commits: list[dict[str, Any]] = []
        try:
            try:
                with interrupts.recording(commits), imports.guarded(self.root):
                    early = profile.before(call)
                    if early is not None:
                        return early
                    if tool.waits:  # waits for a person: must not hold the session up
                        result = tool.run(call)
                    elif tool.mutates or tool.detects_changes:
                        with session.lock:  # every change recorded (undo), detected ones shown
                            holding = approval.held(call, settings)
                            if holding is not None:
                                result = holding
                            else:
                                with undo.track(call, settings) as tracker:
                                    result = tool.run(call)
                                result = undo.finish(call, tracker, result, settings)
                    else:
                        with session.lock:
                            result = approval.held(call, settings) or tool.run(call)
                    for hook in registry.after_call:  # the layer above's post-call work
                        result = hook(call, result)
                    return profile.after(call, result)
            except KeyboardInterrupt:  # also one landing as the blocks above are left
                if not outermost:  # a tool called from eval code: the eval is what stops
                    raise
                return self._interrupted(tool, commits)
        except ToolError as exc:
            # Error results pass the profile's ``after`` too (slmcode caps every result).
            return profile.after(call, ToolResult.error(exc.message, **exc.details))
        except OSError as exc:  # a tool that did not word it: still a named error, not internal
            where = f" ({self.jail.rel(exc.filename)})" if isinstance(exc.filename, str) else ""
            return profile.after(call, ToolResult.error(
                f"{tool.name} failed: {exc.strerror or type(exc).__name__}{where}.{permission_hint(exc)} "
                "Check the path and retry.",
                error="os_error",
            ))
        except Exception as exc:
            return ToolResult.error(
                f"{tool.name} failed with an internal error: {type(exc).__name__}: "
                f"{_exc_text(exc)}. The call may be retried; if it fails again, report it.",
                error="internal",
                traceback=_traceback(),
            )
        finally:
            _depth.n -= 1

    def _interrupted_before_run(self, name: Any) -> ToolResult:
        """An interrupt that landed before the tool ran (while its arguments or the settings
        were read): nothing was run, and the answer is the same as for one during the run."""
        tool = self.registry.tools.get(name) if isinstance(name, str) else None
        if tool is not None:
            return self._interrupted(tool, [])
        return ToolResult.error(
            f"interrupted: {show(name)} was stopped by an interrupt before it ran. Nothing was "
            "run; retry it.", error="interrupted", written=[], rolled_back=[])

    def _interrupted(self, tool: Tool, commits: list[dict[str, Any]]) -> ToolResult:
        """The result of a call stopped by KeyboardInterrupt (the kernel's stop button): what
        was stopped, and whether a change it had begun was written or rolled back (a commit is
        never cut in the middle: ``interrupts.deferred``)."""
        written = [self.jail.rel(p) for c in commits if c["status"] == "written" for p in c["paths"]]
        undone = [
            self.jail.rel(p) for c in commits if c["status"] == "rolled_back" for p in c["paths"]
        ]
        text = f"interrupted: {tool.name} was stopped by an interrupt (the kernel's stop button) "
        text += "before it finished."
        if written:
            text += f" Its change was already written, whole: {', '.join(written)}."
        if undone:
            text += f" The write it had begun was rolled back: {', '.join(undone)} as before."
        if not written and not undone:
            text += (
                " Nothing was written." if tool.mutates
                else f" {tool.name} changes nothing; retry it (narrower, if it was slow)."
            )
        return ToolResult.error(text, error="interrupted", written=written, rolled_back=undone)


def _exc_text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return "(its message cannot be shown)"


def _traceback() -> str:
    try:
        return traceback.format_exc(limit=8)
    except Exception:
        return "(the traceback cannot be shown)"
