"""Every change made through the tools, recorded, shown, and taken back: the undo timeline.

``Workspace._call`` wraps each call of a mutating tool (``Tool.mutates``: edit, write, cells,
the ``ws_*`` writers, ``bash``, ``eval``…) and of ``ws_shell`` in ``track``:

- the atomic writers note each path's bytes just before they change it
  (``atomic.observing``);
- for a tool whose changes are detected (``Tool.detects_changes``: ``bash``, ``ws_shell``,
  ``eval``), the tree is snapshot before and after
  (``kli.tools.core.snapshot``, bounded) and the files the call created, modified or deleted
  are added to its result as file changes (``details["files"]``, each ``detected: true``), with
  ``details["detection"]`` saying whether the walk was complete. The setting
  ``change_detection`` (default true) turns the snapshot off.

- a live notebook store (the kernel's, with jupyter-collaboration) notes each notebook it
  changed in a live Y document, before and after (``live_notes``).

After the call each changed file becomes one checkpoint in the one store
(``kli.tools.core.checkpoints``) with the call's change id: the bytes before and the hash
after. ``details["change"]`` names the id. The timeline is those checkpoints, grouped by change,
per session.

``undo`` puts a change's bytes before back — refused, naming the file and touching nothing,
when any of its files is no longer what the change left (a person edited it), unless
``force``. An undo is a call like any other, so it is itself a recorded change (``undoes`` names
what it took back), and ``redo`` is the undo of that undo. A live notebook's change (a
``checkpoints.LIVE`` checkpoint) is taken back cell by cell through the notebook store (the
live document when it is open there: ``_revert_cells``), refused naming the notebook and the
cell when a cell it touched changed since.

A background job (``bash`` with ``run_in_background``) is watched from the tree its start left
until it ends (``watch`` / ``ended``, started by ``kli.tools.process.jobs`` through
``on_finish``); its changes are one change of its session then.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import hashlib
import itertools
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kli.tools.core import (
    approval,
    atomic,
    checkpoints,
    interrupts,
    participants,
    serverfiles,
    snapshot,
)
from kli.tools.core.cellids import source_text, stand_in_ids
from kli.tools.core.changes import count_changes, file_change
from kli.tools.core.checkpoints import LIVE, Checkpoint
from kli.tools.core.registry import Call
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.settings import is_control_name
from kli.tools.core.textfile import NotText, decode, read_bytes

if TYPE_CHECKING:
    from kli.tools.core.workspace import Workspace

LIST_MAX = 50  # changes listed per call of ``changes``
_ids = itertools.count(1)
_EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()  # a part keeps no bytes here


@dataclass
class Tracker:
    seen: dict[str, Any]
    before: snapshot.Tree | None
    after: snapshot.Tree | None = None  # the tree after the call (a background job's start)
    live: list[tuple[str, Any, Any]] = field(default_factory=list)  # ``live_notes``
    # Participants' tokens (``participants.begin_all``), the parts added while the call ran
    # (an undo's own restore), and what failed to record.
    tokens: list[tuple[Any, Any]] = field(default_factory=list)
    parts: list[participants.Part] = field(default_factory=list)
    part_errors: list[str] = field(default_factory=list)


def _enabled(settings: dict[str, Any], name: str, default: bool) -> bool:
    value = settings.get(name, default)
    if not isinstance(value, bool):
        raise ToolError(f"setting {name!r} must be true or false, got {value!r}; fix .kli/settings.json.",
                        error="bad_settings")
    return value


def _number(settings: dict[str, Any], name: str, default: float) -> float:
    value = settings.get(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ToolError(f"setting {name!r} must be a positive number, got {value!r}; fix "
                        ".kli/settings.json.", error="bad_settings")
    return float(value)


def _cache(ws: Workspace) -> snapshot.Cache:
    cache = getattr(ws, "_snapshot_cache", None)
    if cache is None:
        cache = snapshot.Cache()
        ws._snapshot_cache = cache  # type: ignore[attr-defined]
    return cache


_live = threading.local()


def live_notes() -> list[tuple[str, Any, Any]] | None:
    """Where a live notebook store notes ``(real path, document before, document after)`` of
    each notebook it changed in a live (Y) document while a recorded call runs on this thread
    (``track``); None when no call is recorded here. The documents are nbformat dicts."""
    notes: list[tuple[str, Any, Any]] | None = getattr(_live, "notes", None)
    return notes


@contextlib.contextmanager
def track(call: Call, settings: dict[str, Any]) -> Iterator[Tracker]:
    """Observe the writes of ``call`` (and snapshot the tree for a tool that ``detects_changes``), and the
    live notebook documents it changes (``live_notes``)."""
    before = None
    if call.tool.detects_changes and _enabled(settings, "change_detection", True):
        before = snapshot.take(call.ws.root, _cache(call.ws))
    previous = getattr(_live, "notes", None)
    tracker = Tracker({}, before)
    _live.notes = tracker.live
    try:
        tracker.tokens, tracker.part_errors = participants.begin_all(call, settings)
        with atomic.observing() as seen, participants.collecting(tracker.parts):
            tracker.seen = seen
            yield tracker
    finally:
        _live.notes = previous


def _under_root(ws: Workspace, real: str) -> str | None:
    rel = ws.jail.rel(real)
    if rel == "." or rel.startswith("../") or rel == "..":
        return None
    if any(is_control_name(part) for part in rel.split("/")[:-1]):
        return None  # .kli/ state (scratch captures, checkpoints): the harness's, not a change
    if atomic.is_temporary(os.path.basename(rel)):
        return None
    return rel


def _state(real: str) -> tuple[bool, str | None]:
    """Whether ``real`` exists as a file now, and the sha256 of its bytes."""
    try:
        data = read_bytes(real)
    except FileNotFoundError:
        return False, None
    except OSError:
        return os.path.lexists(real), None
    return True, hashlib.sha256(data).hexdigest()


def _text(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return decode(data)
    except NotText:
        return None


def finish(call: Call, tracker: Tracker, result: ToolResult, settings: dict[str, Any]) -> ToolResult:
    """Record what ``call`` changed as one change of the timeline; add the detected files and
    the change id to ``result``. Never raises: a recording that fails is said in the details."""
    try:
        with interrupts.recording():  # the store's own writes are not the call's commits
            done = _finish(call, tracker, result, settings)
        for hook in list(_finish_hooks):
            try:
                hook(call, tracker, done, settings)
            except Exception as exc:  # a watcher must never break the call it watches
                done = ToolResult(done.ok, done.text, {**done.details,
                                  "watch_error": f"{type(exc).__name__}: {exc}"})
        return done
    except ToolError as exc:
        return ToolResult(result.ok, result.text, {**result.details, "change_error": exc.message})
    except OSError as exc:
        return ToolResult(result.ok, result.text,
                          {**result.details, "change_error": f"not recorded: {exc.strerror or exc}"})


def _finish(call: Call, tracker: Tracker, result: ToolResult, settings: dict[str, Any]) -> ToolResult:
    ws = call.ws
    befores: dict[str, Any] = {p: b for p, b in tracker.seen.items() if not p.startswith("\0")}
    inner: set[str] = tracker.seen.get("\0inner", set())
    detected: list[tuple[str, str, bytes | None]] = []
    details = dict(result.details)
    if tracker.before is not None:
        if result.details.get("background"):
            # A background job's start: every file the command changes is the job's, from the
            # tree before this call (a walk here could catch a file the job is still writing,
            # and split one change between the start and the job).
            tracker.after = tracker.before
        else:
            cache = _cache(ws)
            after = snapshot.take(ws.root)
            tracker.after = after
            detected = [d for d in snapshot.compare(tracker.before, after, cache)
                        if d[0] not in befores and d[0] not in inner
                        and not _live_file(ws, d[0]) and not _server_file(ws, d[0])]
            for path, kind, _b in detected:
                if kind == "deleted":
                    cache.drop(path)
            details["detection"] = _detection(tracker.before, after)
    parts, errors = participants.end_all(call, tracker.tokens, settings)
    if tracker.part_errors or errors:
        details["part_errors"] = tracker.part_errors + errors
    return _record(call, befores, detected, result, details, settings, "this call",
                   _live_changes(tracker.live), [*parts, *tracker.parts])


def _live_changes(notes: list[tuple[str, Any, Any]]) -> dict[str, tuple[Any, Any]]:
    """Each live notebook's document before the call's first change of it and after its last."""
    out: dict[str, tuple[Any, Any]] = {}
    for real, before, after in notes:
        out[real] = (out[real][0] if real in out else before, after)
    return out


def _cell_ids(cells: Any) -> list[str]:
    return stand_in_ids(cells if isinstance(cells, list) else [])


def touched_cells(before: Any, after: Any) -> list[str]:
    """The ids of the cells a change of a notebook document inserted, deleted, changed or
    moved, in the order of the document after it (then the deleted ones)."""
    b_cells, a_cells = before.get("cells") or [], after.get("cells") or []
    b_ids, a_ids = _cell_ids(b_cells), _cell_ids(a_cells)
    b_at = {cid: i for i, cid in enumerate(b_ids)}
    a_at = {cid: i for i, cid in enumerate(a_ids)}
    moved = set(_moved(b_ids, a_ids))
    out = [cid for cid in a_ids if cid not in b_at or cid in moved
           or a_cells[a_at[cid]] != b_cells[b_at[cid]]]
    return out + [cid for cid in b_ids if cid not in a_at]


def _moved(b_ids: list[str], a_ids: list[str]) -> list[str]:
    """The cells of both whose order changed (those outside the longest matching runs)."""
    a_set, b_set = set(a_ids), set(b_ids)
    common_b = [cid for cid in b_ids if cid in a_set]
    common_a = [cid for cid in a_ids if cid in b_set]
    blocks = difflib.SequenceMatcher(None, common_b, common_a, autojunk=False).get_matching_blocks()
    kept = {common_a[m.b + k] for m in blocks for k in range(m.size)}
    return [cid for cid in common_b if cid not in kept]


def _live_file(ws: Workspace, real: str) -> bool:
    """Whether ``real`` is the file of a notebook this kernel changes in its live document (a
    joined room, or a tab's open model: the store's ``is_live``): the Jupyter server or the tab
    writes that file on its own (its save), so the file
    changing is not the call's change; the document's changes are recorded themselves."""
    is_live = getattr(ws.notebooks, "is_live", None)
    return real.endswith(".ipynb") and callable(is_live) and bool(is_live(real))


def _server_file(ws: Workspace, real: str) -> bool:
    """Whether ``real`` is a file a Jupyter server or its extensions write on their own (a
    chat, the collaboration store, checkpoints, an open notebook's autosave:
    ``serverfiles``): never a call's change."""
    return serverfiles.owner(ws, real, ws.jail.rel(real)) is not None


