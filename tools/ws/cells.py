"""Notebook cells for the slmcode tools: ``ws_read``, ``ws_edit`` and ``ws_patch`` address one
cell as ``nb.ipynb#CELL_ID`` (the ids ``ws_read path='nb.ipynb'`` shows), in their own style.

A cell's text is its source; the slmcode rules (the ladder, the caps, the refusals) apply to it
as to a file's text. After the change the post-edit syntax check runs on a code cell of a Python
notebook (IPython ``%`` / ``!`` lines masked, ``notebook.magics``); markdown and raw cells are
not checked. The write is one ``NotebookStore.commit`` of the notebook, expected to be still what
was loaded; a notebook without ids gets them written (the stand-ins shown) with the first change.
"""

from __future__ import annotations

from dataclasses import dataclass

from kli.tools.core.registry import Call
from kli.tools.core.result import ToolError
from kli.tools.file import cellview
from kli.tools.notebook import address, magics
from kli.tools.ws.common import compact_json
from kli.tools.ws.syntax import SyntaxOutcome, check_file, outcome_note, reverted_message

PYTHON_PROBE = "cell.py"  # the name the syntax checker is given for a Python code cell


@dataclass
class CellText:
    loaded: cellview.Loaded
    index: int
    cell_id: str
    rel: str  # nb.ipynb#CELL_ID
    text: str

    @property
    def python(self) -> bool:
        nb = self.loaded.nb
        return (
            nb.cells[self.index].get("cell_type") == "code"
            and nb.is_python
            and magics.python_body(self.text)
        )


def split(path: str) -> tuple[str, str | None]:
    return address.split(path)


def open_cell(
    call: Call,
    nb_path: str,
    cell_id: str,
    tool: str,
    *,
    write: bool,
    loaded: cellview.Loaded | None = None,
) -> CellText:
    """Load the notebook (unless ``loaded`` is it already) and find the cell, or a ToolError
    in ``tool``'s words."""
    if loaded is None:
        try:
            loaded = cellview.load(call, nb_path, verb=tool, write=write)
        except ToolError as exc:
            raise ToolError(f"{tool}: {exc.message}", **exc.details) from None
    index = loaded.nb.index_of(cell_id)
    if index is None:
        listing = ", ".join(loaded.ids[:20]) + (" …" if len(loaded.ids) > 20 else "")
        raise ToolError(
            f"{tool}: {loaded.rel} has no cell {cell_id!r} (its cells: {listing or 'none'}). "
            f"List them with ws_read {compact_json({'path': loaded.rel})}.",
            error="not_found",
        )
    return CellText(loaded, index, cell_id, f"{loaded.rel}#{cell_id}", loaded.nb.source(index))


def check(cell: CellText, after: str, *, disabled: bool) -> SyntaxOutcome:
    if not cell.python:
        return SyntaxOutcome("skipped", None, "not a Python code cell")
    return check_file(
        PYTHON_PROBE, magics.mask(cell.text), magics.mask(after), disabled=disabled
    )


def write(call: Call, cell: CellText, after: str) -> list[str]:
    """Write ``after`` as the cell's source (``atomic.Stale`` when the notebook changed since it
    was loaded). Returns the ids written into a notebook that had none."""
    nb = cell.loaded.nb.copy()
    added = nb.assign_ids()  # before the change: each id is the stand-in shown
    nb.set_source(cell.index, after)
    call.ws.notebooks.commit([(cell.loaded.real, nb)])
    return added


def check_and_write(
    call: Call, cell: CellText, after: str, *, disabled: bool
) -> tuple[bool, str, SyntaxOutcome, list[str]]:
    """``ws.syntax.apply_with_syntax_check`` for a cell: ``(wrote, note, outcome, ids)``."""
    outcome = check(cell, after, disabled=disabled)
    if outcome.status == "reverted":
        return False, reverted_message(cell.rel, outcome), outcome, []
    added = write(call, cell, after)
    return True, outcome_note(cell.rel, outcome), outcome, added


def ids_note(cell: CellText, added: list[str]) -> str:
    if not added:
        return ""
    return (
        f"[{cell.loaded.rel} had no cell ids: wrote ids for {len(added)} cell(s), each the id "
        "ws_read showed]"
    )
