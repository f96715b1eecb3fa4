"""Settings: the nearest ``.kli/settings.json`` walking up from the workspace root, deep-merged
over the user file ``$XDG_CONFIG_HOME/kli/settings.json``, with a host's dict merged last.

Settings are re-read when a file changes, so narrowing ``capabilities`` in a live notebook takes
effect on the next call. A file that does not parse is reported on every call (fail closed).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from kli.tools.core.textfile import read_bytes

CONTROL_DIR = ".kli"
SETTINGS_NAME = "settings.json"


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` merged onto ``base``: dicts merge key by key, anything else replaces."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


_user_paths: dict[tuple[str | None, str | None], str] = {}


def user_settings_path() -> str:
    """``$XDG_CONFIG_HOME/kli/settings.json`` (default ``~/.config``), following the variables
    as they are now; the path is remembered per (XDG_CONFIG_HOME, HOME), as every call asks."""
    environ = os.environ
    key = (environ.get("XDG_CONFIG_HOME"), environ.get("HOME"))
    path = _user_paths.get(key)
    if path is None:
        base = key[0] or os.path.join(os.path.expanduser("~"), ".config")
        path = _user_paths[key] = os.path.join(base, "kli", SETTINGS_NAME)
    return path


def project_settings_path(root: str) -> str | None:
    """The nearest ``.kli/settings.json`` at or above ``root``, if any."""
    here = os.path.abspath(root)
    while True:
        candidate = os.path.join(here, CONTROL_DIR, SETTINGS_NAME)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


@dataclass
class SettingsLoader:
    root: str
    overrides: dict[str, Any] = field(default_factory=dict)
    _key: tuple[Any, ...] | None = None
    _ancestors: list[str] | None = None
    _value: dict[str, Any] = field(default_factory=dict)
    _error: str | None = None

    def _candidates(self) -> list[str]:
        """``.kli/settings.json`` at the root and at each ancestor, nearest first (computed once:
        the folders do not move; whether each file exists is checked on every load)."""
        if self._ancestors is None:
            found, here = [], os.path.abspath(self.root)
            while True:
                found.append(os.path.join(here, CONTROL_DIR, SETTINGS_NAME))
                parent = os.path.dirname(here)
                if parent == here:
                    break
                here = parent
            self._ancestors = found
        return self._ancestors

    @staticmethod
    def _stat(path: str) -> tuple[int, int] | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def load(self) -> tuple[dict[str, Any], str | None]:
        """Current settings and the error that makes them unusable (None when fine).

        Runs on every tool call, so it only stats the candidate files and re-reads them when
        one appeared, vanished or changed.
        """
        user = user_settings_path()
        project, project_stamp = None, None
        for candidate in self._candidates():
            project_stamp = self._stat(candidate)
            if project_stamp is not None:
                project = candidate
                break
        key = (user, self._stat(user), project, project_stamp)
        if key == self._key:
            return self._value, self._error
        files = [user, project]
        merged: dict[str, Any] = {}
        error = None
        for path in files:
            if path is None or not os.path.isfile(path):
                continue
            try:
                data = json.loads(read_bytes(path).decode("utf-8"))  # guarded: never a FIFO
            except json.JSONDecodeError as exc:
                error = (
                    f"settings file {path} is not valid JSON (line {exc.lineno}, column "
                    f"{exc.colno}: {exc.msg}); fix the file and retry the call."
                )
                continue
            except OSError as exc:
                error = f"settings file {path} cannot be read ({exc.strerror}); fix it and retry."
                continue
            if not isinstance(data, dict):
                error = f"settings file {path} must hold a JSON object; fix it and retry."
                continue
            merged = deep_merge(merged, data)
        merged = deep_merge(merged, self.overrides)
        caps = merged.get("capabilities")
        if caps is not None and not (isinstance(caps, list) and all(isinstance(c, str) for c in caps)):
            error = "setting 'capabilities' must be a list of capability names; fix it and retry."
        self._key, self._value, self._error = key, merged, error
        return merged, error


def granted(settings: dict[str, Any], gate: str | None) -> bool:
    """Absent ``capabilities`` grants every gate; a list grants exactly its members."""
    if gate is None:
        return True
    caps = settings.get("capabilities")
    if caps is None:
        return True
    return gate in caps