def _detection(before: snapshot.Tree, after: snapshot.Tree) -> dict[str, Any]:
    return {
        "complete": before.complete and after.complete,
        "reason": before.reason or after.reason,
        "files_watched": len(after.files),
        "seconds": round(before.seconds + after.seconds, 4),
        **snapshot.bounds(),
    }


def _record(call: Call, befores: dict[str, Any], detected: list[tuple[str, str, bytes | None]],
            result: ToolResult, details: dict[str, Any], settings: dict[str, Any],
            who: str, live: dict[str, tuple[Any, Any]] | None = None,
            parts: list[participants.Part] | None = None) -> ToolResult:
    """Record ``befores`` (each real path's bytes before the change), the ``detected`` files
    and the ``live`` notebook documents (before, after) as one change of ``call``; ``details``
    (the result's, plus the detection) get the detected files and the change id, the text a
    line naming them (``who`` changed files)."""
    ws = call.ws
    record = _enabled(settings, "file_checkpoints", True)
    for path, kind, data in detected:
        befores[path] = data if data is not None else (None if kind == "created" else atomic.NOT_KEPT)
    entries: list[tuple[str, str, Any]] = []
    for real, data in befores.items():
        rel = _under_root(ws, real)
        if rel is not None:
            entries.append((real, rel, data))
    documents = [(real, rel, pair) for real, pair in (live or {}).items()
                 if (rel := _under_root(ws, real)) is not None and pair[0] != pair[1]]
    if (not entries and not documents and not parts) or not record:
        if entries and detected:
            details["files"] = [*(details.get("files") or []), *(
                file_change(ws.jail.rel(p), _text(b) if k != "created" else None, None if k == "deleted"
                            else _after_text(p), "deleted" if k == "deleted" else "written",
                            detected=True, change_kind=k) for p, k, b in detected)]
        return ToolResult(result.ok, result.text, details) if details != result.details else result
    change_id = f"ch-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.getpid() % 100000}-{next(_ids)}"
    undoes = details.get("undoes")
    undone = details.get("undone")
    keep = int(_number(settings, "checkpoint_keep", checkpoints.DEFAULT_KEEP))
    budget = _number(settings, "checkpoint_budget_mb", checkpoints.DEFAULT_BUDGET_MB)
    recorded: list[str] = []
    now = time.time()
    for real, rel, data in entries:
        exists, digest = _state(real)
        kept = data is not atomic.NOT_KEPT
        existed = data is not None
        raw = data if isinstance(data, bytes) else b""
        if existed and kept and exists and digest == hashlib.sha256(raw).hexdigest():
            continue  # written with the same bytes: no change
        if not existed and not exists:
            continue
        added, removed = _counts_now(raw if existed else b"", kept, real, exists)
        cp = Checkpoint(
            id=checkpoints.new_id(), path=rel, reason="change", tool=call.tool.name,
            session=call.session.id, time=now, size=len(raw),
            sha256=hashlib.sha256(raw).hexdigest(), mode=_mode(real), change=change_id,
            session_label=call.session.label, existed=existed, kept=kept,
            after_exists=exists, after_sha256=digest,
            undoes=undoes if isinstance(undoes, str) else None,
            undone=[str(u) for u in undone] if isinstance(undone, list) else None,
            notebook=ws.notebook, added=added, removed=removed,
        )
        checkpoints.save(ws.root, cp, raw, keep, budget)
        recorded.append(rel)
    for _real, rel, (doc_before, doc_after) in documents:
        payload = json.dumps({"before": doc_before, "after": doc_after}).encode()
        cell_counts = _cell_changes(rel, doc_before, doc_after)
        kept = len(payload) <= atomic.OBSERVE_MAX_BYTES
        raw = payload if kept else b""
        cp = Checkpoint(
            id=checkpoints.new_id(), path=rel, reason="change", tool=call.tool.name,
            session=call.session.id, time=now, size=len(raw),
            sha256=hashlib.sha256(raw).hexdigest(), mode=0o644, kind=LIVE, change=change_id,
            session_label=call.session.label, kept=kept,
            after_sha256=hashlib.sha256(json.dumps(doc_after).encode()).hexdigest(),
            undoes=undoes if isinstance(undoes, str) else None,
            undone=[str(u) for u in undone] if isinstance(undone, list) else None,
            cells=touched_cells(doc_before, doc_after), notebook=ws.notebook,
            added=sum(c["added"] for c in cell_counts), removed=sum(c["removed"] for c in cell_counts),
        )
        checkpoints.save(ws.root, cp, raw, keep, budget)
        recorded.append(rel)
    for part in parts or []:  # the image: its record and its entry stay in this process's memory
        cp = Checkpoint(
            id=checkpoints.new_id(), path=part.path, reason="change", tool=call.tool.name,
            session=call.session.id, time=now, size=0, sha256=_EMPTY_SHA256,
            mode=0o644, kind=part.kind, change=change_id, session_label=call.session.label,
            undoes=undoes if isinstance(undoes, str) else None,
            undone=[str(u) for u in undone] if isinstance(undone, list) else None,
            notebook=ws.notebook, part=part.summary,
        )
        participants.keep(ws.root, cp, keep)
        part.bind(change_id)
        recorded.append(part.path)
    if not recorded:
        return ToolResult(result.ok, result.text, details) if details != result.details else result
    details["change"] = change_id
    text = result.text
    if parts:
        details["image"] = [p.summary for p in parts]
        if "undoes" not in details:
            text += "".join(f"\n[{p.text} — change {change_id}]" for p in parts if p.text)
    if detected:
        files = list(details.get("files") or [])
        names: list[str] = []
        for path, kind, data in detected:
            rel = ws.jail.rel(path)
            if rel not in recorded:
                continue
            names.append(f"{kind} {rel}")
            after_text = _after_text(path) if kind != "deleted" else None
            shown = data is not None or kind == "created"
            files.append(file_change(
                rel, _text(data) if kind != "created" else None,
                after_text if kind != "deleted" else None,
                "deleted" if kind == "deleted" else "written",
                detected=True, change_kind=kind, shown=shown and (after_text is not None or kind == "deleted"),
            ))
        details["files"] = files
        if names:
            text += (f"\n[{who} changed files: {', '.join(names[:20])}"
                     f"{' …' if len(names) > 20 else ''} — change {change_id}; undo it with "
                     f"undo change={change_id}]")
    return ToolResult(result.ok, text, details)


