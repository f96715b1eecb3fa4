"""``run_cells``: run notebook cells by id in the kernel's image, as cells (gate image/eval).

Cells are named by id (``read path='nb.ipynb'`` shows them): ``cell`` (one id, or the path
``nb.ipynb#ID``), ``cells`` (a list, run in the order given) or ``from`` (that cell and every cell
after it, as "Run All Below"). Each cell's source is taken from the notebook as it is when the
cell starts (the live document, or the file), run by the host's ``CellRunner`` — in the kernel,
IPython runs it as a cell: it gets the next execution count, magics work — and its outputs and
execution count are written into the notebook when it ends, through the workspace's store, so
the person sees them where the cell is. A host that can show them while the cell runs does so
(the kernel, in a live Y document: ``kli.kernel.notebook.runner``); what a cell's outputs keep
is bounded the same way, live and at the end (``Outputs``). Markdown and raw cells are skipped. The run stops at the
first cell that fails, is interrupted or runs out of time; ``timeout`` is the whole call's
budget (``eval``'s default and limit). The result shows each cell's outputs bounded
(``notebook.outputs``: text head and tail, errors as ename / evalue and the last frames, one line
per rich output, never base64). A call outside a kernel (no ``CellRunner``) is refused: it says
to use eval. The tool touches the image, so in the kernel it waits for a running cell.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from kli.tools.core import approval, imports
from kli.tools.core.atomic import Busy, Stale
from kli.tools.core.registry import GATE_EVAL, Call, ImageScope, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.file import cellview
from kli.tools.notebook import address, outputs
from kli.tools.process.bash import DEFAULT_TIMEOUT, MAX_TIMEOUT, clamp_timeout

STATUSES = ("ok", "error", "timeout", "interrupted")
# What a cell's outputs keep, in the notebook and in the result (``Outputs``): a stream output
# keeps its first STREAM_HEAD_CHARS and its last STREAM_TAIL_CHARS characters, with one line
# naming what was left out between; a cell keeps at most MAX_OUTPUTS outputs (its result and
# error always).
STREAM_HEAD_CHARS = 50_000
STREAM_TAIL_CHARS = 10_000
MAX_OUTPUTS = 200


@dataclass
class CellRun:
    """What running one cell gave: its execution count (None when it did not run), its outputs
    as nbformat outputs, and how it ended (``STATUSES``)."""

    execution_count: int | None
    outputs: list[dict[str, Any]] = field(default_factory=list)
    status: str = "ok"


class _StreamOut:
    """One stream output, bounded: a head, then a rolling tail once the head is full."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.head: list[str] = []
        self.head_len = 0
        self.tail = ""
        self.cut_chars = 0
        self.cut_lines = 0

    def write(self, text: str) -> None:
        room = STREAM_HEAD_CHARS - self.head_len
        if room > 0:
            self.head.append(text[:room])
            self.head_len += min(room, len(text))
            text = text[room:]
        if not text:
            return
        self.tail += text
        if len(self.tail) > 2 * STREAM_TAIL_CHARS:  # trimmed in batches: appends stay cheap
            self._cut(len(self.tail) - STREAM_TAIL_CHARS)

    def _cut(self, n: int) -> None:
        gone = self.tail[:n]
        self.tail = self.tail[n:]
        self.cut_chars += len(gone)
        self.cut_lines += gone.count("\n")

    def text(self) -> str:
        head = "".join(self.head)
        self.head = [head]
        if not self.cut_chars and len(self.tail) <= STREAM_TAIL_CHARS:
            return head + self.tail
        if len(self.tail) > STREAM_TAIL_CHARS:
            self._cut(len(self.tail) - STREAM_TAIL_CHARS)
        tail = self.tail
        cut_chars, cut_lines = self.cut_chars, self.cut_lines
        nl = tail.find("\n")
        if 0 <= nl < len(tail) - 1:  # the tail starts at a line
            cut_chars += nl + 1
            cut_lines += 1
            tail = tail[nl + 1:]
        sep = "" if head.endswith("\n") else "\n"
        return (f"{head}{sep}[… run_cells left out {cut_lines} line(s), {cut_chars} characters; "
                f"it keeps the first {STREAM_HEAD_CHARS} and last {STREAM_TAIL_CHARS} characters "
                f"of a stream …]\n{tail}")


