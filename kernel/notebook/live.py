"""``LiveNotebooks``: the notebook store the kernel host gives its Workspace.

Which document a tool reads and changes is decided in one place, ``route``:

1. ``ydoc`` — the server's shared Y document, when this kernel was started by a Jupyter server
   (``server.find``), the notebook is under the server's root, it is this kernel's own
   notebook (``JPY_SESSION_NAME``) or has a session on the server, and the server has
   jupyter-collaboration (its room can be joined). The person sees each change in place, with
   no reload and no "file changed on disk" dialog; the server saves the file after its save
   delay. It needs no browser: the kernel is a Y client of the room.
2. ``model`` — no room, and a browser's JupyterLab tab has the notebook open (its extension
   told the kernel, ``openmodel``): read from and changed in the tab's model, saved by the tab.
3. ``disk`` — the ``.ipynb`` file (``kli.tools.notebook.disk``), for everything else.

A notebook loaded from the Y document is a snapshot of it (``Notebook.raw`` is that snapshot's
JSON). ``commit`` compares each changed notebook with the snapshot it came from and applies
only the difference, cell by cell, in one Y transaction: a changed source as a granular text
change, other fields set, cells inserted / deleted / moved. A cell the change edits, deletes or
moves must still be, in the live document, what the snapshot held (else ``atomic.Stale``
naming the cell, and nothing is written anywhere); cells the change does not touch may have
changed meanwhile — the person's typing there is kept. A tracked call's commit notes each live document
before and after it (``undo.live_notes``), so the change joins the undo timeline. Live documents, notebooks on disk and
files of one change are checked first and written together: the Y transactions run only after
the disk writes succeeded, on the rooms' thread, so no update of the room lands in between.
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kli.kernel.notebook import server as srv
from kli.kernel.notebook.openmodel import MODEL, NotOpen, OpenModels
from kli.kernel.notebook.plan import Plan, plan_against
from kli.kernel.notebook.room import Room, RoomError, Rooms
from kli.tools.core import serverfiles, undo
from kli.tools.core.jail import Jail
from kli.tools.notebook.disk import DiskNotebooks
from kli.tools.notebook.model import NBFORMAT_LAYOUT, Notebook, parse, source_text

YDOC = "ydoc"
DISK = "disk"
OPEN_CACHE_S = 2.0  # how long the server's list of open notebooks is reused


@dataclass(frozen=True)
class Route:
    path: str  # YDOC, MODEL (openmodel.MODEL) or DISK
    reason: str


class LiveNotebooks:
    """``NotebookStore``: the live Y document where ``route`` says so, else the disk."""

    def __init__(self, jail: Jail | None = None, env: Mapping[str, str] | None = None) -> None:
        self.disk = DiskNotebooks(jail)
        self.rooms = Rooms()
        self._env = dict(os.environ if env is None else env)
        self._server: srv.Server | None = None
        self._found = False
        self._no_collab: str | None = None  # why joining rooms failed for good
        self._open: tuple[float, set[str]] = (0.0, set())
        self.routes: dict[str, Route] = {}  # the last route of each notebook loaded
        # Notebooks open in a browser's tab, reported by the extension (``openmodel``).
        self.models = OpenModels(lambda: (s.root_dir if (s := self.server()) else None))

    @property
    def live(self) -> bool:
        return self.server() is not None and self._no_collab is None

    def server(self) -> srv.Server | None:
        if not self._found:
            self._found = True
            self._server = srv.find(self._env)
        return self._server

    # -- the one decision ------------------------------------------------------------------
    def route(self, real: str) -> Route:
        """Which document of notebook ``real`` the tools read and change (module docstring)."""
        if self.rooms.get(real) is not None:
            return Route(YDOC, "its room is joined")
        server = self.server()
        if server is None:
            return self._tab_or_disk(real, "no Jupyter server started this kernel "
                                           "(JPY_PARENT_PID, jpserver-PID.json)")
        if self._no_collab is not None:
            return self._tab_or_disk(real, self._no_collab)
        if server.rel(real) is None:
            return Route(DISK, "it is outside the server's root")
        if real != srv.session_notebook(server, self._env) and real not in self._open_set(server):
            return self._tab_or_disk(real, "it is not open on the server (no session)")
        return Route(YDOC, "open on a server with jupyter-collaboration")

    def _tab_or_disk(self, real: str, why: str) -> Route:
        """No room: the open model when a browser's tab has the notebook open, else the file."""
        if self.models.has(real):
            return Route(MODEL, f"open in a JupyterLab tab, no collaborative room ({why})")
        return Route(DISK, why)

    def is_live(self, real: str) -> bool:
        """Whether changes of notebook ``real`` go to a live document now (its room joined, or
        it was loaded from a tab's open model that still has it)."""
        return self.rooms.get(real) is not None or self._from_tab(real)

    def owner(self, real: str) -> str | None:
        """Which program of the running Jupyter server that started this kernel owns file
        ``real`` now (``kli.tools.core.serverfiles``): its chats, document store and
        checkpoints by their names, and a notebook open there (a session or a joined room),
        whose file the server saves from the live document. None: no server, or not its file."""
        server = self.server()
        rel = server.rel(real) if server is not None else None
        if server is None or rel is None:
            return None
        by_name = serverfiles.owner_by_name(rel)
        if by_name is not None:
            return f"{by_name} of the running Jupyter server"
        if real.lower().endswith(".ipynb") and (
                self.rooms.get(real) is not None or real == srv.session_notebook(server, self._env)
                or real in self._open_set(server)):
            return "the running Jupyter server, which has the notebook open and saves its live document"
        return None

    def _from_tab(self, real: str) -> bool:
        route = self.routes.get(real)
        return route is not None and route.path == MODEL and self.models.has(real)

    def _open_set(self, server: srv.Server) -> set[str]:
        at, found = self._open
        if time.monotonic() - at > OPEN_CACHE_S:
            found = srv.open_notebooks(server)
            self._open = (time.monotonic(), found)
        return found

    def _room(self, real: str) -> Room | None:
        route = self.route(real)
        if route.path == YDOC:
            server = self.server()
            assert server is not None
            try:
                room = self.rooms.join(server, real, server.rel(real) or "")
            except RoomError as exc:
                if "collaboration" in str(exc) or "not installed" in str(exc):
                    self._no_collab = f"the server cannot share it live: {exc}"
                route = self._tab_or_disk(real, str(exc))
            else:
                self.routes[real] = route
                return room
        self.routes[real] = route
        return None

    # -- NotebookStore -------------------------------------------------------------------------
    def load(self, real: str) -> Notebook:
        room = self._room(real)
        if room is None and self.routes[real].path == MODEL:
            try:
                return self.models.load(real, self._shown(real))
            except NotOpen:  # closed before its report reached the kernel: the file
                self.routes[real] = Route(DISK, "its tab closed")
        if room is None:
            return self.disk.load(real)
        return self.rooms.run(lambda: _snapshot(room))

    def commit(
        self,
        notebooks: Sequence[tuple[str, Notebook]],
        files: Sequence[tuple[str, bytes]] = (),
        expected: Mapping[str, bytes | None] | None = None,
    ) -> None:
        tab = [self.rooms.get(real) is None and self._from_tab(real) for real, _ in notebooks]
        if not any(tab):
            self._commit(notebooks, files, expected)
            return
        # A browser tab's notebooks first: only the tab can refuse (stale) once the plan was
        # checked; when the rest then fails, the tab's change is taken back (``openmodel``).
        in_tab = [n for n, t in zip(notebooks, tab, strict=True) if t]
        self.models.commit(in_tab, self._shown)
        try:
            self._commit([n for n, t in zip(notebooks, tab, strict=True) if not t], files,
                         expected)
        except BaseException:
            self.models.take_back(in_tab, self._shown)
            raise
        tab_notes = undo.live_notes()  # for undo, cell by cell: the read and the change
        if tab_notes is not None:
            tab_notes.extend((real, parse(nb.raw).data, copy.deepcopy(nb.data))
                             for real, nb in in_tab)

    def _commit(
        self,
        notebooks: Sequence[tuple[str, Notebook]],
        files: Sequence[tuple[str, bytes]] = (),
        expected: Mapping[str, bytes | None] | None = None,
    ) -> None:
        live = [(real, nb, room) for real, nb in notebooks
                if (room := self.rooms.get(real)) is not None]
        on_disk = [(real, nb) for real, nb in notebooks if self.rooms.get(real) is None]
        if not live:
            self.disk.commit(on_disk, files, expected)
            return

        notes = undo.live_notes()  # a recorded call: its live changes go to the undo timeline

        def together() -> None:
            plans = [(real, room, _plan(real, room, nb)) for real, nb, room in live]
            if on_disk or files:
                self.disk.commit(on_disk, files, expected)
            for real, room, plan in plans:
                before = _data(room) if notes is not None else None
                _apply(room, plan)
                if notes is not None:
                    notes.append((real, before, _data(room)))

        self.rooms.run(together)

    def _shown(self, real: str) -> str:
        server = self.server()
        return (server.rel(real) if server is not None else None) or os.path.basename(real)

    def close(self) -> None:
        self.rooms.close()


