"""A picture for a model, within a budget: an image output (PNG, JPEG, GIF's first frame, SVG
rendered) or a rendered figure, scaled and re-encoded into an ``ImagePart``.

The budget (``fit``):

- the size the person sees: an output's display size when its metadata gives one (the inline
  backend's high-resolution "retina" PNG is drawn at twice the size it is shown: a 1280×960
  PNG shown at 640×480), else its own pixels — never scaled up;
- at most ``MAX_EDGE`` pixels on the long edge (vision models scale larger images down
  themselves, and bill them first: Anthropic above 1568 px, OpenAI to a 768 px short side);
- onto OpenAI's tile grid when that is near: an image is billed per ``TILE`` px square, so
  one whose edge is a little over a multiple of ``TILE`` (at most ``1 / SNAP`` of it) is scaled
  down onto it (at most 1 - ``SNAP`` smaller) when that saves tiles — a 640×480 plot goes as
  512×384, one tile instead of two (Anthropic, billed by area, pays less too);
- at most ``MAX_BYTES`` bytes: the smallest of PNG (optimised), a 256-colour palette PNG (for an
  image of few colours at its source, as plots are: their antialiasing survives a palette) and
  JPEG (an image without transparency), or the original bytes when they are smaller still and
  need no scaling; scaled down further until it fits;
- a ``THUMB_EDGE`` thumbnail for the activity panel.

Never base64 text: an ``ImagePart`` holds bytes; each face encodes them as its wire wants.
Pillow does the work (a base dependency); SVG is rendered with cairosvg when it is installed.
"""

from __future__ import annotations

import base64
import binascii
import io
import math
import re
from dataclasses import dataclass
from typing import Any

from kli.tools.core.result import ImagePart

MAX_EDGE = 1024  # pixels on the long edge of an image sent to a model
MAX_BYTES = 256 * 1024  # bytes of one image sent (after re-encoding)
THUMB_EDGE = 160  # pixels on the long edge of the activity panel's thumbnail
MIN_EDGE = 64  # an image is never scaled below this to meet the byte cap
TILE = 512  # OpenAI bills an image per 512-px tile (high detail)
SNAP = 0.8  # scaled down onto the tile grid only when it keeps at least this much of each edge
PALETTE_SOURCE_COLORS = 4096  # a source with at most this many colours may go as a palette PNG
JPEG_QUALITY = 85
MAX_SOURCE_BYTES = 40 * 1024 * 1024  # an image output larger than this is not decoded
MAX_SOURCE_PIXELS = 50_000_000  # nor one with more pixels (a decompression bomb)
IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml")


@dataclass(frozen=True)
class Picture:
    """What ``fit`` made: the part to send (None when it could not be made), the source's size
    and why nothing was made (``problem``)."""

    part: ImagePart | None
    source: tuple[int, int] | None = None
    problem: str = ""

    def line(self) -> str:
        """One line for the model's text, e.g. ``image/png 640×480 (from 1280×960), 38 KB``."""
        if self.part is None:
            return f"not shown: {self.problem}"
        p = self.part
        scaled = (f" (from {self.source[0]}×{self.source[1]})"
                  if self.source and self.source != (p.width, p.height) else "")
        return f"{p.mime} {p.width}×{p.height}{scaled}, {_kb(len(p.data))}"


