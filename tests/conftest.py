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


@pytest.fixture(scope="session")
def progress(pytestconfig: pytest.Config):  # type: ignore[no-untyped-def]
    """``progress(message)`` prints a line on the terminal at once, capture or not: long
    fixtures (an environment built from scratch) say what they are doing and for how long."""
    import time

    reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
    capture = pytestconfig.pluginmanager.get_plugin("capturemanager")
    started = time.monotonic()

    def say(message: str) -> None:
        if reporter is None:
            return
        line = f"  [{time.monotonic() - started:6.1f} s] {message}"
        if capture is None:
            reporter.write_line(line)
            return
        with capture.global_and_fixture_disabled():  # past pytest's capture, to the terminal
            reporter.ensure_newline()
            reporter.write_line(line)

    return say
