"""A session's remembered versions are bounded: past MAX_BASE_CHARS the oldest views forget
theirs, keeping the rows shown (an edit then checks the rows around its targets)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.core import session as session_mod
from kli.tools.file.anchors import line_hash


def test_the_oldest_versions_are_forgotten_past_the_bound_and_edits_still_check_rows(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_mod, "MAX_BASE_CHARS", 100)
    p, q, r_ = "p" * 20, "q" * 20, "r" * 20
    (root / "a.txt").write_text(f"{p}\n{q}\n{q}\n{r_}\n")  # 84 characters
    assert ws.call("read", {"path": "a.txt"}).ok
    for name in ("b.txt", "c.txt"):
        (root / name).write_text(f"{name * 4}\n" * 4)
        assert ws.call("read", {"path": name}).ok
    views = ws.default_session.views
    kept = [n for n in ("a.txt", "b.txt", "c.txt") if views[str(root / n)].base is not None]
    assert kept == ["c.txt"]  # only the newest version fits the bound
    assert views[str(root / "a.txt")].texts  # the rows shown stay
    # A line inserted on top: line 3 still reads q…, but line 2 (shown as q…) is now p….
    (root / "a.txt").write_text(f"{q}\n{p}\n{q}\n{q}\n{r_}\n")
    r = ws.call("edit", {"input": f"@@ a.txt\n= 3:{line_hash(q)}\n~x\n"})
    assert not r.ok and r.details["error"] == "stale"
    assert "next to the lines you anchored" in r.text
