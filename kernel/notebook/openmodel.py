"""The open model: a notebook open in a JupyterLab tab of a server without jupyter-collaboration.

The extension's ``kli.ui`` comm tells the kernel which notebooks its browser has open
(``notebooks``: their server paths, sent again whenever one opens, closes or is renamed).
``LiveNotebooks.route`` sends such a notebook here when there is no collaborative room:

- ``load`` asks the tab for its model (``model_read``): what the person sees, unsaved typing
  included; the snapshot's JSON is the ``Notebook.raw`` a commit compares against.
- ``commit`` plans the change against that snapshot (``plan.plan_against``: cells updated,
  removed, placed; ``expect``: every cell the change edits, deletes or moves, as it was read)
  and sends the plans of all the tab's notebooks in one ``model_apply``. The tab checks every
  ``expect`` against its model first — a cell the person changed since the read refuses the
  whole apply (``stale``, nothing changed) — then applies each plan in one transaction
  (a changed source as a splice of the changed middle, so the person's cursor and the other
  cells' unsaved typing stay) and saves through the document context, so JupyterLab shows no
  "file changed on disk" dialog.

The kernel waits ``MODEL_TIMEOUT`` seconds for the tab's ``model_reply``; a tab that does not
answer (closed, browser gone) is forgotten — the next call goes to the file when no other tab
has the notebook — and the call gets an error naming what to do (``ModelTimeout``). The tab's
replies reach the kernel on the control subshell (``kli.kernel.kernel``), so a call waiting
here on any other thread — a tool subshell, or the main thread between cells — is answered.
"""

from __future__ import annotations

import errno
import itertools
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kli.kernel import protocol as P
from kli.kernel.notebook.plan import plan_against
from kli.tools.core.atomic import Stale
from kli.tools.notebook.model import NBFORMAT_LAYOUT, Notebook, parse, source_text

MODEL = "model"
LATE_KEPT = 64  # changes remembered to take back should their timed-out tab apply them late
_DROP_PREFIX = ("RTC:",)  # a drive prefix of the path in a collaborative lab


class ModelTimeout(OSError):
    """The tab that has the notebook open did not answer in time."""

    def __init__(self, rel: str, timeout: float) -> None:
        super().__init__(
            errno.ETIMEDOUT,
            f"the JupyterLab tab that has {rel} open did not answer in {timeout:g} s (the tab "
            "or its browser closed, or the page is busy). Nothing was changed (a change the "
            "tab applies late is taken back); re-read the notebook and send the change again: "
            "if the tab is gone, it goes to the file on disk",
            rel,
        )


class ModelFailed(OSError):
    """The tab answered with an error other than ``stale``."""

    def __init__(self, rel: str, text: str) -> None:
        super().__init__(errno.EIO, f"the JupyterLab tab of {rel} could not do it: {text}", rel)


class NotOpen(ModelFailed):
    """The tab answered that it does not have the notebook open (closed meanwhile)."""


@dataclass
class _Tab:
    """What one kli.ui comm (one browser's extension) reported."""

    send: Callable[[dict[str, Any]], None]
    paths: dict[str, str]  # real path -> the server path the tab knows it by
    at: float


@dataclass
class _Waiting:
    done: threading.Event = field(default_factory=threading.Event)
    reply: dict[str, Any] | None = None


