"""The notebook fixture folders (tests/fixtures/notebook/NNN_name/), one test each.

A folder holds ``input.ipynb`` (copied to ``nb.ipynb`` in a fresh workspace), then:

- ``read.json`` (optional): the paths read first (default: ``["nb.ipynb"]``, every cell);
- ``disturb.ipynb`` (optional): the notebook as a person changed it after the read;
- ``patch.txt`` (one ``edit`` call) or ``call.json`` (a list of ``{"tool", "args"}`` calls; an
  argument ``"@patch.txt"`` stands for that file's text; ``path`` defaults to ``nb.ipynb``);
- the outcome: ``expected.ipynb`` (the notebook's exact text afterwards; a new cell's random
  id is written ``NEW``; it must validate with nbformat), or ``refusal.txt`` (each line appears
  in the last call's error text, and the notebook is unchanged), or ``read.txt`` (the texts of
  the calls, joined by ``\\n=====\\n``).

Inputs and expected notebooks are written by nbformat itself, not by the tools under test
(``tests/fixtures/notebook/make.py`` makes them).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from kli.tools.core.workspace import Workspace

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "notebook"
CASES = sorted(p for p in FIXTURES.iterdir() if p.is_dir())


@pytest.mark.parametrize("case", CASES, ids=[p.name for p in CASES])
def test_notebook_fixture(case: Path, tmp_path: Path) -> None:
    nb = tmp_path / "nb.ipynb"
    shutil.copy(case / "input.ipynb", nb)
    ws = Workspace(str(tmp_path))
    reads = json.loads((case / "read.json").read_text()) if (case / "read.json").exists() else [
        "nb.ipynb"
    ]
    for path in reads:
        assert ws.call("read", {"path": path}).ok
    if (case / "disturb.ipynb").exists():
        shutil.copy(case / "disturb.ipynb", nb)
    before = nb.read_text()
    if (case / "call.json").exists():
        calls = json.loads((case / "call.json").read_text())
    else:
        calls = [{"tool": "edit", "args": {"input": "@patch.txt"}}]
    results = []
    for call in calls:
        args = {
            k: (case / v[1:]).read_text() if isinstance(v, str) and v.startswith("@") else v
            for k, v in call["args"].items()
        }
        if call["tool"] in ("cells", "read"):
            args.setdefault("path", "nb.ipynb")
        results.append(ws.call(call["tool"], args))
    last = results[-1]
    if (case / "refusal.txt").exists():
        assert not last.ok, last.text
        for line in (case / "refusal.txt").read_text().splitlines():
            if line:
                assert line in last.text, (line, last.text)
        assert nb.read_text() == before
        return
    for r in results:
        assert r.ok, r.text
    if (case / "read.txt").exists():
        assert "\n=====\n".join(r.text for r in results) + "\n" == (case / "read.txt").read_text()
        assert nb.read_text() == before  # a read writes nothing
        return
    out = nb.read_text()
    for r in results:
        if r.details.get("op") == "insert":
            out = out.replace(f'"id": "{r.details["cell"]}"', '"id": "NEW"')
    assert out == (case / "expected.ipynb").read_text()
    nbformat.validate(nbformat.reads(nb.read_text(), as_version=4))
