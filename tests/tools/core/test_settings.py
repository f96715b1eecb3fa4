"""Settings discovery and merging, as DESIGN.md states."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kli.tools.core.settings import (
    SettingsLoader,
    deep_merge,
    granted,
    is_control_name,
    project_settings_path,
)


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


def _project_file(folder: Path, data: dict[str, object]) -> None:
    (folder / ".kli").mkdir(parents=True, exist_ok=True)
    (folder / ".kli" / "settings.json").write_text(json.dumps(data))


def test_a_sub_folders_settings_cannot_widen_the_capabilities_granted_above(tmp_path: Path) -> None:
    _project_file(tmp_path, {"capabilities": ["file/read", "file/write"]})
    _project_file(tmp_path / "sub", {"capabilities": ["file/read", "file/write", "process/exec"]})
    settings, error = SettingsLoader(str(tmp_path / "sub")).load()
    assert error is None
    assert settings["capabilities"] == ["file/read", "file/write"]
    assert not granted(settings, "process/exec")


def test_a_sub_folders_settings_can_narrow_the_capabilities_granted_above(tmp_path: Path) -> None:
    _project_file(tmp_path, {"capabilities": ["file/read", "file/write"]})
    _project_file(tmp_path / "sub", {"capabilities": ["file/read"]})
    assert SettingsLoader(str(tmp_path / "sub")).load()[0]["capabilities"] == ["file/read"]
    # A file without 'capabilities' below leaves the grant above as it is.
    _project_file(tmp_path / "sub" / "deeper", {"max_tool_chars": 100})
    settings = SettingsLoader(str(tmp_path / "sub" / "deeper")).load()[0]
    assert settings["capabilities"] == ["file/read"]
    assert settings["max_tool_chars"] == 100


def test_an_absent_grant_above_lets_the_nearest_file_decide(tmp_path: Path) -> None:
    _project_file(tmp_path, {"max_tool_chars": 5})
    _project_file(tmp_path / "sub", {"capabilities": ["file/read"]})
    assert SettingsLoader(str(tmp_path / "sub")).load()[0] == {
        "capabilities": ["file/read"], "max_tool_chars": 5}


def test_a_sub_folders_settings_take_effect_when_written_later(tmp_path: Path) -> None:
    _project_file(tmp_path, {"capabilities": ["file/read", "file/write"]})
    loader = SettingsLoader(str(tmp_path / "sub"))
    (tmp_path / "sub").mkdir()
    assert loader.load()[0]["capabilities"] == ["file/read", "file/write"]
    _project_file(tmp_path / "sub", {"capabilities": ["process/exec", "file/read"]})
    assert loader.load()[0]["capabilities"] == ["file/read"]


def test_a_broken_settings_file_above_the_nearest_fails_closed(tmp_path: Path) -> None:
    (tmp_path / ".kli").mkdir()
    (tmp_path / ".kli" / "settings.json").write_text("{not json")
    _project_file(tmp_path / "sub", {"capabilities": ["file/read"]})
    assert "not valid JSON" in (SettingsLoader(str(tmp_path / "sub")).load()[1] or "")


def test_a_settings_file_reached_through_a_symlink_to_a_plain_file_is_an_error(tmp_path: Path) -> None:
    """``sub/.kli`` → ``sub/conf``: ``sub/conf/settings.json`` is an ordinary file the tools may
    write, so reading it as settings would let a tool grant itself anything. Fail closed."""
    (tmp_path / "sub" / "conf").mkdir(parents=True)
    (tmp_path / "sub" / "conf" / "settings.json").write_text('{"capabilities": []}')
    (tmp_path / "sub" / ".kli").symlink_to(tmp_path / "sub" / "conf")
    settings, error = SettingsLoader(str(tmp_path / "sub")).load()
    assert error is not None and "leads through a symlink" in error
    assert "capabilities" not in settings


def test_a_settings_file_linked_to_another_control_folder_is_read(tmp_path: Path) -> None:
    _project_file(tmp_path / "shared", {"capabilities": ["file/read"]})
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".kli").symlink_to(tmp_path / "shared" / ".kli")
    assert SettingsLoader(str(tmp_path / "sub")).load() == ({"capabilities": ["file/read"]}, None)


@pytest.mark.parametrize("name", [".kli", ".KLI", ".Kli", ".kli.", ".kli ", ".kli. .", ".k\u200cli",
                                  "\ufeff.kli", ".kli::$INDEX_ALLOCATION", "KLI~1", "kli~2"])
def test_names_that_are_the_control_folder_on_some_file_system(name: str) -> None:
    assert is_control_name(name)


@pytest.mark.parametrize("name", ["kli", ".klix", "x.kli", ".kl", "..kli", "scratch", ".k li"])
def test_other_names_are_not_control_names(name: str) -> None:
    assert not is_control_name(name)


_GATES = ["file/read", "file/write", "file/edit", "process/exec", "image/eval", "image/inspect"]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.none(), st.lists(st.sampled_from(_GATES), unique=True)),
                min_size=1, max_size=4))
def test_no_settings_file_below_grants_what_a_file_above_does_not(
    tmp_path_factory: pytest.TempPathFactory, chain: list[list[str] | None]
) -> None:
    """Folders nested as the chain is (the first the outermost), each with a settings file
    whose ``capabilities`` is the chain's entry (None: the file sets none). A kernel rooted at
    the innermost folder is granted only what every file that sets a list grants."""
    folder = tmp_path_factory.mktemp("chain")
    for i, caps in enumerate(chain):
        folder = folder / f"d{i}" if i else folder
        _project_file(folder, {} if caps is None else {"capabilities": caps})
    settings_, error = SettingsLoader(str(folder)).load()
    assert error is None
    lists = [set(c) for c in chain if c is not None]
    for gate in _GATES:
        assert granted(settings_, gate) == all(gate in c for c in lists), (gate, chain)
