"""Run a notebook cell's source in the kernel's image as a cell, capturing its outputs as
nbformat outputs (the ``run_cells`` tool's host side, ``kli.tools.roles.CellRunner``).

It runs through IPython (``shell.run_cell``, history stored), so the cell gets the next
execution count, magics and ``!`` lines work, ``_`` / ``Out`` are updated, as for a cell the
person runs. Outputs are captured in order — stdout / stderr streams (consecutive writes of one
stream merged), ``display()`` and ``clear_output()``, the execute result, the error with
IPython's traceback — into a bounded ``run_cells.Outputs``, and not sent to iopub: the tool
writes them into the notebook document, where the person sees them. The call must run on the
kernel's main thread between cells (the tool touches the image: the kernel queues it behind a
running cell). A time budget stops the cell as ``eval``'s does (SIGALRM on the main thread);
the kernel's interrupt stops it too.

While the cell runs, when its notebook is a live Y document (its room joined by the kernel's
``LiveNotebooks``), ``_LiveCell`` shows it there as JupyterLab does: at the start the cell's
outputs are cleared, its count emptied and its ``execution_state`` set to ``running`` (the
prompt shows ``[*]``); every ``FLUSH_SECONDS`` at most, from a thread of its own, what the
outputs gained is applied in one Y transaction — a stream's new text appended to its Y text,
new outputs appended — so a cell printing 100,000 lines costs a few updates a second, each
bounded; at the end, the last outputs, the execution count and ``idle``. A notebook on disk
gets its outputs once, when the cell ends (the tool writes them).
"""

from __future__ import annotations

import io
import sys
import threading
from typing import Any

from kli.tools.notebook.model import stand_in_ids
from kli.tools.process.eval import Budget, Deadline
from kli.tools.process.run_cells import CellRun, Outputs

FLUSH_SECONDS = 0.25  # a running cell's outputs reach the live document at most this often


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of two strings (string compares, not a loop)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class _Stream(io.TextIOBase):
    def __init__(self, name: str, outputs: Outputs) -> None:
        self.name_ = name
        self.outputs = outputs

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not text:
            return 0
        self.outputs.stream(self.name_, text)
        return len(text)

    def flush(self) -> None:
        pass


class _DisplayPub:
    """Stands in for the shell's display publisher while a cell runs."""

    is_publishing = False

    def __init__(self, outputs: Outputs, real: Any) -> None:
        self.outputs = outputs
        self.real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def publish(self, data: dict[str, Any], metadata: dict[str, Any] | None = None,
                *args: Any, transient: dict[str, Any] | None = None, update: bool = False,
                **kwargs: Any) -> None:
        display_id = (transient or {}).get("display_id")
        self.outputs.display(data, metadata, display_id, update and display_id is not None)

    def clear_output(self, wait: bool = False) -> None:
        self.outputs.clear(wait)


