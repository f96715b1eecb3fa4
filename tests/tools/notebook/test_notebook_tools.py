"""read / edit / search / cells on notebooks, beyond the fixture folders: cells and files in
one patch, fresh anchors, search hits as PATH#CELL_ID, previews accepted per cell."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from kli.tools.core.workspace import Workspace
from kli.tools.file.anchors import line_hash


def _write(path: Path, *cells: nbformat.NotebookNode, ids: bool = True) -> None:
    nb = new_notebook(metadata={"language_info": {"name": "python"}})
    nb.cells = list(cells)
    if not ids:
        nb.nbformat_minor = 4
        for c in nb.cells:
            del c["id"]
    nbformat.write(nb, str(path))


def _a(n: int, text: str) -> str:
    return f"{n}:{line_hash(text)}"


def test_a_patch_over_a_cell_and_a_file_is_whole_or_nothing(tmp_path: Path) -> None:
    _write(tmp_path / "nb.ipynb", new_code_cell("x = 1", id="a"))
    (tmp_path / "m.py").write_text("y = 2\n")
    ws = Workspace(str(tmp_path))
    ws.call("read", {"path": "nb.ipynb"})
    ws.call("read", {"path": "m.py"})
    nb_before = (tmp_path / "nb.ipynb").read_text()
    # The file's anchor is stale: neither the file nor the cell is written.
    r = ws.call("edit", {"input": f"@@ nb.ipynb#a\n= {_a(1, 'x = 1')}\n~x = 10\n"
                                  f"@@ m.py\n= {_a(1, 'y = 3')}\n~y = 20\n"})
    assert not r.ok and "m.py" in r.text
    assert (tmp_path / "nb.ipynb").read_text() == nb_before
    r = ws.call("edit", {"input": f"@@ nb.ipynb#a\n= {_a(1, 'x = 1')}\n~x = 10\n"
                                  f"@@ m.py\n= {_a(1, 'y = 2')}\n~y = 20\n"})
    assert r.ok, r.text
    assert (tmp_path / "m.py").read_text() == "y = 20\n"
    assert nbformat.read(str(tmp_path / "nb.ipynb"), 4).cells[0].source == "x = 10"
    assert [f["path"] for f in r.details["files"]] == ["nb.ipynb#a", "m.py"]


def test_fresh_anchors_after_a_cell_edit_serve_the_next_edit(tmp_path: Path) -> None:
    _write(tmp_path / "nb.ipynb", new_code_cell("a = 1\nb = 2", id="c"))
    ws = Workspace(str(tmp_path))
    ws.call("read", {"path": "nb.ipynb#c"})
    r = ws.call("edit", {"input": f"@@ nb.ipynb#c\n+ {_a(1, 'a = 1')}\n~z = 0\n"})
    assert r.ok and f"3:{line_hash('b = 2')}|b = 2" in r.text
    r = ws.call("edit", {"input": f"@@ nb.ipynb#c\n= {_a(3, 'b = 2')}\n~b = 3\n"})
    assert r.ok, r.text
    assert nbformat.read(str(tmp_path / "nb.ipynb"), 4).cells[0].source == "a = 1\nz = 0\nb = 3"


def test_a_search_hit_names_the_cell_and_its_line_and_records_its_anchors(tmp_path: Path) -> None:
    _write(tmp_path / "nb.ipynb", new_markdown_cell("# t", id="m"),
           new_code_cell("import os\nvalue = 42", id="k"))
    ws = Workspace(str(tmp_path))
    r = ws.call("search", {"pattern": "value", "path": "."})
    assert r.ok and "nb.ipynb#k (1 matching line; code cell 2/2)" in r.text
    assert f"*2:{line_hash('value = 42')}|value = 42" in r.text
    assert '"source"' not in r.text  # the cells were searched, not the JSON
    r = ws.call("edit", {"input": f"@@ nb.ipynb#k\n= {_a(2, 'value = 42')}\n~value = 43\n"})
    assert r.ok, r.text


def test_a_read_of_a_notebook_without_ids_writes_nothing_and_its_stand_ins_edit(
    tmp_path: Path,
) -> None:
    _write(tmp_path / "nb.ipynb", new_code_cell("x = 1"), new_code_cell("y = 2"), ids=False)
    before = (tmp_path / "nb.ipynb").read_text()
    ws = Workspace(str(tmp_path))
    r = ws.call("read", {"path": "nb.ipynb"})
    assert r.ok and r.details["stand_in_ids"] and "stand-in" in r.text
    assert (tmp_path / "nb.ipynb").read_text() == before
    second = r.details["cell_ids"][1]
    r = ws.call("edit", {"input": f"@@ nb.ipynb#{second}\n= {_a(1, 'y = 2')}\n~y = 3\n"})
    assert r.ok and "had no cell ids: wrote ids for 2 cell(s)" in r.text
    nb = nbformat.read(str(tmp_path / "nb.ipynb"), 4)
    nbformat.validate(nb)
    assert [c.id for c in nb.cells] == r.details["ids_written"]["nb.ipynb"]
    assert nb.cells[1].id == second and nb.nbformat_minor == 5


def test_a_cell_repair_preview_is_accepted_into_the_notebook(tmp_path: Path) -> None:
    _write(tmp_path / "nb.ipynb", new_code_cell("f(1)", id="p"), new_code_cell("g()", id="q"))
    ws = Workspace(str(tmp_path))
    ws.call("read", {"path": "nb.ipynb"})
    r = ws.call("edit", {"input": f"@@ nb.ipynb#p\n= {_a(1, 'f(1)')}\n~f([1, 2)\n",
                         "repair": "preview"})
    assert r.ok and r.details["candidate"]
    assert nbformat.read(str(tmp_path / "nb.ipynb"), 4).cells[0].source == "f(1)"
    # the preview's diff is of the sources Accept writes: no final newline the cell lacks
    (shown,) = r.details["files"]
    assert (shown["before"], shown["after"]) == ("f(1)", "f([1, 2])")
    assert (shown["added"], shown["removed"]) == (1, 1)
    r = ws.call("edit", {"accept_repair": r.details["candidate"], "path": "nb.ipynb#p"})
    assert r.ok, r.text
    nb = nbformat.read(str(tmp_path / "nb.ipynb"), 4)
    assert [c.source for c in nb.cells] == ["f([1, 2])", "g()"]


def test_an_inserted_cell_is_ready_for_edit(tmp_path: Path) -> None:
    _write(tmp_path / "nb.ipynb", new_code_cell("x = 1", id="a"))
    ws = Workspace(str(tmp_path))
    ws.call("read", {"path": "nb.ipynb"})
    r = ws.call("cells", {"path": "nb.ipynb", "op": "insert", "where": "end",
                          "source": "print(x)"})
    assert r.ok, r.text
    new = r.details["cell"]
    r = ws.call("edit", {"input": f"@@ nb.ipynb#{new}\n= {_a(1, 'print(x)')}\n~print(x + 1)\n"})
    assert r.ok, r.text
    nbformat.validate(nbformat.read(str(tmp_path / "nb.ipynb"), 4))


def test_a_cells_op_refuses_when_the_notebook_changed_under_it(tmp_path: Path) -> None:
    _write(tmp_path / "nb.ipynb", new_code_cell("x = 1", id="a"), new_code_cell("y", id="b"))
    ws = Workspace(str(tmp_path))
    ws.call("read", {"path": "nb.ipynb"})

    class Racing(type(ws.notebooks)):  # the file changes between load and commit
        def commit(self, notebooks, files=(), expected=None):  # type: ignore[no-untyped-def]
            (tmp_path / "nb.ipynb").write_text(
                (tmp_path / "nb.ipynb").read_text().replace('"y"', '"y2"'))
            return super().commit(notebooks, files, expected)

    ws.notebooks = Racing(ws.jail)
    r = ws.call("cells", {"path": "nb.ipynb", "op": "delete", "cell": "a"})
    assert not r.ok and r.details["error"] == "stale" and "changed by another program" in r.text
    assert [c.source for c in nbformat.read(str(tmp_path / "nb.ipynb"), 4).cells] == ["x = 1", "y2"]


def test_find_lists_cells_of_notebooks_as_addresses(tmp_path: Path) -> None:
    _write(tmp_path / "nb.ipynb", new_code_cell("x", id="load-data"),
           new_markdown_cell("m", id="notes"))
    (tmp_path / "sub").mkdir()
    _write(tmp_path / "sub" / "b.ipynb", new_code_cell("y", id="load-more"))
    (tmp_path / "sub" / "broken.ipynb").write_text("{")
    ws = Workspace(str(tmp_path))
    r = ws.call("find", {"pattern": "**/*.ipynb#load-*"})
    assert r.ok
    assert r.text.splitlines()[:2] == ["nb.ipynb#load-data", "sub/b.ipynb#load-more"]
    assert "1 matching file(s) are not notebooks" in r.text
    assert ws.call("find", {"pattern": "nb.ipynb"}).text == "nb.ipynb"


def test_write_and_ws_write_refuse_a_cell_address_instead_of_making_a_file(tmp_path: Path) -> None:
    _write(tmp_path / "nb.ipynb", new_code_cell("x", id="a"))
    ws = Workspace(str(tmp_path))
    for tool in ("write", "ws_write"):
        r = ws.call(tool, {"path": "nb.ipynb#a", "content": "y"})
        assert not r.ok and r.details["error"] == "notebook_cell", r.text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nb.ipynb"]


def test_a_notebook_that_does_not_parse_reads_as_text_and_is_repaired_with_edit(
    tmp_path: Path,
) -> None:
    _write(tmp_path / "nb.ipynb", new_code_cell("x = 1", id="a"))
    good = (tmp_path / "nb.ipynb").read_text()
    lines = good.splitlines()
    broken = "\n".join([lines[0], "<<<<<<< HEAD", *lines[1:]]) + "\n"
    (tmp_path / "nb.ipynb").write_text(broken)
    ws = Workspace(str(tmp_path))
    r = ws.call("read", {"path": "nb.ipynb"})
    assert r.ok and "does not parse as a notebook" in r.text
    assert f"2:{line_hash('<<<<<<< HEAD')}|<<<<<<< HEAD" in r.text
    r = ws.call("edit", {"input": f"@@ nb.ipynb\n- 2:{line_hash('<<<<<<< HEAD')}\n"})
    assert r.ok, r.text
    assert (tmp_path / "nb.ipynb").read_text() == good
    r = ws.call("read", {"path": "nb.ipynb"})
    assert r.details["cell_ids"] == ["a"]
    # Now it is a notebook again: a whole-file section is refused.
    r = ws.call("edit", {"input": f"@@ nb.ipynb\n- 2:{line_hash(lines[1])}\n"})
    assert not r.ok and r.details["error"] == "notebook"


def test_an_insert_naming_only_a_cell_goes_after_it(tmp_path: Path) -> None:
    _write(tmp_path / "nb.ipynb", new_code_cell("a", id="a"), new_code_cell("b", id="b"))
    ws = Workspace(str(tmp_path))
    ws.call("read", {"path": "nb.ipynb"})
    r = ws.call("cells", {"path": "nb.ipynb", "op": "insert", "cell": "a", "source": "mid"})
    assert r.ok and "after nb.ipynb#a" in r.text
    r = ws.call("cells", {"path": "nb.ipynb", "op": "insert", "source": "last"})
    assert r.ok and "at the end" in r.text
    assert [c.source for c in nbformat.read(str(tmp_path / "nb.ipynb"), 4).cells] == [
        "a", "mid", "b", "last"]


def test_a_cell_the_person_changed_since_the_read_is_not_edited_anywhere_in_it(
    tmp_path: Path,
) -> None:
    """Issue 17: the person's edit of a cell after the agent read it refuses the agent's edit
    of that cell, even of a line the person did not touch (a file merges such an edit; a cell
    does not); an edit of another cell still applies, and the agent's own edits never make its
    next edit stale."""
    _write(tmp_path / "nb.ipynb", new_code_cell("a = 1\nb = 2\nc = 3", id="p"),
           new_code_cell("d = 4", id="q"))
    ws = Workspace(str(tmp_path))
    ws.call("read", {"path": "nb.ipynb"})
    r = ws.call("edit", {"input": f"@@ nb.ipynb#p\n= {_a(3, 'c = 3')}\n~c = 30\n"})
    assert r.ok, r.text  # its own edit moves the version along
    nb = nbformat.read(str(tmp_path / "nb.ipynb"), 4)
    nb.cells[0].source = "a = 100\nb = 2\nc = 30"  # the person changes line 1
    nbformat.write(nb, str(tmp_path / "nb.ipynb"))
    before = (tmp_path / "nb.ipynb").read_text()
    r = ws.call("edit", {"input": f"@@ nb.ipynb#p\n= {_a(2, 'b = 2')}\n~b = 20\n"})
    assert not r.ok and r.details["error"] == "stale", r.text
    assert "nb.ipynb#p" in r.text and "lines 1-1 differ" in r.text
    assert "Nothing was written" in r.text
    assert (tmp_path / "nb.ipynb").read_text() == before
    r = ws.call("edit", {"input": f"@@ nb.ipynb#q\n= {_a(1, 'd = 4')}\n~d = 40\n"})
    assert r.ok, r.text
    assert [c.source for c in nbformat.read(str(tmp_path / "nb.ipynb"), 4).cells] == [
        "a = 100\nb = 2\nc = 30", "d = 40"]
    ws.call("read", {"path": "nb.ipynb#p"})
    r = ws.call("edit", {"input": f"@@ nb.ipynb#p\n= {_a(2, 'b = 2')}\n~b = 20\n"})
    assert r.ok, r.text


def test_a_stand_in_of_identical_cells_is_stale_once_the_cells_changed(tmp_path: Path) -> None:
    _write(tmp_path / "nb.ipynb", new_code_cell("x = 1"), new_code_cell("x = 1"), ids=False)
    ws = Workspace(str(tmp_path))
    first, second = ws.call("read", {"path": "nb.ipynb"}).details["cell_ids"]
    assert second == first + "-2"
    # The person changes the first twin: the second is now the only one, stand-in `first`.
    nb = nbformat.read(str(tmp_path / "nb.ipynb"), 4)
    nb.cells[0].source = "x = 0"
    nbformat.write(nb, str(tmp_path / "nb.ipynb"))
    before = (tmp_path / "nb.ipynb").read_text()
    r = ws.call("edit", {"input": f"@@ nb.ipynb#{first}\n= {_a(1, 'x = 1')}\n~x = 2\n"})
    assert not r.ok and r.details["error"] == "stale" and "identical cells" in r.text
    r = ws.call("cells", {"path": "nb.ipynb", "op": "delete", "cell": first})
    assert not r.ok and r.details["error"] == "stale"
    assert (tmp_path / "nb.ipynb").read_text() == before


def test_a_notebook_over_2_mib_of_outputs_is_still_searched_as_cells(tmp_path: Path) -> None:
    from nbformat.v4 import new_output

    cell = new_code_cell("plot(data)", id="p")
    cell.outputs = [new_output("display_data", data={"image/png": "A" * (3 * 1024 * 1024)})]
    _write(tmp_path / "nb.ipynb", cell)
    (tmp_path / "big.txt").write_text("plot\n" * (600 * 1024))
    ws = Workspace(str(tmp_path))
    r = ws.call("search", {"pattern": "plot", "path": "**/*"})
    assert "nb.ipynb#p (1 matching line" in r.text
    assert r.details["skipped_too_large"] == 1  # the plain file over 2 MiB is skipped as before
