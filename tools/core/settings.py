"""Settings: every ``.kli/settings.json`` walking up from the workspace root, merged over the
user file ``$XDG_CONFIG_HOME/kli/settings.json``, with a host's dict merged last.

The project files are merged farthest first, so the nearest file's values win — except
``capabilities``, which is the **intersection** of every project file that sets it: a file
nearer the root (a sub-folder's ``.kli/settings.json``) can narrow what the files above it
grant, never widen it. A kernel that Jupyter roots at a notebook's sub-folder is therefore
bound by the project root's grant as well as by its own folder's.

A project settings file is only read where it is what it looks like: a ``.kli`` folder (or
``settings.json``) that is a symlink leading to a file not itself named ``.kli/settings.json``
is a settings error (fail closed) — the tools protect every ``.kli`` folder from writes, and a
symlink could otherwise make an ordinary, writable file the settings.

Settings are re-read when a file changes, so narrowing ``capabilities`` in a live notebook takes
effect on the next call. A file that does not parse is reported on every call (fail closed).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from kli.tools.core.textfile import read_bytes

CONTROL_DIR = ".kli"
SETTINGS_NAME = "settings.json"

# Code points that HFS+ ignores in names (git's list for CVE-2014-9390): ``.k\u200cli`` is
# ``.kli`` there.
_IGNORED = re.compile("[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]")


def is_control_name(name: str) -> bool:
    """True when ``name`` is the control folder's name on some file system.

    Besides ``.kli`` itself: any case (case-insensitive volumes: macOS, Windows), trailing dots
    and spaces (Windows drops them: ``.kli.`` and ``.kli `` are ``.kli``), an NTFS stream suffix
    (``.kli::$INDEX_ALLOCATION``), code points HFS+ ignores (``.k\u200cli``) and the 8.3 short
    name (``KLI~1``). On Linux these are other folders; every file tool refuses them alike, so a
    project shared with another system never gains a control folder from a tool.
    """
    return is_name_of(name, CONTROL_DIR)


def is_name_of(name: str, folder: str) -> bool:
    """True when ``name`` is ``folder`` (a dot-name such as ``.kli`` or ``.git``) on some file
    system, in the ways ``is_control_name`` lists; the 8.3 short name is the name without its
    dot, cut to six characters, then ``~`` and a digit."""
    name = _IGNORED.sub("", name.split(":", 1)[0]).rstrip(". ").casefold()
    short = re.escape(folder.lstrip(".")[:6].casefold()) + "~[0-9]+"
    return name == folder or re.fullmatch(short, name) is not None


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


def _ancestor_candidates(root: str) -> list[str]:
    """``.kli/settings.json`` at ``root`` and at each of its ancestors, nearest first."""
    found, here = [], os.path.abspath(root)
    while True:
        found.append(os.path.join(here, CONTROL_DIR, SETTINGS_NAME))
        parent = os.path.dirname(here)
        if parent == here:
            return found
        here = parent


def project_settings_paths(root: str) -> list[str]:
    """Every ``.kli/settings.json`` at or above ``root`` that exists, nearest first."""
    return [c for c in _ancestor_candidates(root) if os.path.isfile(c)]


def project_capabilities(root: str) -> list[tuple[str, Any, str | None]]:
    """Every project settings file at or above ``root`` (``project_settings_paths``, nearest
    first) with the ``capabilities`` it sets (None: it sets none) and the error that makes it
    unusable (None when fine). The granted set is the intersection of those that set it."""
    out: list[tuple[str, Any, str | None]] = []
    for path in project_settings_paths(root):
        data, problem = _read(path)
        out.append((path, data.get("capabilities"), problem))
    return out


def project_settings_path(root: str) -> str | None:
    """The nearest ``.kli/settings.json`` at or above ``root``, if any."""
    found = project_settings_paths(root)
    return found[0] if found else None


def _misplaced(candidate: str) -> str | None:
    """Where ``candidate`` really leads when a symlink makes it a file that is not named
    ``.kli/settings.json`` (None when it is what it looks like)."""
    real = os.path.realpath(candidate)
    if os.path.basename(real).casefold() == SETTINGS_NAME and is_control_name(
        os.path.basename(os.path.dirname(real))
    ):
        return None
    return real


def merge_capabilities(values: list[list[str]]) -> list[str]:
    """The gates every list grants (order of the first list): files may only narrow."""
    out = list(values[0])
    for more in values[1:]:
        out = [gate for gate in out if gate in more]
    return out


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
            self._ancestors = _ancestor_candidates(self.root)
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
        stamps: list[tuple[str, tuple[int, int]]] = []
        for candidate in self._candidates():
            stamp = self._stat(candidate)
            if stamp is not None:
                stamps.append((candidate, stamp))
        key = (user, self._stat(user), tuple(stamps))
        if key == self._key:
            return self._value, self._error
        error = None
        user_data: dict[str, Any] = {}
        if os.path.isfile(user):
            user_data, error = _read(user)
        # Farthest first, so the nearest file's values win the deep merge.
        project_files = [path for path, _stamp in reversed(stamps) if os.path.isfile(path)]
        project: dict[str, Any] = {}
        grants: list[list[str]] = []
        for path in project_files:
            real = _misplaced(path)
            if real is not None:
                error = (
                    f"settings file {path} leads through a symlink to {real}, which is not a "
                    f"{CONTROL_DIR}/{SETTINGS_NAME}: the tools protect only {CONTROL_DIR} folders "
                    "from writes, so such a file could be rewritten by a tool. Replace the "
                    "symlink by the file itself (or link to a file in a .kli folder) and retry."
                )
                continue
            data, problem = _read(path)
            error = problem or error
            caps = data.get("capabilities")
            if caps is not None and not _is_caps(caps):
                error = _CAPS_ERROR
            elif caps is not None:
                grants.append(caps)
            project = deep_merge(project, data)
        merged = deep_merge(user_data, project)
        if grants:
            merged["capabilities"] = merge_capabilities(grants)
        merged = deep_merge(merged, self.overrides)
        caps = merged.get("capabilities")
        if caps is not None and not _is_caps(caps):
            error = _CAPS_ERROR
        self._key, self._value, self._error = key, merged, error
        return merged, error


_CAPS_ERROR = "setting 'capabilities' must be a list of capability names; fix it and retry."


def _is_caps(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(c, str) for c in value)


def _read(path: str) -> tuple[dict[str, Any], str | None]:
    """One settings file's object, or ``{}`` and the error that makes it unusable."""
    try:
        data = json.loads(read_bytes(path).decode("utf-8"))  # guarded: never a FIFO
    except json.JSONDecodeError as exc:
        return {}, (
            f"settings file {path} is not valid JSON (line {exc.lineno}, column "
            f"{exc.colno}: {exc.msg}); fix the file and retry the call."
        )
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8"
        return {}, f"settings file {path} cannot be read ({reason}); fix it and retry."
    if not isinstance(data, dict):
        return {}, f"settings file {path} must hold a JSON object; fix it and retry."
    return data, None


