"""kli.tools.notebook.model: a notebook's text is given back as loaded, ids and stand-ins."""

from __future__ import annotations

import json

import nbformat
from hypothesis import given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

from kli.tools.notebook.model import NotebookError, parse, stand_in_ids

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_sources = st.lists(_text, max_size=4).map("\n".join)
_cells = st.lists(
    st.tuples(st.sampled_from(["code", "markdown", "raw"]), _sources), min_size=0, max_size=6
)
_MAKERS = {"code": new_code_cell, "markdown": new_markdown_cell, "raw": new_raw_cell}


def _nb(cells: list[tuple[str, str]]) -> nbformat.NotebookNode:
    nb = new_notebook(metadata={"language_info": {"name": "python"}})
    nb.cells = [_MAKERS[kind](source) for kind, source in cells]
    return nb


@settings(max_examples=60, deadline=None)
@given(_cells)
def test_an_nbformat_written_notebook_serializes_to_the_same_text(cells) -> None:
    text = nbformat.writes(_nb(cells)) + "\n"
    nb = parse(text)
    assert nb.layout.exact
    assert nb.serialize() == text


@settings(max_examples=60, deadline=None)
@given(_cells, st.integers(0, 5), _sources)
def test_changing_one_cell_source_changes_only_that_cell_in_the_text(cells, which, new) -> None:
    if not cells:
        return
    which %= len(cells)
    text = nbformat.writes(_nb(cells)) + "\n"
    nb = parse(text)
    nb.set_source(which, new)
    expected = nbformat.reads(text, as_version=4)
    expected.cells[which].source = new
    assert nb.serialize() == nbformat.writes(expected) + "\n"
    nbformat.validate(nbformat.reads(nb.serialize(), as_version=4))


@settings(max_examples=60, deadline=None)
@given(_cells, st.integers(0, 6), st.sampled_from(["code", "markdown"]), _sources)
def test_a_stand_in_id_survives_inserts_deletes_and_edits_of_other_cells(
    cells, at, kind, source
) -> None:
    nb = _nb(cells)
    for c in nb.cells:
        del c["id"]
    before = dict(zip(map(id, nb.cells), stand_in_ids(nb.cells), strict=True))
    at %= len(nb.cells) + 1
    extra = _MAKERS[kind](source)
    del extra["id"]
    nb.cells.insert(at, extra)
    after = stand_in_ids(nb.cells)
    for cell, cid in zip(nb.cells, after, strict=True):
        if cell is not extra and before[id(cell)] != cid:
            # Only a duplicate of the inserted cell ahead of it may be renumbered.
            assert (cell.cell_type, cell.source) == (kind, source)
    assert len(set(after)) == len(after)


def test_stand_in_ids_are_valid_nbformat_ids_and_unique_for_duplicates() -> None:
    nb = _nb([("code", "x = 1"), ("code", "x = 1"), ("markdown", "x = 1")])
    for c in nb.cells:
        del c["id"]
    ids = stand_in_ids(nb.cells)
    assert ids[1] == ids[0] + "-2" and ids[2] != ids[0]
    nb.nbformat_minor = 5
    for c, i in zip(nb.cells, ids, strict=True):
        c["id"] = i
    nbformat.validate(nb)


def test_a_layout_nbformat_does_not_write_is_kept() -> None:
    data = json.loads(nbformat.writes(_nb([("code", "a\nb")])))
    text = json.dumps(data, indent=4, ensure_ascii=True)  # no final newline, unsorted
    nb = parse(text)
    assert nb.layout.exact and nb.serialize() == text


def test_an_unrecognised_layout_is_written_as_nbformat_writes() -> None:
    text = nbformat.writes(_nb([("code", "a")])).replace('"cells": [', '"cells":  [')
    nb = parse(text)
    assert not nb.layout.exact
    assert nb.serialize() == nbformat.writes(nbformat.reads(text, as_version=4)) + "\n"


def test_not_a_notebook_says_why() -> None:
    for text, why in [("{", "not valid JSON"), ("{}", "no 'cells'"),
                      ('{"cells": [], "nbformat": 3}', "nbformat 3")]:
        try:
            parse(text)
        except NotebookError as exc:
            assert why in str(exc)
        else:
            raise AssertionError(text)