def _counts_now(before: bytes, kept: bool, real: str, exists: bool) -> tuple[int | None, int | None]:
    """Lines a change added and removed, counted as it is recorded: ``before`` (its bytes
    before; "" for a file it created) against the file now. (None, None) when a text is not
    known (the bytes before not kept, a file not text or unreadable)."""
    if not kept:
        return None, None
    old = _text(before)
    new: str | None = ""
    if exists:
        try:
            new = _text(read_bytes(real, limit=atomic.OBSERVE_MAX_BYTES))
        except OSError:  # gone, unreadable, or larger than a change keeps
            new = None
    if old is None or new is None:
        return None, None
    return count_changes(old, new)


def _after_text(real: str) -> str | None:
    try:
        return _text(read_bytes(real, limit=snapshot.KEEP_FILE_BYTES))
    except OSError:
        return None


def _mode(real: str) -> int:
    try:
        return os.stat(real).st_mode & 0o7777
    except OSError:
        return 0o644


# -- watches: changes over a stretch of time after a call (a background job) ----------------
FinishHook = Callable[["Call", "Tracker", ToolResult, dict[str, Any]], None]
_finish_hooks: list[FinishHook] = []


def on_finish(hook: FinishHook) -> None:
    """Run ``hook(call, tracker, result, settings)`` after every recorded call (``finish``):
    how ``kli.tools.process.jobs`` starts watching the background job a ``bash`` started
    (``watch``). A hook that fails is said in the result's details, never raised."""
    if hook not in _finish_hooks:
        _finish_hooks.append(hook)