class _LiveCell:
    """Shows a running cell's outputs in its live Y document (module docstring). Every change
    runs on the rooms' thread (``Rooms.run``); a failure stops the live view, never the cell
    (the tool still writes the outputs when the cell ends)."""

    def __init__(self, rooms: Any, room: Any, cid: str, outputs: Outputs) -> None:
        self.rooms = rooms
        self.room = room
        self.cid = cid
        self.outputs = outputs
        self.shown: list[dict[str, Any]] = []
        self.version = -1
        self.failed = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _ycell(self) -> Any:
        cells = self.room.doc.ycells
        for i in range(len(cells)):
            if cells[i].get("id") == self.cid:
                return cells[i]
        doc = self.room.doc  # a notebook without ids: the tool's stand-in ids
        ids = stand_in_ids([doc._cell_to_py(cells[i]) for i in range(len(cells))])
        return cells[ids.index(self.cid)] if self.cid in ids else None

    def _on_room(self, fn: Any) -> None:
        if self.failed:
            return
        try:
            self.rooms.run(fn)
        except Exception:  # the room went away, its thread did not answer: stop showing
            self.failed = True

    def start(self) -> None:
        def begin() -> None:
            room = self.room
            with room.lock, room.doc.ydoc.transaction(origin=room.origin):
                ycell = self._ycell()
                if ycell is None:
                    self.failed = True
                    return
                self._set_outputs(ycell, [])
                ycell["execution_count"] = None
                ycell["execution_state"] = "running"

        self._on_room(begin)
        if not self.failed:
            self._thread = threading.Thread(target=self._loop, name="kli-run-cells-live",
                                            daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(FLUSH_SECONDS) and not self.failed:
            self.push()

    def push(self, count: int | None = None, final: bool = False) -> None:
        version, outs = self.outputs.render()
        if version == self.version and not final:
            return

        def apply() -> None:
            room = self.room
            with room.lock, room.doc.ydoc.transaction(origin=room.origin):
                ycell = self._ycell()
                if ycell is None:
                    return
                self._set_outputs(ycell, outs)
                if final:
                    ycell["execution_count"] = count
                    ycell["execution_state"] = "idle"

        self._on_room(apply)
        self.version = version

    def stop(self, count: int | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)
        self.push(count, final=True)

    def _set_outputs(self, ycell: Any, outs: list[dict[str, Any]]) -> None:
        """Make the cell's Y outputs ``outs``, changing only what differs from ``shown`` (the
        outputs last put there): a stream that grew gets its new text appended."""
        from pycrdt import Array, Text

        doc = self.room.doc
        youts = ycell.get("outputs")
        if not isinstance(youts, Array):
            ycell["outputs"] = youts = Array()
        shown = self.shown if len(youts) == len(self.shown) else []  # changed by someone else
        i = 0
        while i < min(len(shown), len(outs)) and shown[i] == outs[i]:
            i += 1
        if i < min(len(shown), len(outs)) and shown[i].get("output_type") == "stream" \
                and outs[i].get("output_type") == "stream" \
                and shown[i].get("name") == outs[i].get("name"):
            old, new = shown[i]["text"], outs[i]["text"]
            ytext = youts[i].get("text")
            if isinstance(ytext, Text) and len(ytext) == len(old.encode("utf-8")):
                same = len(old) if new.startswith(old) else _common_prefix(old, new)
                if same < len(old):
                    del ytext[len(old[:same].encode("utf-8")):]  # Y text indexes are UTF-8 bytes
                if new[same:]:
                    ytext += new[same:]
                i += 1
        if len(youts) > i:
            del youts[i:]
        if outs[i:]:
            youts.extend(doc._create_youtputs(outs[i:]))
        self.shown = outs


class ShellRunner:
    """``CellRunner`` over a kli kernel's IPython shell."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel

    def _live(self, cell: tuple[str, str] | None, outputs: Outputs) -> _LiveCell | None:
        if cell is None:
            return None
        store = getattr(getattr(self.kernel, "workspace", None), "notebooks", None)
        rooms = getattr(store, "rooms", None)
        room = rooms.get(cell[0]) if rooms is not None else None
        return None if room is None else _LiveCell(rooms, room, cell[1], outputs)

    def run(self, source: str, timeout: float, cell: tuple[str, str] | None = None) -> CellRun:
        shell = self.kernel.shell
        outputs = Outputs()
        count = int(shell.execution_count)
        real_hook = shell.displayhook

        def hook(value: Any = None) -> None:
            if value is None:
                return
            data, md = shell.display_formatter.format(value)
            outputs.add({"output_type": "execute_result", "execution_count": count,
                         "data": data, "metadata": md}, always=True)
            real_hook.update_user_ns(value)

        def traceback(etype: Any, evalue: BaseException, stb: list[str]) -> None:
            outputs.add({"output_type": "error", "ename": getattr(etype, "__name__", str(etype)),
                         "evalue": str(evalue), "traceback": list(stb)}, always=True)

        live = self._live(cell, outputs)
        if live is not None:
            live.start()
        saved = (sys.stdout, sys.stderr, shell.display_pub, shell.display_trap.hook,
                 shell.__dict__.get("_showtraceback"))
        budget = Budget(timeout)
        status = "ok"
        result = None
        try:
            try:
                sys.stdout, sys.stderr = _Stream("stdout", outputs), _Stream("stderr", outputs)
                shell.display_pub = _DisplayPub(outputs, saved[2])
                shell.display_trap.hook = hook
                shell._showtraceback = traceback
                with budget.running():
                    result = shell.run_cell(source, store_history=True, silent=False)
            except Deadline:  # landed outside the cell's own code
                result = None
            finally:
                sys.stdout, sys.stderr = saved[0], saved[1]
                shell.display_pub = saved[2]
                shell.display_trap.hook = saved[3]
                if saved[4] is None:
                    shell.__dict__.pop("_showtraceback", None)
                else:
                    shell._showtraceback = saved[4]
            error = None if result is None else (result.error_in_exec or result.error_before_exec)
            if budget.fired:
                status = "timeout"
                outputs.remove_errors("Deadline")
                outputs.add({"output_type": "error", "ename": "TimeoutError",
                             "evalue": f"the cell was stopped after {timeout:g} s "
                                       "(run_cells timeout); the image may be partly changed",
                             "traceback": []}, always=True)
            elif isinstance(error, KeyboardInterrupt):
                status = "interrupted"
            elif error is not None:
                status = "error"
            ran = count if int(shell.execution_count) > count else None
        finally:
            if live is not None:
                live.stop(count if int(shell.execution_count) > count else None)
        return CellRun(ran, outputs.render()[1], status)
