"""Property: a hashline replace inside one cell changes exactly that cell's lines, and the
notebook written is the one nbformat writes for that change (every other field as it was)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import nbformat
from hypothesis import given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from kli.tools.core.workspace import Workspace
from kli.tools.file.anchors import line_hash

_line = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=20)
# A source ending in an empty line would be one line shorter than the list: keep the last one.
_lines = st.lists(_line, min_size=1, max_size=6).filter(lambda ls: ls[-1] != "")


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), _lines), min_size=1, max_size=4),
    st.integers(0, 3),
    st.integers(0, 5),
    st.integers(0, 5),
    st.lists(_line, max_size=3),
)
def test_a_replace_in_a_cell_is_the_nbformat_change_of_that_cell(
    cells, which, a, b, payload
) -> None:
    which %= len(cells)
    nb = new_notebook(metadata={"language_info": {"name": "markdown-only"}})
    nb.cells = [
        (new_code_cell if code else new_markdown_cell)("\n".join(lines), id=f"c{i}")
        for i, (code, lines) in enumerate(cells)
    ]
    lines = cells[which][1]
    first, last = sorted((a % len(lines) + 1, b % len(lines) + 1))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "nb.ipynb"
        nbformat.write(nb, str(path))
        ws = Workspace(tmp)
        assert ws.call("read", {"path": f"nb.ipynb#c{which}"}).ok
        op = (f"= {first}:{line_hash(lines[first - 1])}..{last}:{line_hash(lines[last - 1])}")
        patch = "\n".join([f"@@ nb.ipynb#c{which}", op, *("~" + p for p in payload)]) + "\n"
        r = ws.call("edit", {"input": patch})
        assert r.ok, r.text
        new_lines = lines[: first - 1] + payload + lines[last:]
        nb.cells[which].source = "\n".join(new_lines)
        assert path.read_text() == nbformat.writes(nb) + "\n"
