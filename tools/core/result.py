"""The one result type every tool returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolResult:
    """What a tool call produced.

    ``ok`` is False for every error result (denied gate, bad argument, stale anchor, non-zero
    exit…). ``text`` is exactly what the model sees. ``details`` holds JSON-serialisable facts
    for hosts and renderers (exit code, before/after, candidate id, ladder rung…).
    """

    ok: bool
    text: str
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def success(cls, text: str, **details: Any) -> ToolResult:
        return cls(True, text, details)

    @classmethod
    def error(cls, text: str, **details: Any) -> ToolResult:
        return cls(False, text, details)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "text": self.text, "details": self.details}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToolResult:
        return cls(bool(data.get("ok")), str(data.get("text", "")), dict(data.get("details") or {}))


class ToolError(Exception):
    """Raised inside a tool to end the call with an error result.

    The workspace turns it into ``ToolResult.error(message, **details)``; it never escapes
    ``Workspace.call``.
    """

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