# -- the live document --------------------------------------------------------------------------
def _data(room: Room) -> dict[str, Any]:
    with room.lock:
        data: dict[str, Any] = room.doc.get()
    return data


def _snapshot(room: Room) -> Notebook:
    return parse(NBFORMAT_LAYOUT.dumps(_data(room)))


def _live_cells(room: Room) -> list[dict[str, Any]]:
    with room.lock:
        return [room.doc._cell_to_py(room.doc.ycells[i]) for i in range(len(room.doc.ycells))]


def _plan(real: str, room: Room, nb: Notebook) -> Plan:
    """What applying ``nb`` to the live document changes; ``Stale`` when a cell it touches is
    no longer, in the live document, what ``nb`` was loaded from."""
    return plan_against(real, _live_cells(room), nb)


def _set_field(doc: Any, ycell: Any, key: str, value: Any) -> None:
    from jupyter_ydoc.yunicode import _set_text
    from pycrdt import Map

    if key == "source":
        _set_text(doc.ydoc, ycell["source"], source_text(value))
    elif key == "outputs":
        doc._set_ycell_outputs(ycell, copy.deepcopy(value or []))
    elif key == "metadata":
        ycell["metadata"] = Map(copy.deepcopy(value or {}))
    else:
        ycell[key] = copy.deepcopy(value)


