"""Helpers shared by the slmcode ws_* tools: their settings, with the spec's defaults, and small
path and formatting rules several tools apply.

Settings (``.kli/settings.json``; every one optional):

=====================  =========  ===========================================================
name                   default    meaning
=====================  =========  ===========================================================
max_tool_chars         8000       cap on every slmcode result (DefaultMaxToolChars)
read_window_lines      120        ws_read's default window
context_window_tokens  32768      the model's context window; one ws_read is capped at 15 % of
                                  it (tokens × 4 chars × 0.15 ≈ 19660 chars) and never above
                                  max_tool_chars
read_before_edit       true       ws_write may overwrite only files read in this session
file_checkpoints       true       ws_delete / ws_write overwrite / ws_mv keep the old bytes
checkpoint_keep        2000       checkpoints kept in .kli/checkpoints/ (oldest pruned; the
                                  store is shared with the undo timeline, core.undo)
shell_timeout          120        ws_shell's default timeout in seconds
shell_timeout_max      600        the harness cap on a per-call ``timeout``
shell_policy           "build"    "readonly" | "build" | "any" (see shell_policy.py)
=====================  =========  ===========================================================

A setting with the wrong type is reported as an error naming it, never silently replaced.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from kli.tools.core.checkpoints import DEFAULT_KEEP as DEFAULT_CHECKPOINT_KEEP
from kli.tools.core.registry import Call
from kli.tools.core.result import ToolError

DEFAULT_MAX_TOOL_CHARS = 8000  # the spec's DefaultMaxToolChars
DEFAULT_READ_WINDOW_LINES = 120
DEFAULT_CONTEXT_WINDOW_TOKENS = 32768
CHARS_PER_TOKEN = 4
READ_CEILING_FRACTION = 0.15  # "roughly 15% of the context window"
DEFAULT_SHELL_TIMEOUT = 120  # 2 minutes
DEFAULT_SHELL_TIMEOUT_MAX = 600

_DEFAULTS: dict[str, Any] = {
    "max_tool_chars": DEFAULT_MAX_TOOL_CHARS,
    "read_window_lines": DEFAULT_READ_WINDOW_LINES,
    "context_window_tokens": DEFAULT_CONTEXT_WINDOW_TOKENS,
    "read_before_edit": True,
    "file_checkpoints": True,
    "checkpoint_keep": DEFAULT_CHECKPOINT_KEEP,
    "shell_timeout": DEFAULT_SHELL_TIMEOUT,
    "shell_timeout_max": DEFAULT_SHELL_TIMEOUT_MAX,
    "shell_policy": "build",
}


def setting(settings: dict[str, Any], name: str) -> Any:
    """The value of an slmcode setting, its default when absent; ``ToolError`` when the value
    has the wrong type."""
    default = _DEFAULTS[name]
    value = settings.get(name, default)
    if value is None:
        return default
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ToolError(
                f"setting {name!r} must be true or false, got {value!r}; fix .kli/settings.json."
            )
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 1:
            raise ToolError(
                f"setting {name!r} must be a positive number, got {value!r}; fix "
                ".kli/settings.json."
            )
        return int(value)
    if not isinstance(value, type(default)):
        raise ToolError(f"setting {name!r} has the wrong type ({value!r}); fix .kli/settings.json.")
    return value


def call_setting(call: Call, name: str) -> Any:
    return setting(call.ws.settings, name)


def read_ceiling_chars(settings: dict[str, Any]) -> int:
    """The most characters one ws_read may return: 15 % of the context window (4 chars per
    token), and never more than the result cap."""
    window = setting(settings, "context_window_tokens")
    ceiling = int(window * CHARS_PER_TOKEN * READ_CEILING_FRACTION)
    return max(200, min(ceiling, setting(settings, "max_tool_chars")))


def compact_json(data: dict[str, Any]) -> str:
    """A call's arguments the way results quote them: ``{"path":"a.py","offset":121}``."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


# Windows reserved device names: the stem (before the first dot), any case, with or without an
# extension, are device names on Windows, and a checkout containing one breaks there.
_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])$", re.IGNORECASE)


def reserved_device_name(rel: str) -> str | None:
    """The first path segment of ``rel`` that is a Windows reserved device name, else None."""
    for segment in rel.replace("\\", "/").split("/"):
        stem = segment.split(".", 1)[0].rstrip(" ")
        if stem and _RESERVED.match(stem):
            return segment
    return None


def reserved_name_error(tool: str, rel: str, segment: str) -> ToolError:
    return ToolError(
        f"{tool} refused — {segment!r} in {rel} is a Windows reserved device name (con, prn, "
        "aux, nul, com0–com9, lpt0–lpt9, with any extension, in any case); a file with that "
        "name cannot be checked out on Windows. Choose another name, e.g. "
        f"{segment.split('.', 1)[0]}_file{os.path.splitext(segment)[1]}.",
        error="reserved_name",
    )


def human_size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"
