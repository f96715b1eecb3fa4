"""A notebook as the tools see it: its JSON kept as loaded, its cells, their ids.

``parse`` keeps the parsed JSON (key order included) and the layout it was written in, so
``serialize`` of an unchanged notebook gives back the same text, and a changed one differs only
in the fields a change touched. The layout is found by trying the writers' usual settings
(``Layout``: indent, sorted keys, escaped non-ASCII, a final newline; nbformat writes indent 1,
sorted keys, UTF-8 and a final newline). A notebook whose text none of them reproduces is
written in nbformat's layout (``Notebook.layout.exact`` is False and the result says so).

Cell ids (nbformat 4.5): a cell without one has a stand-in id, ``stand_in_ids`` (core's,
``kli.tools.core.cellids``, as core's undo needs it): the first 8 hex
digits of a SHA-1 of the cell's type and source, with ``-2``, ``-3`` … for later cells of the
same type and source. A stand-in depends on the cell alone, not on its position, so it survives
an insert, a delete or an edit of any other cell; the first change written to the notebook
writes every missing id as its stand-in (``assign_ids``), so the ids read showed stay valid.
A change of the cell's own source changes its stand-in, and an edit naming the old one is
refused (the cell changed since it was read), as a stale anchor is.
"""

from __future__ import annotations

import copy
import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from kli.tools.core.cellids import source_text, stand_in_ids

CELL_TYPES = ("code", "markdown", "raw")
ID_RE = re.compile(r"^[a-zA-Z0-9-_]{1,64}$")  # nbformat 4.5's cell id pattern
IDS_MINOR = 5  # the nbformat 4 minor version that has cell ids


class NotebookError(ValueError):
    """The text is not a notebook the tools can change (not JSON, not nbformat 4)."""


@dataclass(frozen=True)
class Layout:
    indent: int | None = 1
    sort_keys: bool = True
    ensure_ascii: bool = False
    newline: bool = True
    exact: bool = True  # False: the original's layout was not recognised

    def dumps(self, data: Any) -> str:
        text = json.dumps(
            data,
            indent=self.indent,
            sort_keys=self.sort_keys,
            ensure_ascii=self.ensure_ascii,
            separators=(",", ": ") if self.indent is not None else (", ", ": "),
        )
        return text + "\n" if self.newline else text


NBFORMAT_LAYOUT = Layout()


def _detect_layout(text: str, data: Any) -> Layout:
    newline = text.endswith("\n")
    m = re.match(r"\{\n( +)\"", text)
    indents: list[int | None] = [len(m.group(1))] if m else [None]
    for indent in indents:
        for sort_keys in (True, False):
            # An ASCII text is reproduced by both settings or by neither.
            for ensure_ascii in (False,) if text.isascii() else (False, True):
                layout = Layout(indent, sort_keys, ensure_ascii, newline)
                if layout.dumps(data) == text:
                    return layout
    return Layout(exact=False)


def _as_stored(text: str, like: Any) -> Any:
    """``text`` in the form ``like`` was stored in: a list of lines (nbformat) or a string."""
    if isinstance(like, str):
        return text
    return text.splitlines(keepends=True)


def new_cell_id(taken: set[str]) -> str:
    """A fresh id as nbformat makes them (8 hex digits of a random UUID), not in ``taken``."""
    while True:
        cid = uuid.uuid4().hex[:8]
        if cid not in taken:
            return cid


