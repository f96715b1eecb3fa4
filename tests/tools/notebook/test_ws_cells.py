"""The slmcode profile on notebook cells: ws_read / ws_edit / ws_patch with nb.ipynb#CELL_ID."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from kli.tools.core.workspace import Workspace


def _nb(path: Path, ids: bool = True) -> None:
    nb = new_notebook(metadata={"kernelspec": {"name": "python3", "language": "python",
                                               "display_name": "Python 3"}})
    code = new_code_cell("import math\nx = math.pi\nprint(x)", id="code", execution_count=1)
    code.outputs = [new_output("stream", name="stdout", text="3.14\n")]
    nb.cells = [code, new_markdown_cell("# Notes\nfirst", id="md")]
    if not ids:
        nb.nbformat_minor = 4
        for c in nb.cells:
            del c["id"]
    nbformat.write(nb, str(path))


def _sources(path: Path) -> list[str]:
    nb = nbformat.read(str(path), 4)
    nbformat.validate(nb)
    return [c.source for c in nb.cells]


def test_ws_read_shows_cells_with_headers_and_the_gutter_inside_each_cell(tmp_path: Path) -> None:
    _nb(tmp_path / "nb.ipynb")
    ws = Workspace(str(tmp_path))
    r = ws.call("ws_read", {"path": "nb.ipynb"})
    assert r.ok
    assert r.text.splitlines()[:3] == [
        "── nb.ipynb#code · cell 1/2 · code · In [1] · out: stdout 1 line",
        "     1|import math",
        "     2|x = math.pi",
    ]
    assert "     1|# Notes" in r.text
    r = ws.call("ws_read", {"path": "nb.ipynb#code", "offset": 2, "limit": 1})
    assert "     2|x = math.pi" in r.text and "     3|" not in r.text
    assert "outputs:" in r.text and "  3.14" in r.text


def test_ws_edit_changes_one_cell_and_keeps_the_rest(tmp_path: Path) -> None:
    _nb(tmp_path / "nb.ipynb")
    ws = Workspace(str(tmp_path))
    r = ws.call("ws_edit", {"path": "nb.ipynb#md", "old_str": "first", "new_str": "second"})
    assert r.ok, r.text
    assert _sources(tmp_path / "nb.ipynb") == ["import math\nx = math.pi\nprint(x)",
                                                "# Notes\nsecond"]
    assert nbformat.read(str(tmp_path / "nb.ipynb"), 4).cells[0].outputs[0].text == "3.14\n"


def test_ws_edit_reverts_a_change_that_breaks_a_python_cell(tmp_path: Path) -> None:
    _nb(tmp_path / "nb.ipynb")
    before = (tmp_path / "nb.ipynb").read_text()
    ws = Workspace(str(tmp_path))
    r = ws.call("ws_edit", {"path": "nb.ipynb#code", "old_str": "x = math.pi",
                            "new_str": "x = (math.pi"})
    assert not r.ok and r.details["error"] == "syntax_reverted"
    assert "EDIT REVERTED — nb.ipynb#code" in r.text
    assert (tmp_path / "nb.ipynb").read_text() == before
    # A magic line is not a syntax error.
    r = ws.call("ws_edit", {"path": "nb.ipynb#code", "old_str": "import math",
                            "new_str": "%load_ext autoreload\nimport math"})
    assert r.ok, r.text


def test_ws_edit_misses_with_the_ladder_and_names_the_cell(tmp_path: Path) -> None:
    _nb(tmp_path / "nb.ipynb")
    ws = Workspace(str(tmp_path))
    r = ws.call("ws_edit", {"path": "nb.ipynb#code", "old_str": "y = 2", "new_str": "y = 3"})
    assert not r.ok and r.details["error"] == "not_found"
    r = ws.call("ws_edit", {"path": "nb.ipynb#nope", "old_str": "a", "new_str": "b"})
    assert not r.ok and "has no cell 'nope'" in r.text and "code, md" in r.text


def test_ws_patch_changes_cells_and_files_all_or_nothing(tmp_path: Path) -> None:
    _nb(tmp_path / "nb.ipynb", ids=False)
    (tmp_path / "m.py").write_text("a = 1\n")
    ws = Workspace(str(tmp_path))
    ids = ws.call("ws_read", {"path": "nb.ipynb"}).details["cell_ids"]
    good = (f"--- a/nb.ipynb#{ids[1]}\n+++ b/nb.ipynb#{ids[1]}\n@@ -1,2 +1,2 @@\n # Notes\n"
            "-first\n+second\n--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n")
    bad = good.replace("-a = 1", "-a = 9")
    before = (tmp_path / "nb.ipynb").read_text()
    r = ws.call("ws_patch", {"patch": bad})
    assert not r.ok and (tmp_path / "nb.ipynb").read_text() == before
    r = ws.call("ws_patch", {"patch": good})
    assert r.ok, r.text
    assert _sources(tmp_path / "nb.ipynb")[1] == "# Notes\nsecond"
    assert (tmp_path / "m.py").read_text() == "a = 2\n"
    assert [c.id for c in nbformat.read(str(tmp_path / "nb.ipynb"), 4).cells] == ids