@dataclass
class Watch:
    """Changes under the root from the tree a call left (``tracker.after``; for a background
    job's start, the tree before it) until ``ended``.
    ``cache`` is the watch's own copy of the kept bytes (``snapshot.Cache``: the bytes are
    shared with the workspace's, so a copy costs only what later calls replace, at most
    ``KEEP_TOTAL_BYTES``)."""

    call: Call
    before: snapshot.Tree
    cache: snapshot.Cache
    started: float
    settings: dict[str, Any]
    lock: threading.Lock = field(default_factory=threading.Lock)
    closed: bool = False  # ``ended`` ran: nothing more is recorded
    mine: set[str] = field(default_factory=set)  # the changes this watch recorded


def watch(call: Call, tracker: Tracker, settings: dict[str, Any]) -> Watch | None:
    """A watch from the tree ``call`` left; None when its changes were not detected (change
    detection off, or not a detected tool)."""
    if tracker.after is None:
        return None
    shared = _cache(call.ws)
    own = snapshot.Cache(dict(shared.data), shared.total)
    for path, key in tracker.after.files.items():  # files the call itself changed: bytes now
        if own.bytes_of(path, key) is None:
            own.keep(path, key)
    return Watch(call, tracker.after, own, time.time(), settings)


def _recorded_since(root: str, started: float, mine: set[str]) -> dict[str, Checkpoint]:
    """The newest checkpoint of each path recorded since ``started`` by a change not in
    ``mine``."""
    found: dict[str, Checkpoint] = {}
    for cp in checkpoints.list_all(root):  # newest first
        if cp.change is not None and cp.time >= started and cp.change not in mine:
            found.setdefault(cp.path, cp)
    return found


def ended(w: Watch, *, ok: bool, text: str, details: dict[str, Any], who: str,
          args: dict[str, Any], seconds: float) -> ToolResult:
    """The watched stretch ended: what changed since the watch began (or since its last
    ``so_far``) becomes one change of the call's session (``_stretch``); the watch closes."""
    with w.lock:
        w.closed = True
        return _stretch(w, ok, text, details, who, args, seconds)


def so_far(w: Watch, *, ok: bool, text: str, details: dict[str, Any], who: str,
           args: dict[str, Any], seconds: float) -> ToolResult | None:
    """While the stretch goes on: what changed since the watch began (or since the last call
    of this) becomes one change now, and the watch goes on from the tree now. None when the
    watch has closed or nothing changed."""
    with w.lock:
        if w.closed:
            return None
        done = _stretch(w, ok, text, details, who, args, seconds, only_changes=True)
        return done if done.details.get("files") else None


def _stretch(w: Watch, ok: bool, text: str, details: dict[str, Any], who: str,
             args: dict[str, Any], seconds: float, only_changes: bool = False) -> ToolResult:
    """The files created, modified or deleted under the root since ``w.before`` (the tree now
    against it), recorded as one change of the call's session; the result (``text`` with the
    line naming them, ``details`` with the files, the detection and the change id) is also
    reported as a ``call`` event of the call's tool with ``args`` (with ``only_changes``, only
    when something changed). A file another recorded change touched meanwhile and left as it
    is now is that change's; one changed after it is this one's, with its bytes before unknown
    (shown without them; not undoable). The watch then starts from the tree now. Never raises:
    a recording that fails is said in the details."""
    call, ws = w.call, w.call.ws
    details = dict(details)
    now = time.time()
    try:
        with interrupts.recording():
            after = snapshot.take(ws.root)
            explained = _recorded_since(ws.root, w.started, w.mine)
            detected: list[tuple[str, str, bytes | None]] = []
            for path, kind, data in snapshot.compare(w.before, after, w.cache):
                rel = _under_root(ws, path)
                if rel is None or _live_file(ws, path) or _server_file(ws, path):
                    continue
                other = explained.get(rel)
                if other is None:
                    detected.append((path, kind, data))
                    continue
                exists, digest = _state(path)
                if exists == other.after_exists and (not exists or digest == other.after_sha256):
                    continue  # as the other change left it
                detected.append((path, "modified" if exists else "deleted", None))
            details["detection"] = _detection(w.before, after)
            done = _record(call, {}, detected, ToolResult(ok, text, details), dict(details),
                           w.settings, who)
            for path, key in after.files.items():  # the next stretch starts from the bytes now
                if w.before.files.get(path) != key:
                    w.cache.keep(path, key)
            for path in w.before.files.keys() - after.files.keys():
                w.cache.drop(path)
            w.before, w.started = after, now
            if "change" in done.details:
                w.mine.add(str(done.details["change"]))
    except (ToolError, OSError) as exc:
        reason = exc.message if isinstance(exc, ToolError) else f"not recorded: {exc.strerror or exc}"
        done = ToolResult(ok, text, {**details, "change_error": reason})
    if only_changes and not done.details.get("files"):
        return done
    ws.emit_call(call.tool.name, args, call.session, call.source, done, seconds)
    return done


