"""The checkpoint store: the exact bytes of a file, kept before a tool deletes or replaces it.

Layout, under the workspace root::

    .kli/checkpoints/<id>/data       the file's bytes, exactly
    .kli/checkpoints/<id>/meta.json  {"id", "path", "reason", "tool", "session", "time",
                                      "size", "sha256", "mode", "kind", "link"}

``kind`` is ``"file"`` or ``"symlink"`` (``link`` holds the link's target, ``data`` is empty),
or ``LIVE`` (a notebook changed in a live document, below).
Ids sort by time (``cp-<UTC stamp>-<n>``). The store keeps the newest ``checkpoint_keep``
checkpoints, and at most ``checkpoint_budget_mb`` MiB of ``data`` (``DEFAULT_BUDGET_MB``),
pruning the oldest first when a new one is made. The tools write here themselves — the jail's
``.kli/`` rule governs the paths a model names, not the harness's own state.

The undo timeline (``kli.tools.core.undo``) is this same store: a checkpoint with a ``change``
id is one file of one recorded change — ``data`` its bytes before (``existed`` False: the call
created it), ``after_sha256`` / ``after_exists`` what the call left, ``kept`` False when the
bytes before were not kept (too large, or not seen), ``undoes`` the change an undo took back.
A ``LIVE`` checkpoint is a notebook changed in a live Y document (jupyter-collaboration):
``data`` holds the document before and after, ``cells`` the cells the change touched; its undo
goes back through the live document.

``restore`` gives the exact bytes (and permission bits) back; when the path exists with
different bytes those are checkpointed first, so a restore can itself be undone.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import shutil
import stat
import time
from dataclasses import dataclass
from typing import Any

from kli.tools.core import atomic
from kli.tools.core.atomic import ANY, STALE_SECONDS, write_atomic
from kli.tools.core.jail import Jail
from kli.tools.core.result import ToolError
from kli.tools.core.settings import CONTROL_DIR
from kli.tools.core.textfile import read_bytes

CHECKPOINT_DIR = os.path.join(CONTROL_DIR, "checkpoints")
DEFAULT_KEEP = 2000  # checkpoints kept (setting checkpoint_keep); the oldest go first beyond
DEFAULT_BUDGET_MB = 256  # the store's data, in MiB, beyond which the oldest checkpoints go
_seq = itertools.count(1)
LIVE = "ydoc"  # kind of a notebook changed in a live (Y) document: ``data`` is JSON of the
# document before and after the change (``{"before": …, "after": …}``), undone cell by cell


@dataclass(frozen=True)
class Checkpoint:
    id: str
    path: str  # root-relative, POSIX
    reason: str
    tool: str
    session: str
    time: float
    size: int
    sha256: str
    mode: int
    kind: str = "file"
    link: str | None = None
    change: str | None = None
    session_label: str = ""
    existed: bool = True
    kept: bool = True
    after_exists: bool = True
    after_sha256: str | None = None
    undoes: str | None = None
    undone: list[str] | None = None  # an undo's change: every change it took back
    cells: list[str] | None = None  # kind LIVE: the ids of the cells the change touched
    # The notebook whose kernel made the change (root-relative; ``Workspace.notebook``): the
    # panel's Timeline of a notebook shows that notebook's changes. None: made elsewhere.
    notebook: str | None = None
    # Lines the change added and removed, counted when it was recorded (None: a text is not
    # known, or recorded before counts were kept; ``undo.file_counts`` then counts later).
    added: int | None = None
    removed: int | None = None
    # A participant's part of a change (kind = its kind, e.g. the live image's "image"): what
    # it recorded, as JSON (``kli.tools.core.participants``); no bytes are kept for it here.
    part: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def summary(self) -> str:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.time))
        what = (f"symlink → {self.link}" if self.kind == "symlink" else
                f"live notebook cells {', '.join(self.cells or [])}" if self.kind == LIVE else
                f"{self.kind} part of change {self.change}" if self.part is not None else
                f"{self.size} bytes")
        return f"{self.id}  {self.path}  ({what}, {self.reason} by {self.tool}, {stamp})"


def store_dir(root: str) -> str:
    return os.path.join(root, CHECKPOINT_DIR)


def _new_id() -> str:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return f"cp-{stamp}-{os.getpid() % 100000:05d}{next(_seq):05d}"


def create(
    root: str, real: str, rel: str, *, reason: str, tool: str, session: str, keep: int
) -> Checkpoint:
    """Save ``real`` (a file or a symlink) before it is changed; returns the checkpoint."""
    kind = "symlink" if os.path.islink(real) else "file"
    if kind == "symlink":
        link: str | None = os.readlink(real)
        data = b""
        mode = 0o777
    else:
        link = None
        data = read_bytes(real, Jail(root))  # never an outside file swapped in
        mode = stat.S_IMODE(os.stat(real).st_mode)
    cp = Checkpoint(
        id=_new_id(),
        path=rel,
        reason=reason,
        tool=tool,
        session=session,
        time=time.time(),
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        mode=mode,
        kind=kind,
        link=link,
    )
    return save(root, cp, data, keep)


def save(root: str, cp: Checkpoint, data: bytes, keep: int, budget_mb: float | None = None) -> Checkpoint:
    """Write ``cp`` and its ``data`` into the store, then prune it (``prune``)."""
    base = store_dir(root)
    held = _held()
    if not os.path.isdir(base):
        if not held:
            os.makedirs(base, exist_ok=True)
        # Checkpoints are harness state: keep them out of the project's git status.
        write_atomic(os.path.join(base, ".gitignore"), b"*\n")
    folder = os.path.join(base, cp.id)
    if not held:  # held: the captured writes make the folder when they are applied
        os.makedirs(folder, exist_ok=False)
    write_atomic(os.path.join(folder, "data"), data)
    write_atomic(os.path.join(folder, "meta.json"), json.dumps(cp.to_json(), indent=1).encode())
    if not held:
        prune(root, keep, DEFAULT_BUDGET_MB if budget_mb is None else budget_mb)
    return cp


def _held() -> bool:
    """Whether this thread's writes are captured for review (``approval``): then nothing but
    the captured writes may change anything (no folders made, no chmod, no pruning)."""
    return atomic.capturing_now()


def new_id() -> str:
    """A fresh checkpoint id (they sort by time)."""
    return _new_id()


def list_all(root: str) -> list[Checkpoint]:
    """Every readable checkpoint, newest first."""
    base = store_dir(root)
    try:
        names = os.listdir(base)
    except OSError:
        return []
    found: list[Checkpoint] = []
    for name in names:
        try:
            with open(os.path.join(base, name, "meta.json"), encoding="utf-8") as fh:
                found.append(Checkpoint(**json.load(fh)))
        except (OSError, ValueError, TypeError):
            continue
    found.sort(key=lambda c: (c.time, c.id), reverse=True)
    return found


def get(root: str, cp_id: str) -> Checkpoint:
    for cp in list_all(root):
        if cp.id == cp_id:
            return cp
    raise ToolError(
        f"no checkpoint with id {cp_id!r}. List the checkpoints with "
        'ws_checkpoints {"action":"list"} and copy an id from there.',
        error="not_found",
    )


def data_of(root: str, cp: Checkpoint) -> bytes:
    with open(os.path.join(store_dir(root), cp.id, "data"), "rb") as fh:
        data = fh.read()
    if hashlib.sha256(data).hexdigest() != cp.sha256:
        raise ToolError(
            f"checkpoint {cp.id} is damaged (its bytes no longer match the recorded sha256); "
            "it cannot be restored exactly. Pick another checkpoint.",
            error="damaged",
        )
    return data


def restore_bytes(real: str, cp: Checkpoint, data: bytes, expected: object = ANY) -> None:
    """Put the checkpoint's file (or symlink) at ``real``, with the checkpoint's permission bits;
    ``expected`` as for ``atomic.write_atomic`` (the bytes the caller saw there; ``Stale`` when
    they changed). Every step goes through ``atomic`` (folders made, the file written or the
    symlink put in place, the mode set), so held for review (``approval``) each is recorded and
    the person's Accept performs the same restore."""
    atomic.makedirs(os.path.dirname(real) or ".")
    if cp.kind == "symlink":
        atomic.symlink(cp.link or "", real)
        return
    write_atomic(real, data, expected)
    with contextlib.suppress(OSError):
        atomic.chmod(real, cp.mode)