@dataclass
class Notebook:
    """A loaded notebook. ``raw`` is the text it was loaded from (what a store compares
    against before writing); ``data`` the parsed JSON, changed in place by a change set."""

    raw: str
    data: dict[str, Any]
    layout: Layout = NBFORMAT_LAYOUT
    ids_written: list[str] = field(default_factory=list)  # stand-ins ``assign_ids`` made real

    @property
    def cells(self) -> list[dict[str, Any]]:
        cells = self.data.get("cells")
        assert isinstance(cells, list)
        return cells

    def ids(self) -> list[str]:
        return stand_in_ids(self.cells)

    def has_own_id(self, index: int) -> bool:
        cid = self.cells[index].get("id")
        return isinstance(cid, str) and bool(cid)

    def index_of(self, cell_id: str) -> int | None:
        for i, cid in enumerate(self.ids()):
            if cid == cell_id:
                return i
        return None

    @property
    def language(self) -> str | None:
        """The kernel's language from the metadata (``language_info.name``, else the
        kernelspec's ``language``), lower case; None when the metadata names none."""
        meta = self.data.get("metadata")
        if not isinstance(meta, dict):
            return None
        info = meta.get("language_info")
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            return str(info["name"]).lower()
        spec = meta.get("kernelspec")
        if isinstance(spec, dict) and isinstance(spec.get("language"), str):
            return str(spec["language"]).lower()
        return None

    @property
    def is_python(self) -> bool:
        """Code cells are Python: the metadata says python, or names no language at all."""
        return self.language in (None, "python", "ipython", "python3")

    @property
    def version(self) -> tuple[int, int]:
        return int(self.data.get("nbformat", 0)), int(self.data.get("nbformat_minor", 0))

    def copy(self) -> Notebook:
        return Notebook(self.raw, copy.deepcopy(self.data), self.layout, list(self.ids_written))

    # -- changes (in place) --------------------------------------------------------------
    def source(self, index: int) -> str:
        return source_text(self.cells[index].get("source"))

    def set_source(self, index: int, text: str) -> None:
        cell = self.cells[index]
        cell["source"] = _as_stored(text, cell.get("source", []))

    def assign_ids(self) -> list[str]:
        """Write every missing id as its stand-in; raise the minor version to 5 when ids were
        added to a notebook older than that. Returns the ids written (also kept in
        ``ids_written``)."""
        ids = self.ids()
        added = []
        for i, cell in enumerate(self.cells):
            if not self.has_own_id(i):
                cell["id"] = ids[i]
                added.append(ids[i])
        if added and self.version[0] == 4 and self.version[1] < IDS_MINOR:
            self.data["nbformat_minor"] = IDS_MINOR
        self.ids_written.extend(added)
        return added

    def serialize(self) -> str:
        return self.layout.dumps(self.data)


def parse(text: str) -> Notebook:
    """The notebook in ``text``, or ``NotebookError`` saying why it is not one."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise NotebookError(f"it is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError("it has no 'cells' list (not an nbformat 4 notebook)")
    if data.get("nbformat") != 4:
        raise NotebookError(
            f"it is nbformat {data.get('nbformat')!r}; only nbformat 4 notebooks are handled "
            "(convert it with jupyter nbconvert --to notebook)"
        )
    for i, cell in enumerate(data["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") not in CELL_TYPES:
            raise NotebookError(f"cell {i + 1} is not a code, markdown or raw cell")
    return Notebook(text, data, _detect_layout(text, data))


def new_cell(cell_type: str, source: str, cell_id: str) -> dict[str, Any]:
    """A cell as nbformat 4.5 makes one (keys as its ``new_*_cell`` give them)."""
    cell: dict[str, Any] = {"cell_type": cell_type, "id": cell_id, "metadata": {}}
    if cell_type == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    cell["source"] = _as_stored(source, [])
    return cell


def set_type(cell: dict[str, Any], cell_type: str) -> None:
    """Change a cell's type in place, keeping its source, id and metadata: a code cell gets
    empty outputs and no execution count; other cells lose them (and a code cell keeps no
    attachments, which nbformat allows only on markdown and raw cells)."""
    cell["cell_type"] = cell_type
    if cell_type == "code":
        cell.setdefault("execution_count", None)
        cell.setdefault("outputs", [])
        cell.pop("attachments", None)
    else:
        cell.pop("execution_count", None)
        cell.pop("outputs", None)


def clear_outputs(cell: dict[str, Any]) -> bool:
    """Clear a code cell's outputs and execution count; True when something was there."""
    had = bool(cell.get("outputs")) or cell.get("execution_count") is not None
    if cell.get("cell_type") == "code":
        cell["outputs"] = []
        cell["execution_count"] = None
    return had