class Outputs:
    """A running cell's outputs as they grow, bounded as the notebook keeps them (the
    ``STREAM_*`` and ``MAX_OUTPUTS`` bounds above): the host's runner adds to it from the
    thread running the cell, and may show ``render()`` — from another thread — while it runs.
    ``version`` grows with every change."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: list[dict[str, Any] | _StreamOut] = []
        self.version = 0
        self.dropped = 0
        self._clear_on_next = False
        self._displays: dict[str, list[dict[str, Any]]] = {}  # display_id: its outputs

    def _start(self) -> None:
        if self._clear_on_next:
            self.items.clear()
            self._displays.clear()
            self._clear_on_next = False

    def stream(self, name: str, text: str) -> None:
        if not text:
            return
        with self.lock:
            self._start()
            last = self.items[-1] if self.items else None
            if not (isinstance(last, _StreamOut) and last.name == name):
                if len(self.items) >= MAX_OUTPUTS:
                    last = next((o for o in reversed(self.items)
                                 if isinstance(o, _StreamOut) and o.name == name), None)
                    if last is None:
                        self.dropped += 1
                        self.version += 1
                        return
                else:
                    last = _StreamOut(name)
                    self.items.append(last)
            last.write(text)
            self.version += 1

    def add(self, output: dict[str, Any], always: bool = False) -> None:
        """Append an nbformat output; past MAX_OUTPUTS only when ``always`` (a result, an
        error), else it is counted as left out."""
        with self.lock:
            self._start()
            if len(self.items) >= MAX_OUTPUTS and not always:
                self.dropped += 1
            else:
                self.items.append(output)
            self.version += 1

    def display(self, data: dict[str, Any], metadata: dict[str, Any] | None = None,
                display_id: str | None = None, update: bool = False) -> None:
        """A ``display()``; with ``update``, the outputs shown earlier under ``display_id``
        are changed in place (``update_display``), as JupyterLab does, and nothing is added."""
        output = {"output_type": "display_data", "data": dict(data),
                  "metadata": dict(metadata or {})}
        if update:
            with self.lock:
                for shown in self._displays.get(str(display_id), []):
                    shown["data"], shown["metadata"] = output["data"], output["metadata"]
                self.version += 1
            return
        self.add(output)
        if display_id is not None:
            with self.lock:
                if any(o is output for o in self.items):
                    self._displays.setdefault(str(display_id), []).append(output)

    def clear(self, wait: bool = False) -> None:
        with self.lock:
            if wait:
                self._clear_on_next = True
            else:
                self.items.clear()
                self._displays.clear()
                self._clear_on_next = False
            self.version += 1

    def remove_errors(self, ename: str) -> None:
        with self.lock:
            self.items = [o for o in self.items if not (isinstance(o, dict) and
                          o.get("output_type") == "error" and o.get("ename") == ename)]
            self.version += 1

    def render(self) -> tuple[int, list[dict[str, Any]]]:
        """``(version, outputs)``: the outputs now as nbformat outputs (fresh dicts)."""
        with self.lock:
            out = [{"output_type": "stream", "name": o.name, "text": o.text()}
                   if isinstance(o, _StreamOut) else dict(o) for o in self.items]
            if self.dropped:
                out.append({"output_type": "stream", "name": "stderr",
                            "text": f"[run_cells left out {self.dropped} more output(s); a cell "
                                    f"keeps at most {MAX_OUTPUTS}]\n"})
            return self.version, out


def _ids(call: Call, loaded: cellview.Loaded, cell: str | None) -> list[str]:
    args = call.args
    given = [k for k in ("cell", "cells", "from") if args.get(k) not in (None, "", [])]
    if cell is not None:
        given = ["cell", *given]
    if len(given) != 1:
        raise ToolError(
            f"run_cells needs exactly one of cell, cells or from (got {', '.join(given) or 'none'})"
            f": e.g. run_cells path='{loaded.rel}' cell=ID, cells=[ID, ID], or from=ID for that "
            f"cell and all after it. Read the notebook (read path='{loaded.rel}') for the ids.",
            error="bad_arguments",
            path=loaded.rel,
        )
    if given[0] == "cells":
        wanted = args["cells"]
        if isinstance(wanted, str):
            wanted = [w.strip() for w in wanted.split(",") if w.strip()]
    else:
        wanted = [cell if cell is not None else str(args[given[0]])]
    for cid in wanted:
        cellview.find_cell(loaded, str(cid), verb="run_cells")
    if given[0] == "from":
        start = cellview.find_cell(loaded, str(wanted[0]), verb="run_cells")
        return loaded.ids[start:]
    return [str(c) for c in wanted]


def _write_outputs(call: Call, rel: str, real: str, cid: str, run: CellRun) -> str | None:
    """Put ``run``'s outputs and count into cell ``cid``; a note when they could not be."""
    try:
        with call.ws.writing([real], tool="run_cells", rel=rel):
            nb = call.ws.notebooks.load(real).copy()
            index = nb.index_of(cid)
            if index is None:
                return f"{rel}#{cid} is gone from the notebook; its outputs were not written"
            cell = nb.cells[index]
            cell["outputs"] = run.outputs
            cell["execution_count"] = run.execution_count
            call.ws.notebooks.commit([(real, nb)])
    except ToolError as exc:
        return exc.message
    except (Stale, Busy) as exc:
        return f"its outputs were not written: {exc.refusal('run_cells', rel)}"
    except OSError as exc:
        return f"its outputs were not written ({exc.strerror or exc})"
    return None