def _kb(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{round(n / 1024)} KB"


def output_bytes(mime: str, value: Any) -> bytes:
    """The bytes of an output's ``data[mime]`` (base64 for binary images, text for SVG)."""
    text = "".join(value) if isinstance(value, list) else str(value)
    if mime == "image/svg+xml":
        return text.encode()
    try:
        return base64.b64decode(re.sub(r"\s+", "", text), validate=False)
    except (binascii.Error, ValueError):
        return b""


def display_size(metadata: Any, mime: str) -> tuple[int, int] | None:
    """The size an output is shown at, from its metadata (``{"image/png": {"width": 640,
    "height": 480}}``, as IPython's retina figures carry), or None."""
    meta = metadata.get(mime) if isinstance(metadata, dict) else None
    if not isinstance(meta, dict):
        return None
    w, h = meta.get("width"), meta.get("height")
    if isinstance(w, (int, float)) and w > 0:
        return int(w), int(h) if isinstance(h, (int, float)) and h > 0 else 0
    return None


def _pil() -> Any:
    try:
        from PIL import Image
    except ImportError:
        return None
    return Image


def _open(data: bytes, mime: str, shown: tuple[int, int] | None) -> tuple[Any, str]:
    """A Pillow image of ``data``, or (None, why not)."""
    image_mod = _pil()
    if image_mod is None:
        return None, "Pillow is not installed in the kernel (pip install pillow)"
    if len(data) > MAX_SOURCE_BYTES:
        return None, f"the image is {_kb(len(data))}, over the {_kb(MAX_SOURCE_BYTES)} decode limit"
    if mime == "image/svg+xml":
        try:
            import cairosvg
        except (ImportError, OSError):
            return None, ("an SVG needs cairosvg to be rendered (pip install cairosvg); "
                          "read the cell for its text")
        size = {"output_width": shown[0]} if shown and shown[0] else {}
        try:
            data = cairosvg.svg2png(bytestring=data, **size)
        except Exception as exc:  # a broken SVG: say so, never fail the call
            return None, f"the SVG does not render ({type(exc).__name__}: {exc})"[:200]
    try:
        img = image_mod.open(io.BytesIO(data))
        if img.width * img.height > MAX_SOURCE_PIXELS:
            return None, f"the image is {img.width}×{img.height} pixels, too large to decode"
        img.seek(0)  # a GIF (or an animated PNG/WebP): its first frame
        img.load()
    except Exception as exc:
        return None, f"the {mime} data is not a readable image ({type(exc).__name__})"
    return img, ""


def _tiles(w: float, h: float) -> int:
    return math.ceil(w / TILE) * math.ceil(h / TILE)


def target_size(size: tuple[int, int], shown: tuple[int, int] | None = None,
                max_edge: int = MAX_EDGE) -> tuple[int, int]:
    """The pixels an image of ``size`` is sent at (module docstring): its shown size, capped
    at ``max_edge``, then onto the tile grid when that is within ``SNAP``."""
    w, h = size
    if shown and 0 < shown[0] < w:  # drawn larger than shown (retina): the shown size
        h = round(h * shown[0] / w)
        w = shown[0]
    long = max(w, h)
    if long > max_edge:
        w, h = round(w * max_edge / long), round(h * max_edge / long)
    w, h = max(1, w), max(1, h)
    fits = [TILE * k / edge for edge in (w, h) for k in range(1, edge // TILE + 1)]
    better = [s for s in fits if SNAP <= s < 1 and _tiles(w * s, h * s) < _tiles(w, h)]
    if better:
        s = max(better)
        w, h = max(1, math.floor(w * s + 1e-9)), max(1, math.floor(h * s + 1e-9))
    return w, h


def _encode(img: Any, fmt: str) -> bytes:
    buf = io.BytesIO()
    if fmt == "JPEG":
        img.convert("RGB").save(buf, "JPEG", quality=JPEG_QUALITY, optimize=True)
    else:
        img.save(buf, "PNG", optimize=True)
    return buf.getvalue()


def _flat(img: Any) -> Any:
    """RGB or RGBA (a palette, greyscale with alpha, CMYK… converted)."""
    if img.mode in ("RGB", "RGBA", "L"):
        return img
    return img.convert("RGBA" if "A" in img.mode or "transparency" in img.info else "RGB")


def _palette(img: Any) -> Any:
    """``img`` in 256 colours (median cut; an image with alpha: fast octree, which keeps it)."""
    quantize = getattr(_pil(), "Quantize", None)
    if "A" in img.mode:
        method = quantize.FASTOCTREE if quantize is not None else 2
    else:
        method = quantize.MEDIANCUT if quantize is not None else 0
    return img.quantize(256, method=method)


def thumbnail(img: Any) -> bytes:
    thumb = _flat(img).copy()
    thumb.thumbnail((THUMB_EDGE, THUMB_EDGE))
    return _encode(thumb, "PNG")


def fit(data: bytes, mime: str, *, shown: tuple[int, int] | None = None, label: str = "",
        max_edge: int = MAX_EDGE, max_bytes: int = MAX_BYTES) -> Picture:
    """``data`` (an image of ``mime``) within the budget (module docstring) as a ``Picture``;
    its ``problem`` says why nothing was made (no Pillow, not an image, too large…)."""
    img, problem = _open(data, mime, shown)
    if img is None:
        return Picture(None, None, problem)
    source = (img.width, img.height)
    img = _flat(img)
    w, h = target_size(source, shown, max_edge)
    few = img.mode != "L" and img.getcolors(PALETTE_SOURCE_COLORS) is not None
    while True:
        scaled = img if (w, h) == source else img.resize((w, h), _lanczos())
        options = [("image/png", _encode(scaled, "PNG"))]
        if few:
            options.append(("image/png", _encode(_palette(scaled), "PNG")))
        if "A" not in scaled.mode:
            options.append(("image/jpeg", _encode(scaled, "JPEG")))
        if (w, h) == source and mime in ("image/png", "image/jpeg", "image/webp"):
            options.append((mime, data))  # already fits: the original, when smaller
        out_mime, out = min(options, key=lambda o: len(o[1]))
        if len(out) <= max_bytes or max(w, h) <= MIN_EDGE:
            break
        w, h = max(1, round(w * 0.75)), max(1, round(h * 0.75))
    if len(out) > max_bytes:
        return Picture(None, source, f"even at {w}×{h} the image is {_kb(len(out))}, over the "
                                     f"{_kb(max_bytes)} cap")
    part = ImagePart(out, out_mime, w, h, label, thumbnail(scaled), "image/png")
    return Picture(part, source)


def _lanczos() -> Any:
    image_mod = _pil()
    resampling = getattr(image_mod, "Resampling", image_mod)
    return resampling.LANCZOS


def fit_output(output: dict[str, Any], *, label: str = "",
               max_edge: int = MAX_EDGE) -> list[tuple[str, Picture]]:
    """The pictures of one output (``display_data`` / ``execute_result``): its best image MIME
    type (PNG, JPEG, WebP, GIF, then SVG), as ``[(mime, Picture)]`` — empty when it holds no
    image."""
    data = output.get("data") if isinstance(output.get("data"), dict) else None
    if not data:
        return []
    for mime in IMAGE_MIMES:
        if mime in data:
            raw = output_bytes(mime, data[mime])
            shown = display_size(output.get("metadata"), mime)
            return [(mime, fit(raw, mime, shown=shown, label=label, max_edge=max_edge))]
    return []
