"""Fixture-folder scenarios for ``edit``: tests/fixtures/hashline/ (the grammar, validation and
apply) and tests/fixtures/repair/ (delimiter repair). See the README in each folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kli.tools import Workspace

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
CASES = sorted(
    p for kind in ("hashline", "repair") for p in (FIXTURES / kind).iterdir() if p.is_dir()
)


def _tree(folder: Path) -> dict[str, bytes]:
    if not folder.exists():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".kli" not in p.relative_to(folder).parts  # harness state (undo)
    }


def _json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


@pytest.mark.parametrize("case", CASES, ids=[f"{p.parent.name}/{p.name}" for p in CASES])
def test_fixture(case: Path, root: Path) -> None:
    shutil.copytree(case / "input", root, dirs_exist_ok=True)
    before = _tree(root)
    ws = Workspace(str(root))
    setup = _json(case / "setup.json")
    for path in setup.get("read", sorted(_tree(case / "input"))):
        assert ws.call("read", {"path": path}).ok
    args = {"input": (case / "patch.txt").read_bytes().decode(), **_json(case / "args.json")}
    result = ws.call("edit", args)
    expect = _json(case / "expect.json")
    error = case / "expected_error.txt"
    if error.exists():
        assert not result.ok, result.text
        for needle in filter(None, error.read_text().splitlines()):
            assert needle in result.text, (needle, result.text)
        assert _tree(root) == before, "a rejected patch changed a file"
    else:
        assert result.ok is expect.get("ok", True), result.text
        assert _tree(root) == _tree(case / "expected")
    text = case / "expected_text.txt"
    if text.exists():
        assert result.text == text.read_bytes().decode()
    if "reason" in expect:
        assert result.details.get("reason") == expect["reason"], result.details
    if "status" in expect:
        assert [f["status"] for f in result.details["files"]] == expect["status"]
    for needle in expect.get("text_contains", []):
        assert needle in result.text, (needle, result.text)
    candidates = _tree(case / "expected_candidate")
    if candidates:
        previews = {f["path"]: f for f in result.details["files"] if f["status"] == "preview"}
        assert {p: previews[p]["after"].encode() for p in previews} == candidates
        assert _tree(root) == before, "a preview wrote to disk"
        if expect.get("accept"):
            for path, change in previews.items():
                accepted = ws.call("edit", {"accept_repair": change["candidate"], "path": path})
                assert accepted.ok, accepted.text
            assert {p: _tree(root)[p] for p in candidates} == candidates


def test_every_fixture_states_its_outcome() -> None:
    for case in CASES:
        assert (case / "patch.txt").exists(), case
        assert (case / "expected").exists() != (case / "expected_error.txt").exists(), case
