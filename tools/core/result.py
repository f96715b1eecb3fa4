"""The one result type every tool returns."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ImagePart:
    """An image a result hands a model that takes images (``look``): the encoded bytes, never
    base64 text. ``width``/``height`` are the pixels sent; ``label`` says what it shows (for the
    model, beside the image); ``thumbnail`` is a small PNG/JPEG for a person's activity panel
    (None: none made). Faces encode ``data`` as their wire wants (MCP and the providers' APIs:
    base64 in an image block; ``kli.tools.core.formats``)."""

    data: bytes
    mime: str
    width: int
    height: int
    label: str = ""
    thumbnail: bytes | None = None
    thumbnail_mime: str = "image/png"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mime": self.mime, "width": self.width, "height": self.height,
                               "label": self.label, "data": base64.b64encode(self.data).decode()}
        if self.thumbnail is not None:
            out["thumbnail"] = base64.b64encode(self.thumbnail).decode()
            out["thumbnail_mime"] = self.thumbnail_mime
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ImagePart:
        thumb = data.get("thumbnail")
        return cls(base64.b64decode(str(data.get("data", ""))), str(data.get("mime", "")),
                   int(data.get("width") or 0), int(data.get("height") or 0),
                   str(data.get("label", "")),
                   base64.b64decode(thumb) if isinstance(thumb, str) else None,
                   str(data.get("thumbnail_mime") or "image/png"))


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
    # Images for a model that takes them (``look``); ``text`` describes each for one that does
    # not. Wrappers that rebuild a result keep them with ``dataclasses.replace``.
    images: tuple[ImagePart, ...] = ()

    @classmethod
    def success(cls, text: str, **details: Any) -> ToolResult:
        return cls(True, text, details)

    @classmethod
    def error(cls, text: str, **details: Any) -> ToolResult:
        return cls(False, text, details)

    def to_json(self) -> dict[str, Any]:
        out = {"ok": self.ok, "text": self.text, "details": self.details}
        if self.images:  # absent when there are none: the shape every other result had
            out["images"] = [part.to_json() for part in self.images]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToolResult:
        images = tuple(ImagePart.from_json(part) for part in data.get("images") or ()
                       if isinstance(part, dict))
        return cls(bool(data.get("ok")), str(data.get("text", "")), dict(data.get("details") or {}),
                   images)


class ToolError(Exception):
    """Raised inside a tool to end the call with an error result.

    The workspace turns it into ``ToolResult.error(message, **details)``; it never escapes
    ``Workspace.call``.
    """

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