class OpenModels:
    """The notebooks open in browsers' tabs, and the requests to them."""

    def __init__(self, root: Callable[[], str | None], timeout: float = P.MODEL_TIMEOUT) -> None:
        self._root = root  # the server's root folder (None: not known)
        self.timeout = timeout
        self._tabs: dict[str, _Tab] = {}  # comm id -> what it reported
        self._waiting: dict[str, _Waiting] = {}
        self._silent: dict[str, _Tab] = {}  # comm id -> a tab that timed out (until it speaks)
        # request id -> what to do when a tab that timed out answers it after all
        self._late: dict[str, Callable[[dict[str, Any]], None]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    # -- what the extension reports ------------------------------------------------------------
    def report(self, comm_id: str, send: Callable[[dict[str, Any]], None], paths: Any) -> None:
        """A ``notebooks`` message of comm ``comm_id``: the notebooks its browser has open
        (server paths; none are known when the kernel has no server root)."""
        base = self._root()
        found: dict[str, str] = {}
        if base is not None and isinstance(paths, list):
            for rel in paths:
                if not isinstance(rel, str) or not rel.lower().endswith(".ipynb"):
                    continue
                plain = next((rel[len(p):] for p in _DROP_PREFIX if rel.startswith(p)), rel)
                real = os.path.realpath(os.path.join(base, plain.lstrip("/")))
                inside = os.path.relpath(real, os.path.realpath(base))
                if inside != os.pardir and not inside.startswith(os.pardir + os.sep):
                    found[real] = rel  # a path outside the server's root is no tab's
        with self._lock:
            if found:
                self._tabs[comm_id] = _Tab(send, found, time.monotonic())
            else:
                self._tabs.pop(comm_id, None)

    def forget(self, comm_id: str) -> None:
        """Comm ``comm_id`` closed."""
        with self._lock:
            self._tabs.pop(comm_id, None)
            self._silent.pop(comm_id, None)

    def has(self, real: str) -> bool:
        return self._tab_for(real) is not None

    def _tab_for(self, real: str) -> tuple[str, _Tab] | None:
        with self._lock:
            tabs = [(cid, t) for cid, t in self._tabs.items() if real in t.paths]
        return max(tabs, key=lambda ct: ct[1].at) if tabs else None

    def answer(self, comm_id: str, data: Mapping[str, Any]) -> None:
        """A ``model_reply`` from comm ``comm_id``'s tab. A tab that timed out and answers after
        all has its notebooks back; a change it applied after the kernel gave up is taken back
        (on a thread of its own: its reply arrives on this one)."""
        rid = data.get("id")
        with self._lock:
            waiting = self._waiting.get(rid) if isinstance(rid, str) else None
            silent = self._silent.pop(comm_id, None)
            if silent is not None and comm_id not in self._tabs:
                silent.at = time.monotonic()
                self._tabs[comm_id] = silent
            late = self._late.pop(rid, None) if isinstance(rid, str) else None
        if waiting is not None:
            waiting.reply = dict(data)
            waiting.done.set()
        elif late is not None:
            threading.Thread(target=late, args=(dict(data),), name="kli-open-model-late",
                             daemon=True).start()

    # -- requests ------------------------------------------------------------------------------
    def _request(self, real: str, rel_shown: str, shape: P.Shape,
                 fields: Callable[[dict[str, str]], dict[str, Any]],
                 late: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        found = self._tab_for(real)
        if found is None:
            raise ModelFailed(rel_shown, "no tab has it open any more")
        comm_id, tab = found
        rid = f"m{next(self._ids)}"
        waiting = _Waiting()
        with self._lock:
            self._waiting[rid] = waiting
        try:
            tab.send(P.message(shape, id=rid, **fields(tab.paths)))
            if not waiting.done.wait(self.timeout):
                with self._lock:
                    if self._tabs.get(comm_id) is tab:
                        del self._tabs[comm_id]
                        self._silent[comm_id] = tab
                    if late is not None:
                        self._late[rid] = late
                        while len(self._late) > LATE_KEPT:
                            self._late.pop(next(iter(self._late)))
                raise ModelTimeout(rel_shown, self.timeout)
        finally:
            with self._lock:
                self._waiting.pop(rid, None)
        assert waiting.reply is not None
        return waiting.reply

    def load(self, real: str, rel_shown: str) -> Notebook:
        reply = self._request(real, rel_shown, P.MODEL_READ,
                              lambda paths: {"path": paths[real]})
        data = reply.get("notebook")
        if not reply.get("ok") or not isinstance(data, dict):
            if reply.get("error") == "not_open":
                self._drop(real)
                raise NotOpen(rel_shown, str(reply.get("text") or "not open"))
            raise ModelFailed(rel_shown, str(reply.get("text") or "no notebook in the reply"))
        return parse(NBFORMAT_LAYOUT.dumps(data))

    def _drop(self, real: str) -> None:
        with self._lock:
            for tab in self._tabs.values():
                tab.paths.pop(real, None)

    def commit(self, notebooks: Sequence[tuple[str, Notebook]],
               shown: Callable[[str], str]) -> bool:
        """Apply every change of ``notebooks`` in the tab(s) that have them open; ``Stale`` when
        a cell a change touches changed in the tab since it was read (nothing applied);
        ``ModelTimeout`` / ``ModelFailed`` otherwise. Returns whether every notebook was saved.
        """
        by_tab: dict[str, list[tuple[str, Notebook]]] = {}
        for real, nb in notebooks:
            found = self._tab_for(real)
            if found is None:
                raise ModelFailed(shown(real), "no tab has it open any more")
            by_tab.setdefault(found[0], []).append((real, nb))
        saved = True
        done: list[tuple[str, Notebook]] = []  # applied in an earlier tab of this commit
        for items in by_tab.values():
            first = items[0][0]
            plans = [(real, plan_against(real, parse(nb.raw).data["cells"], nb))
                     for real, nb in items]

            def fields(paths: dict[str, str], plans: Any = plans) -> dict[str, Any]:
                return {"notebooks": [_wire(paths[real], plan) for real, plan in plans]}

            def late(reply: dict[str, Any], items: Any = items) -> None:
                if reply.get("ok"):
                    self.take_back(items, shown)

            try:
                reply = self._request(first, shown(first), P.MODEL_APPLY, fields, late)
            except OSError:
                self.take_back(done, shown)
                raise
            if reply.get("ok"):
                saved = saved and reply.get("saved") is not False
                done.extend(items)
                continue
            self.take_back(done, shown)
            where = next((real for real, _ in items
                          if _tab_path_is(self, real, reply.get("path"))), first)
            text = str(reply.get("text") or "refused")
            if reply.get("error") == "stale":
                raise Stale(where, text)
            raise ModelFailed(shown(where), text)
        return saved


    def take_back(self, notebooks: Sequence[tuple[str, Notebook]],
                  shown: Callable[[str], str]) -> bool:
        """Undo a ``commit`` of ``notebooks`` in their tab(s) (the rest of a change failed):
        the cells it changed are set back to what was read, refused (and left) where the
        person changed them since. Whether it all went back."""
        inverse = [(real, Notebook(NBFORMAT_LAYOUT.dumps(nb.data), parse(nb.raw).data))
                   for real, nb in notebooks]
        if not inverse:
            return True
        try:
            self.commit(inverse, shown)
        except OSError:
            return False
        return True


def _tab_path_is(models: OpenModels, real: str, path: Any) -> bool:
    found = models._tab_for(real)
    return found is not None and found[1].paths.get(real) == path


def _wire(path: str, plan: Any) -> dict[str, Any]:
    """The ``NotebookPlan`` message of a ``plan.Plan``."""
    expect = {cid: P.build(P.CELL_EXPECT, cell_type=str(c.get("cell_type", "")),
                           source=source_text(c.get("source")))
              for cid, c in plan.expect.items()}
    update = []
    for cid, o, n in plan.update:
        keys = sorted(k for k in set(o) | set(n) if o.get(k) != n.get(k) or (k in o) != (k in n))
        update.append(P.build(P.CELL_UPDATE, id=cid, cell=n, keys=keys))
    n_at = {cid: i for i, cid in enumerate(plan.new_ids)}
    extra: dict[str, Any] = {}
    if plan.meta_changed:
        extra = {"metadata": plan.new.get("metadata") or {},
                 "nbformat_minor": int(plan.new.get("nbformat_minor") or 0)}
    return P.build(P.NOTEBOOK_PLAN, path=path, expect=expect, update=update,
                   remove=list(plan.remove),
                   place=[plan.new["cells"][n_at[cid]] for cid in plan.place],
                   order=list(plan.new_ids), **extra)
