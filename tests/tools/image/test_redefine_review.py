"""A held ``redefine`` with ``reload`` (approval mode ``review`` for eval) runs exactly the module
bytes its proposal showed: not a cached ``.pyc`` planted beside them with the source's mtime and
size (which ``importlib.reload`` would take), and not a file changed since (docs/review.md)."""

from __future__ import annotations

import importlib
import importlib.util
import json
import marshal
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.core import approval

MODULE = "kli_reload_review_t23"


@pytest.fixture
def ws(root: Path) -> Iterator[Workspace]:
    (root / f"{MODULE}.py").write_text("VALUE = 1\n")
    (root / ".kli").mkdir(exist_ok=True)
    (root / ".kli" / "settings.json").write_text(json.dumps({"approval": {"eval": "review"}}))
    sys.path.insert(0, str(root))
    ws = Workspace(str(root))
    assert ws.call("eval", {"code": f"import {MODULE} as m"}).ok  # the person's: not held
    yield ws
    ws.close()
    sys.path.remove(str(root))
    sys.modules.pop(MODULE, None)


def _plant_pyc(source: Path, code: str) -> None:
    """A ``.pyc`` whose header matches ``source``'s mtime and size: the import system trusts it."""
    st = source.stat()
    header = (importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little")
              + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
              + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little"))
    cached = Path(importlib.util.cache_from_source(str(source)))
    cached.parent.mkdir(exist_ok=True)
    cached.write_bytes(header + marshal.dumps(compile(code, str(source), "exec")))


def test_an_accepted_reload_runs_the_shown_source_not_a_planted_pyc(ws: Workspace,
                                                                    root: Path) -> None:
    agent = ws.open_session("agent")
    held = ws.call("redefine", {"reload": MODULE, "code": "m.VALUE"}, agent, source="agent")
    assert held.details["status"] == "pending", held.text
    [shown] = held.details["sources"]
    assert shown["sha256"] == approval.digest(b"VALUE = 1\n") and shown["source"] == "VALUE = 1\n"
    _plant_pyc(root / f"{MODULE}.py", "VALUE = 666\n")
    accepted = approval.accept_any(ws, held.details["proposal"], "ui")
    assert accepted.ok and "[line 1] 1" in accepted.text, accepted.text
    assert sys.modules[MODULE].VALUE == 1
    assert sys.modules[MODULE].__spec__.origin == os.path.realpath(root / f"{MODULE}.py")
    importlib.reload(sys.modules[MODULE])  # what a plain reload would have run
    assert sys.modules[MODULE].VALUE == 666


def test_an_accepted_reload_is_refused_naming_the_file_when_it_changed_since(
        ws: Workspace, root: Path) -> None:
    agent = ws.open_session("agent")
    held = ws.call("redefine", {"reload": MODULE, "code": "m.VALUE"}, agent, source="agent")
    (root / f"{MODULE}.py").write_text("VALUE = 2\n")
    refused = approval.accept_any(ws, held.details["proposal"], "ui")
    assert not refused.ok and refused.details["error"] == approval.STALE
    assert f"module {MODULE} ({MODULE}.py) changed since proposal" in refused.text
    assert "Nothing was run" in refused.text
    assert sys.modules[MODULE].VALUE == 1
    assert refused.details["resolved"]["status"] == "refused"