# -- the timeline ------------------------------------------------------------------------------
@dataclass
class Change:
    id: str
    tool: str
    session: str
    session_label: str
    time: float
    files: list[Checkpoint]
    undoes: str | None
    undone: list[str] = field(default_factory=list)  # what this change (an undo) took back
    notebook: str | None = None  # the notebook whose kernel made it (``Workspace.notebook``)

    def to_json(self, root: str | None = None, taken_back: dict[str, str] | None = None,
                later: dict[str, list[Checkpoint]] | None = None) -> dict[str, Any]:
        """The change as the ``changes`` tool and the panel's timeline show it. With ``root``
        each file has its ``added`` / ``removed`` lines (``file_counts``; absent when a text is
        not known); ``undone_by``: the undo that took it back and still stands (``undone_by``
        of ``timeline``)."""
        files = []
        for f in self.files:
            entry: dict[str, Any] = {"path": f.path, "existed": f.existed, "kept": f.kept,
                                     "after_exists": f.after_exists, "checkpoint": f.id}
            if f.added is not None and f.removed is not None:  # counted when recorded
                entry["added"], entry["removed"] = f.added, f.removed
            if f.kind == LIVE:  # a live notebook's change: the cells (counted over their sources)
                entry.update(kind=LIVE, cells=list(f.cells or []))
            elif f.part is not None:  # a participant's part (the image): what it recorded
                entry.update(kind=f.kind, part=f.part)
            elif root is not None and "added" not in entry:
                counts = file_counts(root, f, (later or {}).get(f.path, []))
                if counts is not None:
                    entry["added"], entry["removed"] = counts
            files.append(entry)
        return {"id": self.id, "tool": self.tool, "session": self.session,
                "session_label": self.session_label, "notebook": self.notebook,
                "time": self.time, "undoes": self.undoes,
                "undone": list(self.undone), "undone_by": (taken_back or {}).get(self.id),
                "files": files}

    def line(self) -> str:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.time))
        what = ", ".join(
            (f"{f.path}#{','.join(f.cells or [])} (live)" if f.kind == LIVE else
             ("created " if not f.existed else "deleted " if not f.after_exists else "") + f.path)
            for f in self.files[:6]) + (" …" if len(self.files) > 6 else "")
        extra = f" (undoes {', '.join(self.undone[:3])}{' …' if len(self.undone) > 3 else ''})" \
            if self.undone else ""
        return f"{self.id}  {stamp}  {self.who()}  {self.tool}: {what}{extra}"

    def who(self) -> str:
        """The session as ``changes`` names it: its label, then its id (what ``undo session=``
        takes when a label names several) and the notebook whose kernel it ran in."""
        where = ", ".join(filter(None, [self.session, self.notebook]))
        return f"{self.session_label} ({where})" if self.session_label else where


def timeline(root: str) -> list[Change]:
    """Every recorded change still in the store (and the participants' parts this process
    keeps: ``participants.kept``), newest first."""
    changes: dict[str, Change] = {}
    every = [*checkpoints.list_all(root), *participants.kept(root)]
    every.sort(key=lambda c: (c.time, c.id), reverse=True)
    for cp in every:
        if cp.change is None:
            continue
        found = changes.get(cp.change)
        if found is None:
            found = changes[cp.change] = Change(cp.change, cp.tool, cp.session, cp.session_label,
                                                cp.time, [], cp.undoes, notebook=cp.notebook)
        found.files.append(cp)
        for u in cp.undone or ([cp.undoes] if cp.undoes else []):
            if u not in found.undone:
                found.undone.append(u)
    return sorted(changes.values(), key=lambda c: (c.time, c.id), reverse=True)


def undone_by(changes: list[Change]) -> dict[str, str]:
    """Which changes are taken back now: change id -> the id of the undo that took it back.
    An undo that was itself undone (a redo) no longer counts, so its changes stand again.
    ``changes`` newest first, as ``timeline`` gives them (an undo is newer than what it undid)."""
    taken: dict[str, str] = {}
    for change in changes:
        if change.id in taken:
            continue  # this undo was itself taken back: what it undid stands
        for u in change.undone:
            taken.setdefault(u, change.id)
    return taken


def _later(changes: list[Change]) -> dict[str, list[Checkpoint]]:
    """Each path's checkpoints, oldest first (the next one's bytes before are a change's after)."""
    by_path: dict[str, list[Checkpoint]] = {}
    for change in reversed(changes):
        for cp in change.files:
            by_path.setdefault(cp.path, []).append(cp)
    return by_path