def prune(root: str, keep: int, budget_mb: float = DEFAULT_BUDGET_MB) -> int:
    """The eviction rule: keep the newest ``keep`` checkpoints whose data add up to at most
    ``budget_mb`` MiB (the newest one is always kept); delete the rest, oldest first (by id:
    ids sort by time). A folder with no ``meta.json`` unchanged for ``atomic.STALE_SECONDS``
    (its writer died while saving) is removed too. Returns how many were removed. Reads only
    names and sizes."""
    base = store_dir(root)
    try:
        names = sorted((n for n in os.listdir(base) if n.startswith("cp-")), reverse=True)
    except OSError:
        return 0
    budget = int(budget_mb * 1024 * 1024)
    removed = 0
    kept_bytes = 0
    now = time.time()
    for name in list(names):  # a writer killed while saving: no meta.json; gone once stale
        folder = os.path.join(base, name)
        if os.path.exists(os.path.join(folder, "meta.json")):
            continue
        with contextlib.suppress(OSError):
            if now - os.stat(folder).st_mtime > STALE_SECONDS:
                shutil.rmtree(folder, ignore_errors=True)
                names.remove(name)
                removed += 1
    for index, name in enumerate(names):
        try:
            kept_bytes += os.stat(os.path.join(base, name, "data")).st_size
        except OSError:
            pass
        if index == 0 or (index < keep and kept_bytes <= budget):
            continue
        shutil.rmtree(os.path.join(base, name), ignore_errors=True)
        removed += 1
    return removed
