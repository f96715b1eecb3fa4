"""The changed-line count is the one the diff views show: the shared fixture that the
extension's countChanges is tested against too (tests/fixtures/linecount/cases.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kli.tools import Workspace
from kli.tools.core.changes import count_changes
from kli.tools.file.anchors import line_hash

CASES = json.loads(
    (Path(__file__).resolve().parents[2] / "fixtures" / "linecount" / "cases.json").read_text()
)["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_count_changes_gives_the_fixture_numbers(case: dict[str, Any]) -> None:
    assert count_changes(case["before"], case["after"]) == (case["added"], case["removed"])


def test_an_edit_counts_the_lines_that_differ_not_the_range_it_replaced(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("def f():\n    x = 1\n    return x\n")
    assert ws.call("read", {"path": "a.py"}).ok
    h2, h3 = line_hash("    x = 1"), line_hash("    return x")
    # Lines 2..3 replaced by themselves and one line between: +1 -0 (the range was +3 -2).
    r = ws.call("edit", {"input": f"@@ a.py\n= 2:{h2}..3:{h3}\n~    x = 1\n~    y = 2\n~    return x\n"})
    assert r.ok, r.text
    (change,) = r.details["files"]
    assert (change["added"], change["removed"]) == (1, 0)
    assert (change["added"], change["removed"]) == count_changes(change["before"], change["after"])


def test_a_repair_preview_counts_its_candidate_against_the_file(ws: Workspace, root: Path) -> None:
    (root / "b.py").write_text("def f():\n    x = 1\n    return x\n")
    assert ws.call("read", {"path": "b.py"}).ok
    h2, h3 = line_hash("    x = 1"), line_hash("    return x")
    r = ws.call("edit", {"input": f"@@ b.py\n= 2:{h2}..3:{h3}\n~    x = 1\n~    y = [1, 2\n~    return x\n",
                         "repair": "preview"})
    (change,) = r.details["files"]
    assert change["status"] == "preview" and change["after"].count("y = [1, 2]") == 1
    assert (change["added"], change["removed"]) == (1, 0)
