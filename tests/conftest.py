"""Shared fixtures: an isolated workspace root with no user settings leaking in."""

from __future__ import annotations

from pathlib import Path

import pytest

from kli.tools import Workspace


@pytest.fixture(autouse=True)
def _isolated_user_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test sees an empty $XDG_CONFIG_HOME so the user's kli settings never apply."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg")))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty workspace root."""
    r = tmp_path / "root"
    r.mkdir()
    return r


@pytest.fixture
def ws(root: Path) -> Workspace:
    return Workspace(str(root))