def _apply(room: Room, plan: Plan) -> None:
    from pycrdt import Map

    doc = room.doc
    order = plan.order
    n_at = {cid: i for i, cid in enumerate(plan.new_ids)}
    with room.lock, doc.ydoc.transaction(origin=room.origin):
        if plan.meta_changed:  # first: cell ids of an nbformat 4.4 notebook need minor 5
            doc._ymeta["nbformat_minor"] = plan.new.get("nbformat_minor")
            doc._ymeta["metadata"] = Map(copy.deepcopy(plan.new.get("metadata") or {}))
        for cid, o, n in plan.update:
            at = order.index(cid)
            if o.get("cell_type") != n.get("cell_type"):
                doc.ycells[at] = doc.create_ycell(n)
                continue
            ycell = doc.ycells[at]
            for key in sorted(set(o) | set(n), key=lambda k: k == "id"):
                if o.get(key) == n.get(key) and (key in o) == (key in n):
                    continue
                if key not in n:
                    if key in ycell:
                        del ycell[key]
                else:
                    _set_field(doc, ycell, key, n[key])
            if "id" in n and n.get("id") != o.get("id"):
                order[at] = n["id"]
        for cid in sorted(plan.remove, key=order.index, reverse=True):
            at = order.index(cid)
            del doc.ycells[at]
            del order[at]
        for cid in plan.place:
            i = n_at[cid]
            prev = next((plan.new_ids[j] for j in range(i - 1, -1, -1)
                         if plan.new_ids[j] in order), None)
            at = order.index(prev) + 1 if prev is not None else 0
            doc.ycells.insert(at, doc.create_ycell(plan.new["cells"][i]))
            order.insert(at, cid)