def granted(settings: dict[str, Any], gate: str | None) -> bool:
    """Absent ``capabilities`` grants every gate; a list grants exactly its members."""
    if gate is None:
        return True
    caps = settings.get("capabilities")
    if caps is None:
        return True
    return gate in caps


def read_settings_file(path: str) -> tuple[bytes | None, dict[str, Any]]:
    """A settings file's bytes (None: absent) and its object; ValueError when it is not one."""
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        return None, {}
    except OSError as exc:
        raise ValueError(f"{path} cannot be read ({exc.strerror})") from None
    try:
        obj = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise ValueError(f"{path} is not valid JSON; fix it first") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{path} does not hold a JSON object; fix it first")
    return data, obj


def write_setting(path: str, name: str, value: Any) -> None:
    """Set (None: remove) the setting ``name`` in the settings file ``path``, its other
    settings kept; atomic, and only over the bytes just read. ValueError saying why when it
    cannot (the person's review and box choices are kept this way)."""
    from kli.tools.core import atomic

    data, obj = read_settings_file(path)
    if value is None:
        obj.pop(name, None)
    else:
        obj[name] = value
    try:
        atomic.makedirs(os.path.dirname(path))
        atomic.write_atomic(path, (json.dumps(obj, indent=2) + "\n").encode(), data)
    except atomic.Stale:
        raise ValueError(f"{path} changed while it was written; try again") from None
    except OSError as exc:
        raise ValueError(f"{path} cannot be written ({exc.strerror})") from None