def file_counts(root: str, cp: Checkpoint, of_path: list[Checkpoint]) -> tuple[int, int] | None:
    """Lines added and removed by the change ``cp`` records (``changes.count_changes``): its
    bytes before against its bytes after, which are the next checkpoint's bytes before when that
    one starts from the same hash, or the file on disk while it still is what the change left.
    None when either text is not known (not kept, evicted, changed since, not text)."""
    def text_of(c: Checkpoint) -> str | None:
        if not c.existed:
            return ""
        if not c.kept:
            return None
        try:
            return _text(checkpoints.data_of(root, c))
        except (OSError, ToolError):
            return None

    before = text_of(cp)
    if before is None:
        return None
    after: str | None = None
    if not cp.after_exists:
        after = ""
    else:
        nxt = next((c for c in of_path if c.time > cp.time or (c.time == cp.time and c.id > cp.id)),
                   None)
        if nxt is not None and nxt.existed and nxt.sha256 == cp.after_sha256:
            after = text_of(nxt)
        else:
            with contextlib.suppress(OSError, ValueError):
                real = os.path.join(root, cp.path)
                data = read_bytes(real)
                if hashlib.sha256(data).hexdigest() == cp.after_sha256:
                    after = _text(data)
    return None if after is None else count_changes(before, after)


def timeline_json(root: str, session: str | None = None, limit: int = LIST_MAX
                  ) -> tuple[list[dict[str, Any]], int]:
    """The newest ``limit`` changes (of ``session``) as JSON, with counts and undo state, and
    how many there are in all. One home for the ``changes`` tool and the panel's timeline."""
    every = timeline(root)
    found = [c for c in every if of_session(c, session)]
    taken, later = undone_by(every), _later(every)
    return [c.to_json(root, taken, later) for c in found[:limit]], len(found)


def of_session(change: Change, session: str | None) -> bool:
    return session is None or session in (change.session, change.session_label)


def reaches_parts(ws: Workspace, args: dict[str, Any]) -> bool:
    """Whether an undo or redo with ``args`` may take back a part a participant keeps in this
    process (the live image): such a call runs in the image, after a running cell, since names
    put back between a cell's statements would change what the cell sees midway
    (``Tool.image_when``)."""
    parts = participants.kept(ws.root)
    change, session = args.get("change"), args.get("session")
    if isinstance(change, str) and change:
        return any(cp.change == change for cp in parts)
    if isinstance(session, str) and session:
        return any(session in (cp.session, cp.session_label) for cp in parts)
    return False


PANEL_TEXT = "panel_text"  # details key: a result's words for the person at the panel


def changed_refusal(head: str, for_agent: str, for_panel: str, tail: str,
                    **details: Any) -> ToolError:
    """An undo refused because a file or cell changed since (``error`` ``changed``): the agent
    is told to repeat the call with ``force=true``; the person at the panel, whose control is
    the Timeline's "Undo anyway" button, is told to press it (``details[PANEL_TEXT]``)."""
    return ToolError(f"{head} {for_agent} {tail}", error="changed",
                     **{PANEL_TEXT: f"{head} {for_panel} {tail}"}, **details)


def _current(real: str) -> bytes | None:
    try:
        return read_bytes(real)
    except FileNotFoundError:
        return None


def _reverted(call: Call, rel: str, real: str, cps: list[Checkpoint], force: bool,
              verb: str) -> tuple[Any, Any]:
    """Notebook ``rel`` as it is now (loaded from its store: the live document when it is
    open there) and as it is with the changes of ``cps`` (newest first) taken back, cell by
    cell. A cell a change touched that is no longer as the change left it is a refusal naming
    the notebook and the cell, unless ``force`` (then that cell is left as it is)."""
    loaded = call.ws.notebooks.load(real)
    data = copy.deepcopy(loaded.data)
    for cp in cps:
        payload = json.loads(checkpoints.data_of(call.ws.root, cp))
        data = _revert_cells(data, payload["before"], payload["after"], force,
                             f"{verb} refused", rel, cp.change or "")
    target = loaded.copy()
    target.data = data
    return loaded, target