def _cell_entry(rel: str, cid: str, cell: dict[str, Any], source: str) -> dict[str, Any]:
    kind = str(cell.get("cell_type"))
    return approval.source_entry(f"{rel}#{cid}", (source if kind == "code" else "").encode(
        "utf-8", "surrogatepass"), cell=cid, type=kind)


def review_sources(call: Call) -> list[dict[str, Any]]:
    """What a held ``run_cells`` would run (the registry entry's ``sources``): every cell it
    names, in order, with its type and — a code cell — its source and sha256. ``from`` is
    resolved now, so a cell added below later is not run by the Accept."""
    path, cell = address.split(str(call.args.get("path", "")))
    loaded = cellview.load(call, path, verb="run_cells", write=True)
    out = []
    for cid in _ids(call, loaded, cell):
        index = loaded.nb.index_of(cid)
        if index is not None:
            out.append(_cell_entry(loaded.rel, cid, loaded.nb.cells[index],
                                   loaded.nb.source(index)))
    return out


def _changed_since(target: str) -> ToolError:
    return ToolError(
        f"run_cells stopped: {target} changed since the person accepted the run, so it was not "
        "run (Accept runs only the source it showed). Propose the run again if it is still "
        "wanted.", error=approval.STALE, path=target)


def _run(call: Call) -> ToolResult:
    runner = getattr(call.ws, "cell_runner", None)
    path, cell = address.split(str(call.args.get("path", "")))
    if runner is None:
        raise ToolError(
            "run_cells runs cells in a kernel's image, and this workspace has no kernel (the CLI "
            "or a script). Run the code with eval instead, or attach to the notebook's kernel.",
            error="no_kernel",
            path=path,
        )
    budget, clamp_note = clamp_timeout(call.args.get("timeout"))
    loaded = cellview.load(call, path, verb="run_cells", write=True)
    shown = approval.approved(call)  # the Accept of a held run: exactly the cells shown
    ids = [str(s["cell"]) for s in shown] if shown is not None else _ids(call, loaded, cell)
    expected = {str(s["cell"]): s for s in shown or ()}
    deadline = time.monotonic() + budget
    rows: list[str] = [clamp_note] if clamp_note else []
    ran: list[dict[str, Any]] = []
    stopped: str | None = None
    for cid in ids:
        now = cellview.load(call, path, verb="run_cells", write=True)
        index = now.nb.index_of(cid)
        target = f"{loaded.rel}#{cid}"
        if index is None:
            stopped = f"{target} is no longer in the notebook (deleted since); the run stopped"
            break
        kind = now.nb.cells[index].get("cell_type")
        source = now.nb.source(index)
        if cid in expected and not approval.same_source(
                expected[cid], _cell_entry(loaded.rel, cid, now.nb.cells[index], source)):
            if not ran:  # nothing ran yet: a refusal, as the Accept's own check would be
                raise _changed_since(target)
            stopped = (f"{target} changed since the person accepted the run, so it was not run; "
                       "the run stopped")
            break
        if kind != "code":
            ran.append({"cell": cid, "status": "skipped", "type": kind})
            rows.append(f"── {target} · {kind} · skipped (not a code cell)")
            continue
        left = deadline - time.monotonic()
        if left <= 0:
            stopped = f"the {budget:g} s budget was used up before {target}; the run stopped"
            break
        with imports.lifted():  # the cell is the person's code: its imports are its own
            result = runner.run(source, left, cell=(loaded.real, cid))
        note = _write_outputs(call, loaded.rel, loaded.real, cid, result)
        count = f"In [{result.execution_count}]" if result.execution_count is not None else "In [ ]"
        rows.append(f"── {target} · {count} · {result.status}")
        rows.extend(outputs.render(result.outputs) or ["(no output)"])
        if note:
            rows.append(f"[{note}]")
        ran.append({"cell": cid, "status": result.status,
                    "execution_count": result.execution_count,
                    "outputs": outputs.summary(result.outputs), "written": note is None})
        if result.status != "ok":
            stopped = f"{target} ended with {result.status}; the cells after it were not run"
            break
    if stopped:
        rows.append(f"[{stopped}]")
    ok = stopped is None
    details: dict[str, Any] = {"path": loaded.rel, "cells": ran}
    store_routes = getattr(call.ws.notebooks, "routes", None)
    if isinstance(store_routes, dict) and loaded.real in store_routes:
        details["document"] = store_routes[loaded.real].path
    if not ok:
        failed = ran[-1]["status"] if ran and ran[-1]["status"] in STATUSES[1:] else "stopped"
        return ToolResult.error("\n".join(rows), error=failed, **details)
    return ToolResult.success("\n".join(rows), **details)


