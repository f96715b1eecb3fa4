"""Runs one fixture folder: ``input/`` (the workspace before), ``call.json`` (the arguments;
``patch_file`` names a file in the folder whose text becomes ``patch``), and ``expected/`` (the
workspace after a successful call) and/or ``expected_message.txt`` (the exact result text).
Without ``expected/`` the call must fail and leave every byte of ``input/`` as it was."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kli.tools import Workspace

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def cases(tool: str) -> list[Path]:
    return sorted(p for p in (FIXTURES / tool).iterdir() if p.is_dir())


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
        if p.is_file() and ".kli" not in p.relative_to(root).parts  # harness state (undo records)
    }


def run_case(tool: str, case: Path, tmp: Path) -> None:
    root = tmp / "root"
    shutil.copytree(case / "input", root)
    args = json.loads((case / "call.json").read_text())
    if "patch_file" in args:
        args["patch"] = (case / args.pop("patch_file")).read_bytes().decode()
    result = Workspace(str(root)).call(tool, args)
    expected_dir = case / "expected"
    if expected_dir.is_dir():
        assert result.ok, result.text
        assert tree(root) == tree(expected_dir)
        assert all(
            c["status"] == "written" for c in result.details["files"] if c["after"] != c["before"]
        )
    else:
        assert not result.ok, result.text
        assert tree(root) == tree(case / "input"), "a refused call changed the workspace"
    message = case / "expected_message.txt"
    if message.exists():
        assert result.text == message.read_bytes().decode()