def _same_cell(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return source_text(a.get("source")) == source_text(b.get("source")) and \
        a.get("cell_type") == b.get("cell_type")


def _revert_cells(cur: dict[str, Any], before: dict[str, Any], after: dict[str, Any], force: bool,
                  refused: str, rel: str, change: str) -> dict[str, Any]:
    """``cur`` with what the change from ``before`` to ``after`` did taken back: cells it
    inserted removed, cells it deleted put back after the cell that preceded them, fields it
    changed set back, cells it moved moved back; the notebook's metadata too. Cells it did
    not touch stay as they are now (a person's work there is kept)."""
    b_cells, a_cells = before.get("cells") or [], after.get("cells") or []
    c_cells = cur.get("cells") or []
    b_ids, a_ids, c_ids = _cell_ids(b_cells), _cell_ids(a_cells), _cell_ids(c_cells)
    b_at = {cid: i for i, cid in enumerate(b_ids)}
    a_at = {cid: i for i, cid in enumerate(a_ids)}
    c_at = {cid: i for i, cid in enumerate(c_ids)}
    inserted = {cid for cid in a_ids if cid not in b_at}
    deleted = [cid for cid in b_ids if cid not in a_at]
    moved = set(_moved(b_ids, a_ids))
    changed = [cid for cid in b_ids if cid in a_at and b_cells[b_at[cid]] != a_cells[a_at[cid]]]
    problems: list[tuple[str, str]] = []
    for cid in [c for c in a_ids if c in inserted or c in moved or c in changed]:
        if cid not in c_at:
            problems.append((cid, "was deleted"))
        elif not _same_cell(c_cells[c_at[cid]], a_cells[a_at[cid]]):
            problems.append((cid, "was changed"))
    problems += [(cid, "is there again") for cid in deleted if cid in c_at]
    if problems and not force:
        cid, why = problems[0]
        raise changed_refusal(
            f"{refused}: cell {rel}#{cid} {why} since change {change} (someone edited it after, "
            "in the notebook). Nothing was changed.",
            f"Look at it first (read path='{rel}#{cid}'); to take the change back anyway, "
            "repeat with force=true",
            "Look at the cell first; to take the change back anyway, press Undo anyway",
            "(a changed cell is put back as before the change, one no longer there is left out; "
            "what is there now is recorded, so that can be undone too).",
            paths=[f"{rel}#{c}" for c, _ in problems])
    skip = {cid for cid, why in problems if why != "was changed"}  # forced: left as they are
    ids = [cid for cid in c_ids if cid not in inserted or cid in skip]
    cells = [copy.deepcopy(c_cells[c_at[cid]]) for cid in ids]
    for cid in changed:
        if cid in skip or cid not in ids:
            continue
        b, a = b_cells[b_at[cid]], a_cells[a_at[cid]]
        i = ids.index(cid)
        if b.get("cell_type") != a.get("cell_type"):
            cells[i] = copy.deepcopy(b)
            continue
        for key in set(b) | set(a):
            if key in b and (key not in a or b[key] != a[key]):
                cells[i][key] = copy.deepcopy(b[key])
            elif key not in b:
                cells[i].pop(key, None)
    put_back = [cid for cid in b_ids if cid not in skip
                and ((cid in moved and cid in ids) or (cid in deleted and cid not in ids))]
    lifted: dict[str, dict[str, Any]] = {}
    for cid in put_back:
        if cid in ids:
            at = ids.index(cid)
            lifted[cid] = cells.pop(at)
            del ids[at]
    for cid in put_back:  # in the order before the change: a cell's predecessor comes first
        prev = next((b_ids[j] for j in range(b_at[cid] - 1, -1, -1) if b_ids[j] in ids), None)
        at = ids.index(prev) + 1 if prev is not None else 0
        cells.insert(at, lifted.get(cid) or copy.deepcopy(b_cells[b_at[cid]]))
        ids.insert(at, cid)
    out = dict(cur)
    out["cells"] = cells
    for key in ("metadata", "nbformat_minor"):
        if key in before and before.get(key) != after.get(key):
            out[key] = copy.deepcopy(before[key])
    return out


def _cell_changes(rel: str, old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """One file change per cell ``old`` → ``new`` touched (``nb.ipynb#CELL``), with its
    source before and after."""
    o_cells, n_cells = old.get("cells") or [], new.get("cells") or []
    o_at = {cid: c for cid, c in zip(_cell_ids(o_cells), o_cells, strict=True)}
    n_at = {cid: c for cid, c in zip(_cell_ids(n_cells), n_cells, strict=True)}
    out = []
    for cid in touched_cells(old, new):
        o, n = o_at.get(cid), n_at.get(cid)
        out.append(file_change(f"{rel}#{cid}", source_text(o.get("source")) if o else None,
                               source_text(n.get("source")) if n else None, "written"))
    return out


def _undo_changes(call: Call, targets: list[Change], force: bool, verb: str,
                  redone: str = "") -> ToolResult:
    ws = call.ws
    if not targets:
        raise ToolError(f"{verb}: nothing to {verb} (no recorded change matches). List them "
                        "with changes.", error="not_found")
    newest: dict[str, Checkpoint] = {}
    live: dict[str, list[Checkpoint]] = {}  # a live notebook's changes, newest first
    parted: dict[str, list[Checkpoint]] = {}  # participants' parts (the image), newest first
    for change in targets:  # newest first: a file's newest change is what must be on disk
        for cp in change.files:
            if cp.part is not None:
                parted.setdefault(cp.kind, []).append(cp)
                continue
            if cp.kind == LIVE:
                live.setdefault(cp.path, []).append(cp)
            else:
                newest.setdefault(cp.path, cp)
            if not cp.kept:
                raise ToolError(
                    f"{verb} refused: the bytes of {cp.path} before change {change.id} were not "
                    f"kept (over {atomic.OBSERVE_MAX_BYTES} bytes, or unseen). Nothing was "
                    "changed.", error="not_kept", path=cp.path, change=change.id)
    reals = {p: ws.jail.resolve(p, write=True).real for p in newest}
    owned = {p: o for p, r in reals.items() if (o := serverfiles.running_owner(ws, r, p))}
    if owned and len(owned) == len(newest) and not live and not parted:
        path = next(iter(owned))
        raise ToolError(
            f"{verb} refused: {', '.join(owned)} is written by {owned[path]}, which is running: "
            "writing it under the server would be undone by it, or lose what it holds. Nothing "
            "was changed; take it back there (in the chat, in the notebook).",
            error="server_owned", paths=sorted(owned), owner=owned[path])
    for path in owned:  # left as they are, and said
        del newest[path], reals[path]
    live_reals = {p: ws.jail.resolve(p, write=True).real for p in live}
    everything = sorted(set(reals) | set(live_reals))
    with ws.writing([*reals.values(), *live_reals.values()], tool=verb, rel=", ".join(everything)):
        current = {p: _current(r) for p, r in reals.items()}
        changed = []
        for path, cp in newest.items():
            now = current[path]
            if (now is not None) != cp.after_exists or (
                now is not None and hashlib.sha256(now).hexdigest() != cp.after_sha256):
                changed.append(path)
        if changed and not force:
            raise changed_refusal(
                f"{verb} refused: {', '.join(changed)} changed since change "
                f"{newest[changed[0]].change} (someone edited it after). Nothing was changed.",
                "Look at it first; to put the old bytes back anyway, repeat with force=true",
                "Look at it first; to put the old bytes back anyway, press Undo anyway",
                "(what is there now is kept, so that can be undone too).", paths=changed)
        documents = {path: _reverted(call, path, live_reals[path], cps, force, verb)
                     for path, cps in live.items()}  # every check before anything is changed
        plans, part_notes = _check_parts(call, parted, force, verb)
        datas: dict[str, bytes | None] = {}
        for change in targets:  # newest first; the oldest change's "before" is written last
            for cp in change.files:
                if cp.kind != LIVE and cp.part is None and cp.path not in owned:
                    datas[cp.path] = checkpoints.data_of(ws.root, cp) if cp.existed else None
        files: list[dict[str, Any]] = []
        for path, (loaded, target) in documents.items():  # through the live document
            try:
                ws.notebooks.commit([(live_reals[path], target)])
            except atomic.Stale as exc:
                raise ToolError(exc.refusal(verb, path), error="stale") from None
            files.extend(_cell_changes(path, loaded.data, target.data))
        for path, data in datas.items():
            real, now = reals[path], current[path]
            try:
                if data is None:
                    if now is not None:
                        atomic.remove(real, now)
                else:
                    atomic.write_atomic(real, data, now)
            except atomic.Stale as exc:
                raise ToolError(exc.refusal(verb, path), error="stale") from None
            files.append(file_change(path, _text(now), _text(data),
                                     "deleted" if data is None else "written"))
        datas.update(dict.fromkeys(documents))
        part_names = _apply_parts(call, plans, part_notes, force, verb)
    ids = [c.id for c in targets]
    names = ", ".join([*sorted(datas), *part_names])
    if verb == "redo":
        text = (f"redo: {names} back as change {redone} left it (took back its undo "
                f"{ids[0]}). This is itself a change (see changes).")
    elif len(ids) == 1:
        text = (f"undo: took back change {ids[0]}; {names} as before it. This is itself a change; "
                f"redo it with redo change={ids[0]}.")
    else:
        text = (f"undo: took back {len(ids)} changes ({', '.join(ids[:5])}{' …' if len(ids) > 5 else ''}), "
                f"newest first; {names} as before the oldest. This is itself a change (see changes).")
    part_notes += [f"{p} (written by {o}, which is running: left as it is)"
                   for p, o in owned.items()]
    if part_notes:
        text += "\nNot taken back: " + "; ".join(part_notes) + "."
    return ToolResult.success(text, files=files, undoes=ids[0] if len(ids) == 1 else None,
                              undone=ids, **({"not_restored": part_notes} if part_notes else {}))


def _check_parts(call: Call, parted: dict[str, list[Checkpoint]], force: bool,
                 verb: str) -> tuple[list[tuple[participants.Participant, Any, list[Checkpoint]]], list[str]]:
    """Each participant's plan for its parts of the changes (the image), after its check: a
    name changed since the change is a refusal naming it, unless ``force``. A part no
    participant here can take back (recorded by another process) is a note."""
    plans: list[tuple[participants.Participant, Any, list[Checkpoint]]] = []
    notes: list[str] = []
    for kind, cps in parted.items():
        p = participants.of_kind(kind)
        if p is None:
            notes.append(f"the {kind} part of change {cps[0].change} ({cps[0].path}): nothing "
                         "here records it")
            continue
        problems, plan = p.check(call, cps, force)
        if problems and not force:
            raise changed_refusal(
                f"{verb} refused: in the live image, {', '.join(problems)} since change "
                f"{cps[0].change} (changed after it). Nothing was changed.",
                "Look at it first (inspect it); to put the old values back anyway, repeat with "
                "force=true",
                "Look at it first; to put the old values back anyway, press Undo anyway",
                "(what is there now is recorded, so that can be undone too).", names=problems)
        plans.append((p, plan, cps))
    return plans, notes


def _apply_parts(call: Call, plans: list[tuple[participants.Participant, Any, list[Checkpoint]]],
                 notes: list[str], force: bool, verb: str) -> list[str]:
    """Carry the plans out; each part of what they changed joins this call's change (so it can
    be undone too); ``notes`` gets what they could not put back. Returns how to name them.
    Held for review (the call's writes captured), each plan is a step the person's Accept takes
    (``_PartStep``): nothing in the image changes before."""
    names: list[str] = []
    for p, plan, cps in plans:
        step = _PartStep(call, p, plan, cps, force, verb)
        if atomic.capture_op(approval.STEP, step):
            names.append(step.what)
            continue
        names.extend(step.apply(notes))
    return names


class _PartStep:
    """A participant's take-back as a held undo's step (``approval.HeldStep``): shown to the
    person, checked again on Accept (a name changed since the proposal refuses it, unless the
    undo was forced), then taken."""

    def __init__(self, call: Call, p: participants.Participant, plan: Any, cps: list[Checkpoint],
                 force: bool, verb: str) -> None:
        self.call, self.p, self.plan, self.cps, self.force, self.verb = call, p, plan, cps, force, verb
        self.what = ", ".join(cp.path for cp in cps)

    def apply(self, notes: list[str]) -> list[str]:
        part, said = self.p.apply(self.call, self.plan)
        notes.extend(said)
        if part is None:
            return []
        participants.add(part)
        return [part.path]

    def paths(self) -> list[str]:
        return []

    def shown(self) -> str:
        return f"put back in the live image: {self.what}"

    def refusal(self, proposal_id: str) -> str | None:
        problems, plan = self.p.check(self.call, self.cps, self.force)
        if problems and not self.force:
            return (f"Accept of {proposal_id} refused: in the live image, {', '.join(problems)} "
                    "since it was proposed. Nothing was changed.")
        self.plan = plan
        return None

    def take(self) -> None:
        self.apply([])


def take_back(call: Call, targets: list[Change], force: bool, verb: str,
              redone: str = "") -> ToolResult:
    """Take back the changes ``targets`` (newest first) as one recorded change of ``call``
    (``verb``: ``undo``, or ``redo`` of the undo of change ``redone``): the ``undo`` and
    ``redo`` tools (``kli.tools.review``). Refused, touching nothing, as ``_undo_changes`` says."""
    return _undo_changes(call, targets, force, verb, redone)