def image_scope(call: Call) -> ImageScope:
    """The notebook's namespace and the cells' sources, for the image's undo record."""
    return ImageScope([("__main__", call.ws.namespace)],
                      [str(e.get("source") or "") for e in review_sources(call)])


TOOL = Tool(
    name="run_cells",
    profile="kli",
    gate=GATE_EVAL,
    description=(
        "Run notebook cells by id in the live kernel, as cells: outputs and execution counts "
        "appear in the notebook where the person sees them, and you get them back bounded. "
        "Cell ids are the ones read shows (read path='nb.ipynb').\n"
        "  run_cells path='nb.ipynb' cell=ID          one cell (or path='nb.ipynb#ID')\n"
        "  run_cells path='nb.ipynb' cells=[ID, ID]   these, in this order\n"
        "  run_cells path='nb.ipynb' from=ID          that cell and every cell after it\n"
        f"Markdown cells are skipped. The run stops at the first error. timeout (seconds, default "
        f"{DEFAULT_TIMEOUT}, at most {MAX_TIMEOUT}) is for the whole call; a cell past it is "
        "stopped and may have left the image partly changed. Waits for a cell the person is "
        "running."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The notebook, e.g. analysis.ipynb "
                     "(or nb.ipynb#ID for one cell)."},
            "cell": {"type": "string", "description": "The id of one cell to run."},
            "cells": {"type": "array", "items": {"type": "string"},
                      "description": "Ids of cells to run, in order."},
            "from": {"type": "string", "description": "Run this cell and every cell after it."},
            "timeout": {"type": "number", "exclusiveMinimum": 0,
                        "description": "Seconds for the whole call."},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    run=_run,
    main_arg="path",
    aliases={"cell_id": "cell", "ids": "cells", "start": "from"},
    mutates=True,
    touches_image=True,
    action=approval.EVAL,
    sources=review_sources,
    image_scope=image_scope,
)
