"""A notebook using the magics, executed with nbclient on the kli kernel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from kli.kernel import EDIT_MIME
from kli.tools.file.anchors import line_hash

pytestmark = pytest.mark.kernel


def _text(outputs: list[Any], name: str = "stdout") -> str:
    return "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream"
                   and o.get("name") == name)


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    root = tmp_path_factory.mktemp("notebook")
    h = line_hash("value = 1")
    cells = [
        "%kli tools",
        "%kli caps",
        "%kli help read",
        "%%kli write nb.py\nvalue = 1\n",
        "%kli read nb.py --start 1",
        f"%%kli edit\n@@ nb.py\n= 1:{h}..1:{h}\n~value = 2\n",
        "%kli bash echo from-bash $((6 * 7))",
        "%kli eval made_by_magic = value_in_cell + 1",
        "%kli read nb.py --start nine",
        "%kli eval raise ValueError('shown, not raised')",
        "%read nb.py",
        "%%bash\necho still-the-builtin",
        "%kli nosuchtool x",
        "%kli read",
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("value_in_cell = 41")]
    nb.cells += [nbformat.v4.new_code_cell(src) for src in cells]
    nb.cells.append(nbformat.v4.new_code_cell("made_by_magic"))
    path = root / "magics.ipynb"
    nbformat.write(nb, path)
    client = NotebookClient(nb, kernel_name="kli", timeout=60,
                            resources={"metadata": {"path": str(root)}})
    client.execute()
    nbformat.write(nb, path)  # the executed notebook, for a look after a failure
    return root, [c.outputs for c in nb.cells]


def test_tools_caps_and_help(executed: tuple[Path, list[Any]]) -> None:
    _root, outs = executed
    tools = _text(outs[1])
    for name in ("read", "edit", "bash", "eval", "ws_read"):
        assert f"\n{name} " in "\n" + tools
    assert "(%read)" in tools and "(%bash)" not in tools
    assert "file/read      granted" in _text(outs[2])
    help_text = _text(outs[3])
    assert "Usage: %kli read PATH [--start INTEGER]" in help_text and "--raw (boolean" in help_text


def test_write_and_edit_display_one_mime_bundle(executed: tuple[Path, list[Any]]) -> None:
    root, outs = executed
    for i, tool in ((4, "write"), (6, "edit")):
        bundles = [o for o in outs[i] if o["output_type"] == "display_data"]
        assert len(bundles) == 1, outs[i]
        data = bundles[0]["data"]
        assert {EDIT_MIME, "text/html", "text/plain"} <= set(data)
        assert data[EDIT_MIME]["tool"] == tool and data[EDIT_MIME]["ok"] is True
        assert data[EDIT_MIME]["files"][0]["path"] == "nb.py"
    assert (root / "nb.py").read_text() == "value = 2\n"


def test_read_bash_and_eval_print_their_results(executed: tuple[Path, list[Any]]) -> None:
    _root, outs = executed
    assert f"1:{line_hash('value = 1')}|value = 1" in _text(outs[5])
    assert "from-bash 42" in _text(outs[7])
    assert outs[-1][0]["data"]["text/plain"] == "42"  # the magic's eval ran in the notebook


def test_errors_show_on_stderr_with_usage(executed: tuple[Path, list[Any]]) -> None:
    _root, outs = executed
    assert "--start expects integer" in _text(outs[9], "stderr")
    assert "Usage: %kli read PATH" in _text(outs[9], "stderr")
    assert "ValueError: shown, not raised" in _text(outs[10], "stderr")
    assert not any(o["output_type"] == "error" for cell in outs for o in cell)
    assert "unknown tool 'nosuchtool'" in _text(outs[13], "stderr")
    missing = _text(outs[14], "stderr")
    assert "missing required argument 'path'" in missing and "Usage: %kli read PATH" in missing


def test_short_alias_works_and_builtins_are_not_shadowed(executed: tuple[Path, list[Any]]) -> None:
    _root, outs = executed
    assert "|value = 2" in _text(outs[11])
    assert "still-the-builtin" in _text(outs[12])
