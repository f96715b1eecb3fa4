"""Approval mode: an agent's mutating call can wait for a person (docs/review.md).

The setting ``approval`` (``.kli/settings.json``, or live: ``set_mode``) says, per kind of
action, ``auto`` (run at once, as always) or ``review``. The kind of each tool is its registry
entry's ``action`` (``FILE``: file and notebook edits, writes, deletes, moves; ``SHELL``: ``bash``,
``ws_shell``; ``EVAL``: ``eval`` and code run in the image). Only calls whose source is an agent
(``HELD_SOURCE``) are ever held; a magic the person typed, the UI and the API run as asked.

Under ``review`` a call becomes a pending ``Proposal`` of kind ``KIND`` (``call``), in the
caller's session, sharing the queue with repair candidates:

- a file call runs with its writes captured (``atomic.capturing`` and a capturing
  ``NotebookStore``): nothing is written, no folder is made or removed and git's index is
  untouched; the proposal keeps the exact bytes the tool would have written and every other
  step it would have taken (a folder made or removed, a rename, a ``git mv``), with the state of
  every path it touches at that moment (``Node`` for a folder or a symlink) and, for a ``git
  mv``, the index entries it moves. ``accept`` performs those steps and nothing else — and
  refuses, naming the file, with nothing changed, when a path or an index entry is not as it
  was when the proposal was made.
- a shell or eval call is not run at all; the proposal shows the command or code, and
  ``accept`` runs the call as the agent sent it (in the agent's session, source: the decider).
  What such a call would run that its arguments do not hold — the cells a ``run_cells`` runs,
  the module file a ``redefine`` reloads — is read when the proposal is made (the tool entry's
  ``sources``: each with its text and sha256) and shown with it; ``accept`` reads them again
  and is refused, naming the cell or file, with nothing run, when one is not as shown; the tool
  then runs exactly the approved text (``approved``), stopping where one changed mid-run.

The agent gets a result naming the proposal id; ``await_decision`` waits for the outcome. A
decision on a held call (and a Reject's note on a repair candidate) is also put in the next
result of the owner's session (``deliver``).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import difflib
import hashlib
import itertools
import os
import stat
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kli.tools.core import atomic
from kli.tools.core.changes import file_change
from kli.tools.core.proposal import (
    ACCEPTED,
    MAX_PENDING_CANDIDATES,
    REFUSED,
    REJECTED,
    REJECTED_ON_REQUEST,
    UNKNOWN,
    WRITTEN,
    Decision,
    Proposal,
    unknown,
)
from kli.tools.core.registry import AGENT, current
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.settings import read_settings_file, write_setting
from kli.tools.core.textfile import read_bytes

if TYPE_CHECKING:
    from kli.tools.core.registry import Call
    from kli.tools.core.session import Session
    from kli.tools.core.workspace import Workspace

KIND = "call"  # Proposal.kind of a held call
FILE, SHELL, EVAL = "file", "shell", "eval"
ACTIONS = (FILE, SHELL, EVAL)
ACTION_TITLES = {FILE: "file and notebook changes", SHELL: "shell commands", EVAL: "eval"}
AUTO, REVIEW = "auto", "review"
MODES = (AUTO, REVIEW)
HELD_SOURCE = AGENT  # the only source whose calls are held
STEP = "step"  # a captured op ``(STEP, HeldStep)``: a step core does not take itself
SETTING = "approval"
STALE = "stale_proposal"  # error code: a file changed since the proposal was made
MAX_NOTE = 2000  # characters of a Reject's note kept
MAX_SHOWN_DIFF = 60  # diff lines a held file call's result shows per file
MAX_WAIT = 600.0  # seconds await_decision may wait at most
MAX_SHOWN_SOURCE = 20_000  # characters of each held call's source shown (its sha256 covers all)

_ids = itertools.count(1)
_ABSENT = object()
FOLDER_SIGN_LIMIT = 100_000  # entries of a folder a held call's state describes at most


@dataclass(frozen=True)
class Node:
    """What a path that is not a regular file was when a proposal was made: a ``folder`` (a
    digest of the names, kinds, sizes and modification times of everything below it), a
    ``symlink`` (its target), or another ``special`` file (its type)."""

    kind: str
    sign: str


State = bytes | Node | None  # a path's state: a file's bytes, a Node, None when absent


class HeldStep(Protocol):
    """A step a held file call would take by a way core does not know (``ws_mv``'s ``git
    mv``). The tool records it (``atomic.capture_op(STEP, step)``) instead of taking it, and
    the step says itself what the proposal shows and what the person's Accept checks and does:
    ``paths`` (real paths it touches, compared as they were when proposed), ``shown`` (the step
    as the person and the agent read it), ``refusal`` (why Accept must not take it now, None
    when it may), ``take`` (take it; ``ToolError`` when refused, nothing done)."""

    def paths(self) -> list[str]: ...
    def shown(self) -> str: ...
    def refusal(self, proposal_id: str) -> str | None: ...
    def take(self) -> None: ...


def preview_tool(ws: Workspace) -> str:
    """The tool that decides repair previews (``Tool.makes_preview``: ``edit``): a person's
    Accept of a preview, and Reject of any proposal, is a call of it."""
    return next(t.name for t in ws.registry.tools.values() if t.makes_preview)


@dataclass
class CallPlan:
    """A held call: the tool and arguments as sent, and for a file call what it would write.

    ``ops`` are the captured writes in order (``atomic.capturing``'s tuples, and
    ``("notebooks", notebooks, files, expected)``); ``state`` maps each real path they touch to
    its bytes when the proposal was made (None: absent); ``views`` what the session would have
    been shown, given to it when the change is written."""

    tool: str
    args: dict[str, Any]
    action: str
    ops: list[tuple[Any, ...]] = field(default_factory=list)
    state: dict[str, State] = field(default_factory=dict)
    files: list[dict[str, Any]] = field(default_factory=list)
    views: dict[str, Any] = field(default_factory=dict)
    result_text: str = ""
    record: dict[str, Any] = field(default_factory=dict)  # details the recorded change keeps
    # A shell or eval call: what it would run beyond its arguments (``source_entry`` each).
    sources: list[dict[str, Any]] = field(default_factory=list)
    running: bool = False  # a shell or eval call accepted and running: not accepted twice


# -- the setting ---------------------------------------------------------------------------------
def modes(settings: Mapping[str, Any]) -> tuple[dict[str, str], str | None]:
    """The mode of every action kind, and the error that makes the setting unusable."""
    value = settings.get("approval", AUTO)
    if value is None:
        value = AUTO
    if isinstance(value, str):
        if value not in MODES:
            return {a: REVIEW for a in ACTIONS}, _setting_error(repr(value))
        return {a: value for a in ACTIONS}, None
    if isinstance(value, dict):
        out = {a: AUTO for a in ACTIONS}
        for kind, mode in value.items():
            if kind not in ACTIONS or mode not in MODES:
                return {a: REVIEW for a in ACTIONS}, _setting_error(f"{kind!r}: {mode!r}")
            out[kind] = mode
        return out, None
    return {a: REVIEW for a in ACTIONS}, _setting_error(type(value).__name__)


def _setting_error(what: str) -> str:
    return (
        f"setting 'approval' is not valid ({what}): use \"auto\", \"review\", or an object "
        f"mapping {', '.join(ACTIONS)} to \"auto\" or \"review\" (.kli/settings.json). Nothing "
        "was run; fix the setting and retry."
    )


# Where the modes come from: no setting (the default), a settings file (kept: a restart, and
# every kernel whose root is under that file, starts from it), or the switch of this kernel only
# (the host's settings layer, gone when the kernel ends).
DEFAULT, KEPT, KERNEL_ONLY = "default", "kept", "kernel"
ORIGINS = (DEFAULT, KEPT, KERNEL_ONLY)


class KeepError(ValueError):
    """A choice asked to be kept could not be written: it is switched in this kernel only."""


@dataclass(frozen=True)
class Origin:
    where: str  # DEFAULT, KEPT or KERNEL_ONLY
    file: str | None = None  # KEPT: the settings file (absolute) that sets the modes

    def words(self, root: str) -> str:
        """Where the modes come from, for a person: ``kept in .kli/settings.json`` …"""
        if self.where == KEPT and self.file:
            rel = os.path.relpath(self.file, root)
            return f"kept in {self.file if rel.startswith('..') else rel}"
        if self.where == KERNEL_ONLY:
            return "this kernel only: a restart forgets it"
        return "the default (no 'approval' setting)"


def origin(ws: Workspace) -> Origin:
    """Where the current modes come from: this kernel's switch, else the nearest settings file
    that sets ``approval`` (project files nearest first, then the user file), else the default."""
    from kli.tools.core.settings import project_settings_paths, user_settings_path

    if ws.host_setting(SETTING)[0]:
        return Origin(KERNEL_ONLY)
    for path in [*project_settings_paths(ws.root), user_settings_path()]:
        try:
            if SETTING in read_settings_file(path)[1]:
                return Origin(KEPT, path)
        except ValueError:
            continue  # the settings loader reports a broken file on every call
    return Origin(DEFAULT)


def keep_file(ws: Workspace) -> str:
    """The settings file a choice is kept in: the nearest project settings file, else
    ``.kli/settings.json`` at the top of the git work tree the root is in (so every notebook of
    the repository shares it), else at the root."""
    from kli.tools.core.settings import CONTROL_DIR, SETTINGS_NAME, project_settings_path

    nearest = project_settings_path(ws.root)
    if nearest is not None:
        return nearest
    here = os.path.abspath(ws.root)
    while not os.path.exists(os.path.join(here, ".git")):
        parent = os.path.dirname(here)
        if parent == here:
            here = os.path.abspath(ws.root)
            break
        here = parent
    return os.path.join(here, CONTROL_DIR, SETTINGS_NAME)


def set_mode(ws: Workspace, mode: str | None, kind: str | None = None,
             keep: bool | None = None) -> dict[str, str]:
    """Switch approval (the panel, ``%kli approval``): ``kind`` or every kind to ``mode`` (None:
    the modes stay). ``keep`` True writes the modes to a settings file (``origin`` the file set
    them, else ``keep_file``), so a restart starts from them; False switches them in this kernel
    only (the host's settings layer, above every file) and takes them out of the file they were
    kept in; None keeps them where they are now. Returns the new modes; raises ``ValueError``
    for an unknown mode or kind, ``KeepError`` (the switch made, in this kernel only) when the
    settings file cannot be written."""
    if mode is not None and mode not in MODES:
        raise ValueError(f"approval mode must be one of {', '.join(MODES)}, not {mode!r}")
    if kind is not None and kind not in ACTIONS:
        raise ValueError(f"approval kind must be one of {', '.join(ACTIONS)}, not {kind!r}")
    current, _problem = modes(ws.settings)
    for k in ACTIONS if kind is None or mode is None else (kind,):
        current[k] = mode or current[k]
    now = origin(ws)
    problem = None
    try:
        if keep or (keep is None and now.where == KEPT):
            write_setting(now.file if now.where == KEPT and now.file else keep_file(ws), SETTING, current)
            ws.drop_setting(SETTING)
            if modes(ws.settings)[0] != current:  # a file nearer the root says otherwise
                ws.set_setting(SETTING, current)
                problem = "a settings file nearer the notebook sets 'approval' too"
        else:
            if keep is False and now.where == KEPT and now.file:
                write_setting(now.file, SETTING, None)
            ws.set_setting(SETTING, current)
    except ValueError as exc:
        ws.set_setting(SETTING, current)
        problem = str(exc)
    where = origin(ws)
    ws.emit({"kind": "approval", "modes": dict(current), "origin": where.where,
             "kept": where.file, "said": where.words(ws.root)})
    if problem is not None:
        raise KeepError(f"switched in this kernel only, not kept: {problem}.")
    return current


# -- holding a call -------------------------------------------------------------------------------
# The review a host that reaches several kernels asks of the calls it sends here (the ``review``
# of a ``call`` request; Jupyter AI's route, ``kli.kernel.ai.reach``): action kind → the
# notebooks under review, on other kernels, that a call of that kind here can change. A kind
# named is held whatever this kernel's own mode says.
_REQUIRED: contextvars.ContextVar[Mapping[str, Sequence[str]] | None] = contextvars.ContextVar(
    "kli_review_required", default=None)
# The mode of this kernel for the call being held (``held``), for its words (``_why``).
_mode_here: contextvars.ContextVar[str] = contextvars.ContextVar("kli_mode_here", default=REVIEW)


@contextlib.contextmanager
def required(review: Mapping[str, Sequence[str]] | None) -> Iterator[None]:
    """Calls inside the block are held for review for each kind ``review`` names (see
    ``_REQUIRED``)."""
    token = _REQUIRED.set({k: list(v) for k, v in (review or {}).items() if v})
    try:
        yield
    finally:
        _REQUIRED.reset(token)


def _why(action: str, tool: str) -> str:
    """Why a call of ``action`` is held, for the held result's words: this kernel's mode, or
    the notebooks under review elsewhere that it can change (``required``)."""
    others = [] if _mode_here.get() == REVIEW else list((_REQUIRED.get() or {}).get(action) or ())
    if not others:
        return f"approval mode 'review' for {ACTION_TITLES[action]}"
    names = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
    verb = "is" if len(others) == 1 else "are"
    return (f"{names} {verb} under review for {ACTION_TITLES[action]}, and this {tool} can "
            f"change {'it' if len(others) == 1 else 'them'}, although this notebook's own mode "
            "is auto")


def held(call: Call, settings: Mapping[str, Any]) -> ToolResult | None:
    """The result of ``call`` when approval holds it (a ``review`` kind — in this kernel's modes,
    or asked by the host for the notebooks the call can change, ``required`` — of an agent's
    call), after making its proposal; None when it runs as usual."""
    action = call.tool.action
    if action is None or call.source != HELD_SOURCE:
        return None
    current, problem = modes(settings)
    if problem is not None:
        return ToolResult.error(problem, error="bad_settings")
    if current[action] != REVIEW and not (_REQUIRED.get() or {}).get(action):
        return None
    token = _mode_here.set(current[action])
    try:
        return _held(call, action)
    finally:
        _mode_here.reset(token)


def _held(call: Call, action: str) -> ToolResult | None:
    if call.tool.makes_preview and call.args.get("reject_repair"):
        return None  # withdrawing a proposal writes nothing: never held
    repair = call.args.get("accept_repair") if call.tool.makes_preview else None
    if isinstance(repair, str):  # the preview is already in the person's queue
        pending = call.ws.find_candidate(repair)
        what = "held calls" if pending is not None and pending.kind == KIND else "repair previews"
        return ToolResult.success(
            f"Not written: under approval mode 'review' a person decides {what}, and "
            f"{repair} is waiting in their queue. Go on with other work, or wait for the "
            f"decision: await_decision id='{repair}' timeout=60.",
            status="pending",
            candidate=repair,
        )
    if action == FILE:
        return _hold_file(call)
    plan = CallPlan(call.tool.name, dict(call.args), action)
    if call.tool.sources is not None:  # a ToolError here answers the call: nothing is held
        plan.sources = call.tool.sources(call)
    return _propose(call, plan)


# -- what a held run / reload / eval runs --------------------------------------------------------
def digest(data: bytes) -> str:
    """The sha256 (hex) the project keeps for bytes (checkpoints, undo) — and for a held
    call's sources."""
    return hashlib.sha256(data).hexdigest()


def source_entry(what: str, data: bytes, **facts: Any) -> dict[str, Any]:
    """One thing a held call would run: ``what`` names it for the person (``nb.ipynb#ID``,
    ``module m (m.py)``), ``source`` its text, ``sha256`` its bytes' hash; ``facts`` more
    fields the tool compares (a cell's ``type``)."""
    return {"what": what, "source": data.decode("utf-8", "replace"), "sha256": digest(data),
            **facts}


def same_source(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two ``source_entry`` name the same thing with the same bytes (sha256)."""
    return {k: v for k, v in a.items() if k != "source"} == \
        {k: v for k, v in b.items() if k != "source"}


def changed_source(shown: Sequence[Mapping[str, Any]],
                   now: Sequence[Mapping[str, Any]]) -> str | None:
    """The first source that is not as shown (its ``what``), or None when all are."""
    for was, entry in itertools.zip_longest(shown, now):
        if was is None or entry is None or not same_source(was, entry):
            return str((was or entry or {}).get("what"))
    return None


_AGENT_CALL: contextvars.ContextVar[bool] = contextvars.ContextVar("kli_agent_call",
                                                                   default=False)


@contextlib.contextmanager
def running_for(source: str) -> Iterator[None]:
    """Mark what runs inside a call of ``source`` (``Workspace.call``): an agent's call, and
    everything it runs on this thread — the cells of its ``run_cells``, its ``eval``'s code —
    is the agent's, whatever magic that code uses (``by_agent``), and so is every call made
    inside it, whatever source it names."""
    token = _AGENT_CALL.set(source == HELD_SOURCE or _AGENT_CALL.get())
    try:
        yield
    finally:
        _AGENT_CALL.reset(token)


def _not_a_person(verb: str, proposal_id: str) -> ToolResult:
    """The refusal of a person's decision made from an agent's own call (its eval's code)."""
    return ToolResult.error(
        f"{verb} of {proposal_id} refused: it was asked from code an agent's call runs, not by "
        "a person; only a person decides a proposal. Nothing was written or run.",
        error="not_a_person", candidate=proposal_id)


def by_agent() -> bool:
    """Whether the code running now was started by an agent's tool call (see ``running_for``):
    the review magics refuse to decide or switch then — only a person does."""
    return _AGENT_CALL.get()


_APPROVED: contextvars.ContextVar[CallPlan | None] = contextvars.ContextVar(
    "kli_approved_call", default=None)


def approved(call: Call) -> list[dict[str, Any]] | None:
    """The sources a person approved, when ``call`` is the Accept of a held call of its tool:
    the tool runs exactly these (or refuses, error ``STALE``, naming the one that changed).
    None for every other call. Taken once: a tool the call itself runs gets None."""
    plan = _APPROVED.get()
    if plan is None or plan.tool != call.tool.name:
        return None
    _APPROVED.set(None)
    return plan.sources


def _sources_text(sources: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for s in sources:
        if s.get("type") not in (None, "code"):  # a markdown or raw cell: skipped by the run
            rows.append(f"--- {s.get('what')} · {s['type']}, not run")
            continue
        text = str(s.get("source", ""))
        cut = len(text) - MAX_SHOWN_SOURCE
        if cut > 0:
            text = text[:MAX_SHOWN_SOURCE] + f"\n… {cut} more characters (the sha256 covers all)"
        kind = f" · {s['type']}" if s.get("type") else ""
        rows.append(f"--- {s.get('what')}{kind} · sha256 {s.get('sha256')}\n{text.rstrip(chr(10))}")
    return "\n".join(rows)


class _CapturingStore:
    """The notebook store while a file call is held: ``commit`` on the capturing thread is
    recorded, everything else goes to the real store."""

    def __init__(self, inner: Any, ops: list[tuple[Any, ...]]) -> None:
        self.inner = inner
        self.ops = ops
        self.thread = threading.get_ident()

    def __getattr__(self, name: str) -> Any:  # what a host's store has beyond the role
        return getattr(self.inner, name)

    @property
    def live(self) -> bool:
        return bool(self.inner.live)

    def load(self, real: str) -> Any:
        return self.inner.load(real)

    def commit(
        self,
        notebooks: Sequence[tuple[str, Any]],
        files: Sequence[tuple[str, bytes]] = (),
        expected: Mapping[str, bytes | None] | None = None,
    ) -> None:
        if threading.get_ident() != self.thread:
            self.inner.commit(notebooks, files, expected)
            return
        self.ops.append(("notebooks", list(notebooks), list(files), dict(expected or {})))


def _current(real: str) -> State:
    """What ``real`` is now: a regular file's bytes, a ``Node``, or None when nothing is there."""
    try:
        st = os.lstat(real)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return Node("folder", _folder_sign(real))
    if stat.S_ISLNK(st.st_mode):
        return Node("symlink", os.readlink(real))
    if not stat.S_ISREG(st.st_mode):
        return Node("special", oct(stat.S_IFMT(st.st_mode)))
    try:
        return read_bytes(real)
    except FileNotFoundError:
        return None


def _folder_sign(real: str) -> str:
    """A digest of everything below folder ``real``: each entry's path, kind, size and
    modification time (symlinks not followed), up to ``FOLDER_SIGN_LIMIT`` entries."""
    digest = hashlib.sha256()
    count = 0
    stack = [real]
    while stack and count <= FOLDER_SIGN_LIMIT:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            digest.update(f"{folder}\0unreadable {exc.errno}\n".encode("utf-8", "surrogateescape"))
            continue
        for entry in entries:
            count += 1
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            rel = os.path.relpath(entry.path, real)
            digest.update(f"{rel}\0{stat.S_IFMT(st.st_mode)}\0{st.st_size}\0{st.st_mtime_ns}\n"
                          .encode("utf-8", "surrogateescape"))
            if stat.S_ISDIR(st.st_mode):
                stack.append(entry.path)
    digest.update(f"\0{count}".encode())
    return digest.hexdigest()


def _touched(ops: list[tuple[Any, ...]]) -> dict[str, bytes | object | None]:
    """Each real path the ops touch, with the bytes the tool verified it holds (when it said)."""
    out: dict[str, bytes | object | None] = {}

    def note(path: str, want: object = _ABSENT) -> None:
        if path not in out or out[path] is _ABSENT:
            out[path] = want if (want is None or isinstance(want, bytes)) else _ABSENT

    for op in ops:
        if op[0] == "write":
            for path, _data in op[1]:
                note(path, op[2].get(path, _ABSENT))
        elif op[0] == "remove":
            note(op[1], op[2])
        elif op[0] == "rename":
            note(op[1])
            note(op[2])
        elif op[0] in ("mkdir", "rmdir", "chmod"):
            note(op[1])
        elif op[0] == "symlink":
            note(op[2])
        elif op[0] == STEP:
            for path in op[1].paths():
                note(path)
        elif op[0] == "notebooks":
            for path, nb in op[1]:
                note(path, nb.raw.encode("utf-8") if isinstance(nb.raw, str) else _ABSENT)
            for path, _data in op[2]:
                note(path, op[3].get(path, _ABSENT))
    return out


def _hold_file(call: Call) -> ToolResult:
    ws, session = call.ws, call.session
    views_before = dict(session.views)
    ops: list[tuple[Any, ...]]
    with ws.file_lock:
        store = ws.notebooks
        with atomic.capturing() as ops:
            ws.notebooks = _CapturingStore(store, ops)
            try:
                result = call.tool.run(call)
            finally:
                ws.notebooks = store
        state: dict[str, State] = {}
        for path, want in _touched(ops).items():
            if _judged_by_store(store, path):
                continue  # its store's commit judges it against the live document on Accept
            state[path] = want if (want is None or isinstance(want, bytes)) else _current(path)
    planned_views = {k: v for k, v in session.views.items() if views_before.get(k) is not v}
    session.views.clear()
    session.views.update(views_before)  # nothing changed: the session saw nothing new
    if not ops:
        return result  # a refusal, an error, a repair preview: nothing would be written
    files = [f for f in result.details.get("files", []) if isinstance(f, dict)]
    # an undo / redo names what it takes back, so the change Accept records can be redone
    record = {k: result.details[k] for k in ("undoes", "undone") if result.details.get(k)}
    plan = CallPlan(call.tool.name, dict(call.args), FILE, ops=ops, state=state, files=files,
                    views=planned_views, result_text=result.text, record=record)
    return _propose(call, plan)


def steps(ws: Workspace, plan: CallPlan) -> list[str]:
    """The steps of a held file call other than writing a file's bytes (those are its diffs),
    as the person and the agent read them: the folders it makes or removes, its moves and
    deletes. Empty for a call that only writes."""
    out: list[str] = []
    for op in plan.ops:
        if op[0] == "mkdir":
            out.append(f"make folder {ws.jail.rel(op[1])}")
        elif op[0] == "rmdir":
            out.append(f"remove empty folder {ws.jail.rel(op[1])}")
        elif op[0] == "remove":
            out.append(f"delete {ws.jail.rel(op[1])}")
        elif op[0] == "rename":
            out.append(f"move {ws.jail.rel(op[1])} to {ws.jail.rel(op[2])}")
        elif op[0] == STEP:
            out.append(op[1].shown())
        elif op[0] == "symlink":
            out.append(f"make {ws.jail.rel(op[2])} a symlink to {op[1]}")
        elif op[0] == "chmod":
            out.append(f"set the permissions of {ws.jail.rel(op[1])} to {op[2]:o}")
    return out


def _judged_by_store(store: Any, real: str) -> bool:
    """Whether notebook ``real`` goes to a live document (a host's store with ``is_live``):
    the file's bytes never equal the room's, so Accept leaves the stale check to the store."""
    is_live = getattr(store, "is_live", None)
    return bool(callable(is_live) and is_live(real))


def _first_path(ws: Workspace, plan: CallPlan) -> tuple[str, str]:
    reals = list(plan.state)
    if plan.files:
        rel = str(plan.files[0].get("path", ""))
        same = [r for r in reals if ws.jail.rel(r) == rel.split("#", 1)[0]]
        return rel, (same or reals or [""])[0]
    return (ws.jail.rel(reals[0]), reals[0]) if reals else ("", "")


def command_of(plan: CallPlan) -> str:
    """What a held shell or eval call would run, as the person reads it: the tool's main
    argument alone when it is all the call sent (a ``bash`` command), else every argument in
    the order of the tool's parameters (``redefine``'s definition, target, reload and code),
    ``key=value``, or ``key:`` and its lines for text of several lines; then, under ``Runs
    exactly:``, each of its sources (a cell, a module's file) with its sha256 and text."""
    tool = current().tools.get(plan.tool)
    main = tool.main_arg if tool is not None else None
    if (main is not None and set(plan.args) == {main} and isinstance(plan.args[main], str)
            and not plan.sources):
        return str(plan.args[main])
    order = list((tool.parameters.get("properties") or {}) if tool is not None else {})
    keys = sorted(plan.args, key=lambda k: (order.index(k) if k in order else len(order), k))
    rows = []
    for key in keys:
        value = plan.args[key]
        if isinstance(value, str) and "\n" in value:
            rows.append(f"{key}:\n{value.rstrip(chr(10))}")
        else:
            rows.append(f"{key}={value if isinstance(value, str) else repr(value)}")
    if plan.sources:  # what Accept runs beyond the arguments: after them
        rows += ["Runs exactly:", _sources_text(plan.sources)]
    return "\n".join(rows)


def _diff_rows(change: Mapping[str, Any]) -> list[str]:
    before, after = change.get("before"), change.get("after")
    if not isinstance(after, str):
        return []
    rows = list(
        difflib.unified_diff(
            (before or "").splitlines(), after.splitlines(), "before", "after", lineterm="", n=1
        )
    )[2:]
    if len(rows) > MAX_SHOWN_DIFF:
        rows = [*rows[:MAX_SHOWN_DIFF], f"… {len(rows) - MAX_SHOWN_DIFF} more diff lines"]
    return rows


def _propose(call: Call, plan: CallPlan) -> ToolResult:
    ws, session = call.ws, call.session
    pid = f"p{next(_ids)}"
    rel, real = _first_path(ws, plan) if plan.action == FILE else ("", "")
    first = plan.files[0] if plan.files else {}
    files = [{**f, "status": "preview", "candidate": pid, "reason": "approval_review",
              "message": None} for f in plan.files]
    if plan.action == FILE and not files:
        files = [file_change(ws.jail.rel(p), None, None, "preview", candidate=pid,
                             reason="approval_review") for p in plan.state]
    plan.files = files
    proposal = Proposal(
        id=pid,
        kind=KIND,
        path=rel,
        real=real,
        session_id=session.id,
        session_label=session.label,
        before=str(first.get("before") or ""),
        after=str(first.get("after") or ""),
        reason="approval_review",
        message=f"{plan.tool} waits for a person's review",
        change=files[0] if files else {},
        plan=plan,
    )
    ws.hold(session, proposal, MAX_PENDING_CANDIDATES)
    wait = f"await_decision id='{pid}' timeout=60"
    planned = steps(ws, plan) if plan.action == FILE else []
    if plan.action == FILE:
        shown = [
            f"--- {f.get('path')}\n" + "\n".join(_diff_rows(f)) for f in files if f.get("path")
        ]
        if planned:
            shown.append("Steps: " + "; ".join(planned) + ".")
        text = (
            f"Not written: this {plan.tool} waits for a person's review "
            f"({_why(FILE, plan.tool)}). Proposal {pid} holds exactly this change to "
            f"{', '.join(str(f.get('path')) for f in files)}:\n" + "\n".join(shown) + "\n"
            f"Nothing was written, so the files and your anchors are as they were. Go on with "
            f"other work, or wait for the decision: {wait}."
        )
    elif plan.sources:
        text = (
            f"Not run: this {plan.tool} waits for a person's review "
            f"({_why(plan.action, plan.tool)}). Proposal {pid}:\n{command_of(plan)}\n"
            f"Nothing was run. Accept runs exactly the source shown (its sha256), and is refused "
            f"if it changes first. Go on with other work, or wait for the decision: {wait}."
        )
    else:
        text = (
            f"Not run: this {plan.tool} waits for a person's review "
            f"({_why(plan.action, plan.tool)}). Proposal {pid}: {command_of(plan)!r}. Nothing was "
            f"run. Go on with other work, or wait for the decision: {wait}."
        )
    return ToolResult.success(
        text,
        status="pending",
        proposal=pid,
        action=plan.action,
        files=files,
        command=command_of(plan) if plan.action != FILE else None,
        **({"sources": plan.sources} if plan.sources else {}),
        **({"steps": planned} if planned else {}),
    )


# -- deciding ----------------------------------------------------------------------------------
def _refusal(ws: Workspace, proposal: Proposal, by: str, message: str) -> ToolResult:
    decision = Decision(REFUSED, STALE, by, message)
    ws.decide(proposal, decision)
    return ToolResult.error(message, error=STALE, candidate=proposal.id,
                            resolved=decision.to_json(proposal.id))


def changed_file(plan: CallPlan) -> str | None:
    """The first real path that is not as it was when the proposal was made (None: all are)."""
    for real, want in plan.state.items():
        if _current(real) != want:
            return real
    return None


def changed_step(plan: CallPlan, proposal_id: str) -> str | None:
    """Why the first ``HeldStep`` of ``plan`` may not be taken now (its own refusal: a held
    ``git mv`` whose index entries moved since), or None when every one may."""
    for op in plan.ops:
        if op[0] == STEP:
            refused: str | None = op[1].refusal(proposal_id)
            if refused is not None:
                return refused
    return None


def owner_of(ws: Workspace, proposal: Proposal) -> Session:
    """The session an Accepted held call runs and is recorded in: its own while it is open.
    Once it closed (its agent disconnected — a chat's ``@kli undo`` closes its connection as
    soon as its undo is held), a stand-in: the default session's state (where what the call
    starts — a background job, a trace — lives, as before) under the closed session's id and
    label, so the change is filed as that agent's on the Timeline, not under "default"."""
    owner = ws.sessions.get(proposal.session_id)
    if owner is not None:
        return owner
    if not proposal.session_id:
        return ws.default_session
    return dataclasses.replace(ws.default_session, id=proposal.session_id,
                               label=proposal.session_label or proposal.session_id)


def accept(ws: Workspace, proposal: Proposal, by: str, session: Session | None = None) -> ToolResult:
    """Accept held call ``proposal``: write its captured bytes (a file call) or run it (a shell
    or eval call, in ``session``: the owner's, or the default one when it expired)."""
    plan: CallPlan = proposal.plan
    if plan.action != FILE:
        owner = session or owner_of(ws, proposal)
        with ws.file_lock:  # one Accept runs it: a second click, the widget, a magic wait out
            if ws.find_candidate(proposal.id) is not proposal:
                return _unknown(proposal.id, ws)
            if plan.running:
                return _running(proposal)
            plan.running = True
        try:
            problem = _sources_problem(ws, proposal, owner, by)
            if problem is not None:
                return _refusal(ws, proposal, by, problem)
            token = _APPROVED.set(plan)
            # The code an agent wrote stays the agent's after the person's Accept: a review
            # magic it runs (%kli accept, %kli approval auto) is refused as inside its call.
            agent = _AGENT_CALL.set(True)
            try:
                result = ws.call(plan.tool, plan.args, owner, source=by)
            finally:
                _AGENT_CALL.reset(agent)
                _APPROVED.reset(token)
        finally:
            plan.running = False
        if result.details.get("error") == STALE:  # a source changed while it ran: stopped there
            decision = Decision(REFUSED, STALE, by, result.text)
        else:
            change = result.details.get("change")
            decision = Decision(WRITTEN, ACCEPTED, by, result.text,
                                change=change if isinstance(change, str) else "")
        ws.decide(proposal, decision)
        return ToolResult(result.ok, f"Accepted proposal {proposal.id}: ran {plan.tool}.\n"
                          + result.text, {**result.details, "candidate": proposal.id,
                                          "resolved": decision.to_json(proposal.id)})
    rel = proposal.path or "the files"
    with ws.writing(list(plan.state), tool="accept", rel=rel):
        if ws.find_candidate(proposal.id) is None:
            return _unknown(proposal.id, ws)
        changed = changed_file(plan)
        if changed is not None:
            name = ws.jail.rel(changed)
            return _refusal(ws, proposal, by, (
                f"Accept refused: {name} changed since proposal {proposal.id} was made, so "
                f"writing it would overwrite that change. Nothing was written. Reject it, and "
                f"ask the agent to re-read {name} and make the change again."
            ))
        refused = changed_step(plan, proposal.id)
        if refused is not None:
            return _refusal(ws, proposal, by, refused)
        try:
            recorded = _recorded_apply(ws, plan, proposal, by)
        except atomic.Stale:
            return _refusal(ws, proposal, by, (
                f"Accept refused: a file of proposal {proposal.id} changed while it was being "
                "written; nothing was written. Reject it and ask for the change again."
            ))
        except OSError as exc:
            return ToolResult.error(
                f"Accept of proposal {proposal.id} failed writing {rel}: "
                f"{exc.strerror or exc}. Nothing was written; it is still pending, so the "
                "Accept can be retried.", error="io", candidate=proposal.id)
        except ToolError as exc:  # git refused the held git mv
            return ToolResult.error(
                f"Accept of proposal {proposal.id} failed: {exc.message} It is still pending, "
                "so the Accept can be retried.", error="io", candidate=proposal.id)
        written_for = ws.sessions.get(proposal.session_id)
        if written_for is not None:
            written_for.views.update(plan.views)  # what the agent would have been shown
        files = [{**f, "status": "written"} for f in plan.files]
        undo_id = recorded.details.get("change")
        text = (f"Accepted proposal {proposal.id}: wrote {plan.tool}'s change to "
                f"{', '.join(str(f.get('path')) for f in plan.files)} exactly as proposed.")
        decision = Decision(WRITTEN, ACCEPTED, by, text, change=undo_id or "")
        ws.decide(proposal, decision)
    return ToolResult.success(text, files=files, candidate=proposal.id,
                              resolved=decision.to_json(proposal.id),
                              **({"change": undo_id} if undo_id else {}))


def _running(proposal: Proposal) -> ToolResult:
    return ToolResult.error(
        f"Proposal {proposal.id} was accepted and its {proposal.plan.tool} is running now; it "
        "runs once. Its outcome follows when it ends.", error="running", candidate=proposal.id)


def _sources_problem(ws: Workspace, proposal: Proposal, owner: Session, by: str) -> str | None:
    """Why a held shell / eval call may not run now: what it would run (its tool's ``sources``,
    read again) is not what the proposal showed. None when it is, or the tool has none."""
    from kli.tools.core.registry import Call
    from kli.tools.core.result import ToolError

    plan: CallPlan = proposal.plan
    tool = ws.registry.tools.get(plan.tool)
    if tool is None or tool.sources is None:
        return None
    try:
        now = tool.sources(Call(ws=ws, session=owner, tool=tool, args=plan.args, source=by))
    except ToolError as exc:
        return (f"Accept refused: what proposal {proposal.id} would run can no longer be read "
                f"({exc.message}). Nothing was run. Reject it, and ask the agent to propose it "
                "again.")
    what = changed_source(plan.sources, now)
    if what is None:
        return None
    return (f"Accept refused: {what} changed since proposal {proposal.id} was made, so running "
            f"it would run something other than what was shown. Nothing was run. Reject it, and "
            f"ask the agent to propose it again if it is still wanted.")


def _recorded_apply(ws: Workspace, plan: CallPlan, proposal: Proposal, by: str) -> ToolResult:
    """``_apply``, recorded as one change of the undo timeline (``kli.tools.core.undo``) in
    the name of the proposal's tool and session."""
    from kli.tools.core import undo
    from kli.tools.core.registry import Call

    session = owner_of(ws, proposal)
    call = Call(ws=ws, session=session, tool=ws.registry.tools[plan.tool], args=plan.args,
                source=by)
    settings = ws.settings
    with undo.track(call, settings) as tracker:
        _apply(ws, plan)
    return undo.finish(call, tracker, ToolResult.success("", **plan.record), settings)


def _apply(ws: Workspace, plan: CallPlan) -> None:
    """Perform the captured ops, each file expected to hold its bytes at proposal time the
    first time it is touched (a folder or a symlink was compared by ``accept`` just before).
    Folders made here are removed again, when still empty, if a later op fails."""
    checked: set[str] = set()
    made: list[str] = []

    def want(path: str) -> dict[str, bytes | None]:
        if path in checked or path not in plan.state:
            return {}
        checked.add(path)
        state = plan.state[path]
        return {} if isinstance(state, Node) else {path: state}

    try:
        _perform(ws, plan, want, checked, made)
    except BaseException:
        for folder in reversed(made):
            try:
                atomic.rmdir(folder)
            except OSError:
                break  # no longer empty: what is in it was not made by this Accept alone
        raise


def _perform(ws: Workspace, plan: CallPlan, want: Any, checked: set[str],
             made: list[str]) -> None:
    for op in plan.ops:
        if op[0] == "write":
            expected: dict[str, bytes | None] = {}
            for path, _data in op[1]:
                expected.update(want(path))
            atomic.write_many(op[1], expected)
        elif op[0] == "remove":
            state = want(op[1]).get(op[1], _ABSENT)
            atomic.remove(op[1], state if isinstance(state, bytes) else atomic.ANY)
        elif op[0] == "rename":
            want(op[1])
            want(op[2])
            atomic.rename(op[1], op[2], replace=op[3])
        elif op[0] == "notebooks":
            expected = dict(op[3])
            for path, _data in op[2]:
                expected.update(want(path))
            for path, _nb in op[1]:
                checked.add(path)
            ws.notebooks.commit(op[1], op[2], expected)
        elif op[0] == "mkdir":
            want(op[1])
            new, missing = [], op[1]
            while not os.path.lexists(missing):  # each folder this makes, innermost first
                new.append(missing)
                missing = os.path.dirname(missing)
            atomic.makedirs(op[1])
            made.extend(reversed(new))  # in the order made: outermost first
        elif op[0] == "rmdir":
            want(op[1])
            atomic.rmdir(op[1])
        elif op[0] == "symlink":
            want(op[2])
            atomic.symlink(op[1], op[2])
        elif op[0] == "chmod":
            want(op[1])
            atomic.chmod(op[1], op[2])
        elif op[0] == STEP:
            for path in op[1].paths():
                want(path)
            op[1].take()


def _unknown(pid: str, ws: Workspace | None = None) -> ToolResult:
    """The answer for a proposal id that is not pending: what became of it when ``ws``
    remembers its decision (a Reject that waited while an Accept ran it), else the error for
    an unknown candidate."""
    decided = ws.decided.get(pid) if ws is not None else None
    if decided is not None and decided.decision is not None:
        return ToolResult.error(
            f"{pid} is no longer pending, so nothing was done now. {outcome_text(decided)}",
            error=UNKNOWN, candidate=pid, status=decided.decision.code)
    error = unknown(pid, "Nothing was written or run.")
    return ToolResult.error(error.message, **error.details)


def clean_note(note: Any) -> str:
    return note.strip()[:MAX_NOTE] if isinstance(note, str) else ""


def reject(ws: Workspace, proposal_id: str, by: str, note: str = "") -> ToolResult:
    """Reject any pending proposal (a held call or a repair candidate) from any host (the UI,
    the widget, a magic): ``edit`` with ``reject_repair`` through ``Workspace.call`` in the
    proposal's session (the default one once it expired), so the reject is one call event, as
    an accept is, and one ``resolved``."""
    if by_agent():
        return _not_a_person("reject", proposal_id)
    proposal = ws.find_candidate(proposal_id)
    session = ws.sessions.get(proposal.session_id) if proposal is not None else None
    args: dict[str, Any] = {"reject_repair": proposal_id}
    if clean_note(note):
        args["note"] = clean_note(note)
    return ws.call(preview_tool(ws), args, session or ws.default_session, source=by)


def reject_call(call: Call, proposal_id: str) -> ToolResult:
    """``edit`` with ``reject_repair``: reject pending proposal ``proposal_id``; nothing is
    written or run. ``note`` reaches the agent (``await_decision``, and its session's next
    result). An agent (``HELD_SOURCE``) may withdraw only its own session's proposals."""
    ws, by = call.ws, call.source
    note = clean_note(call.args.get("note"))
    with ws.file_lock:
        proposal = ws.find_candidate(proposal_id)
        if proposal is None:
            return _unknown(proposal_id, ws)
        if isinstance(proposal.plan, CallPlan) and proposal.plan.running:
            return _running(proposal)
        if by == HELD_SOURCE and proposal.session_id != call.session.id:
            return ToolResult.error(
                f"reject_repair refused: proposal {proposal_id} belongs to another session; "
                "a person decides it. Nothing was changed.",
                error="not_yours", candidate=proposal_id)
        what = "call" if proposal.kind == KIND else "repair candidate"
        text = f"Rejected {what} {proposal_id}" + (f" for {proposal.path}" if proposal.path else "")
        text += "; nothing was written or run." + (f" Note from the person: {note}" if note else "")
        decision = Decision(REJECTED, REJECTED_ON_REQUEST, by, text, note)
        ws.decide(proposal, decision)
    return ToolResult.success(text, candidate=proposal_id, path=proposal.path, status=REJECTED,
                              resolved=decision.to_json(proposal_id))


def matching(ws: Workspace, session: str | None = None, path: str | None = None) -> list[Proposal]:
    """Pending proposals (every kind, expired ones too) of one session and/or one file."""
    out = []
    for p in ws.pending_candidates():
        if session is not None and p.session_id != session:
            continue
        if path is not None and not _is_about(p, path):
            continue
        out.append(p)
    return out


def _is_about(proposal: Proposal, path: str) -> bool:
    if proposal.path == path or proposal.path.split("#", 1)[0] == path:
        return True
    plan = proposal.plan
    return isinstance(plan, CallPlan) and any(
        str(f.get("path", "")).split("#", 1)[0] == path for f in plan.files
    )


# -- telling the agent --------------------------------------------------------------------------
def outcome_text(proposal: Proposal) -> str:
    d = proposal.decision
    if d is None:
        return f"Proposal {proposal.id} is still pending."
    verb = {WRITTEN: "accepted", REJECTED: "rejected", REFUSED: "refused"}.get(d.code, d.code)
    if d.reason == "discarded":
        verb = "discarded"
    who = "a person" if d.by in ("ui", "widget", "magic") else d.by
    text = f"Proposal {proposal.id} ({proposal.plan.tool if isinstance(proposal.plan, CallPlan) else proposal.kind}) was {verb} by {who}."
    if d.note:
        text += f" Their note: {d.note}"
    if d.code != REJECTED and d.text:
        text += "\n" + d.text
    return text


def notify(ws: Workspace, proposal: Proposal) -> None:
    """Keep the outcome of a decided proposal for its owner's next result (a held call, or any
    proposal decided with a note)."""
    d = proposal.decision
    if d is None or (proposal.kind != KIND and not d.note):
        return
    owner = ws.sessions.get(proposal.session_id)
    if owner is None:
        return
    owner.state.setdefault("decisions", {})[proposal.id] = outcome_text(proposal)


def deliver(session: Session, result: ToolResult, tool: str = "") -> ToolResult:
    """``result`` with the outcomes of the session's decided proposals it was not yet told.

    Each outcome is told once: by ``await_decision`` of that proposal (``take_notice``), or
    else in the session's next result of another tool. A waiting tool's result (``tool``: an
    ``await_decision`` of another proposal) carries none: an agent holding several proposals
    awaits each in turn, and was told p2 inside p1's wait, then again by its wait of p2."""
    entry = current().tools.get(tool)
    if entry is not None and entry.waits:
        return result
    told: dict[str, str] = session.state.pop("decisions", {}) or {}
    if not told:
        return result
    text = result.text + "\n\n[review] " + "\n[review] ".join(told.values())
    return dataclasses.replace(result, text=text,  # keeps its images
                               details={**result.details, "decisions": sorted(told)})


def take_notice(session: Session, proposal_id: str) -> None:
    """The agent was told this outcome (``await_decision``): not again in its next result."""
    told = session.state.get("decisions")
    if told:
        told.pop(proposal_id, None)


# -- any proposal, one at a time or in bulk -------------------------------------------------------
def accept_any(ws: Workspace, proposal_id: str, by: str) -> ToolResult:
    """Accept a pending proposal of any kind: a held call (``accept``), or a repair candidate
    (``edit`` with ``accept_repair`` in its session; the default one once it expired)."""
    if by_agent():
        return _not_a_person("accept", proposal_id)
    proposal = ws.find_candidate(proposal_id)
    if proposal is None:
        return _unknown(proposal_id, ws)
    if proposal.kind == KIND:
        return accept(ws, proposal, by)
    session = ws.sessions.get(proposal.session_id, ws.default_session)
    with ws.file_lock:
        return ws.call(preview_tool(ws), {"accept_repair": proposal.id, "path": proposal.path},
                       session, source=by)


BULK_ACTIONS = ("accept", "reject")


def bulk(ws: Workspace, action: str, by: str, *, session: str | None = None,
         path: str | None = None, note: str = "") -> ToolResult:
    """Accept or reject every pending proposal of one session, of one file, or all (both None),
    oldest first. Each is decided on its own (one ``resolved`` each); an Accept refused leaves
    the others to go on. The result lists each outcome."""
    if action not in BULK_ACTIONS:
        return ToolResult.error(f"bulk action must be accept or reject, not {action!r}.",
                                error="bad_arguments")
    chosen = sorted(matching(ws, session, path), key=lambda p: p.created)
    rows: list[dict[str, Any]] = []
    for p in chosen:
        r = accept_any(ws, p.id, by) if action == "accept" else reject(ws, p.id, by, note)
        rows.append({"candidate": p.id, "ok": r.ok, "text": r.text})
    done = sum(1 for r in rows if r["ok"])
    scope = " and ".join(
        [*([f"session {session}"] if session else []), *([f"file {path}"] if path else [])]
    ) or "every session"
    verb = "Accepted" if action == "accept" else "Rejected"
    text = f"{verb} {done} of {len(rows)} pending proposals of {scope}."
    failed = [r for r in rows if not r["ok"]]
    if failed:
        text += " Not done: " + "; ".join(f"{r['candidate']}: {r['text']}" for r in failed)
    return ToolResult(not failed, text, {"decided": rows})
