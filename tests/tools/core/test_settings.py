"""Settings discovery and merging, as DESIGN.md states."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kli.tools.core.settings import SettingsLoader, deep_merge, granted, project_settings_path


def test_deep_merge_merges_dicts_and_replaces_the_rest() -> None:
    base = {"a": {"x": 1, "y": 2}, "b": [1], "c": 1}
    assert deep_merge(base, {"a": {"y": 3}, "b": [2]}) == {"a": {"x": 1, "y": 3}, "b": [2], "c": 1}


def test_nearest_project_file_walking_up_wins(tmp_path: Path) -> None:
    (tmp_path / ".kli").mkdir()
    (tmp_path / ".kli" / "settings.json").write_text('{"level": "top"}')
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert project_settings_path(str(deep)) == str(tmp_path / ".kli" / "settings.json")
    (tmp_path / "a" / ".kli").mkdir()
    (tmp_path / "a" / ".kli" / "settings.json").write_text('{"level": "a"}')
    assert SettingsLoader(str(deep)).load()[0]["level"] == "a"


def test_project_file_merges_over_user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    xdg = tmp_path / "xdg"
    (xdg / "kli").mkdir(parents=True)
    (xdg / "kli" / "settings.json").write_text(json.dumps({"a": {"u": 1, "p": 1}, "only_user": True}))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    root = tmp_path / "root"
    (root / ".kli").mkdir(parents=True)
    (root / ".kli" / "settings.json").write_text(json.dumps({"a": {"p": 2}}))
    settings, error = SettingsLoader(str(root)).load()
    assert error is None
    assert settings == {"a": {"u": 1, "p": 2}, "only_user": True}


def test_capabilities_must_be_a_list_of_names(tmp_path: Path) -> None:
    (tmp_path / ".kli").mkdir()
    (tmp_path / ".kli" / "settings.json").write_text('{"capabilities": "file/read"}')
    assert "must be a list" in (SettingsLoader(str(tmp_path)).load()[1] or "")


def test_granted_rules() -> None:
    assert granted({}, "file/read")
    assert not granted({"capabilities": []}, "file/read")
    assert granted({"capabilities": ["file/read"]}, "file/read")
    assert granted({"capabilities": []}, None)
