"""look — see a plot: a notebook cell's image outputs, an image file, or the matplotlib figures
still live in the image, as images a model that takes images sees (kli profile, gate
image/inspect; a path also needs file/read).

- ``path='nb.ipynb#CELL_ID'``: the cell's image outputs as stored (PNG, JPEG, GIF's first
  frame, WebP, SVG rendered), ``output=N`` only output ``[N]`` (the numbers ``read`` shows);
- ``path='plot.png'``: an image file under the root;
- ``name='fig'``: a live object — a matplotlib Figure or Axes, or anything with
  ``_repr_png_`` / ``_repr_jpeg_`` / ``_repr_svg_`` (a Pillow image…);
- neither: every live matplotlib figure — pyplot's open ones, and Figures bound to names in
  ``__main__`` (the inline backend closes pyplot's after each cell; ``fig`` keeps its own) —
  drawn now at the size the notebook shows them, without running any cell.

Each image is fitted to the budget of ``kli.tools.notebook.pictures`` (the shown size, at most
``MAX_EDGE`` px and ``MAX_BYTES``) and goes in ``ToolResult.images``; the text lists each one
(its size, and for a figure its axes: titles, labels, limits, what is drawn), which is all a
model that does not take images gets. At most ``MAX_IMAGES`` images per call. matplotlib is
never imported here: a figure exists only if the notebook's code imported it.
"""

from __future__ import annotations

import io
import os
import sys
from typing import Any

from kli.tools.core.registry import GATE_INSPECT, GATE_READ, Call, Tool
from kli.tools.core.result import ImagePart, ToolError, ToolResult
from kli.tools.core.workspace import denied_text
from kli.tools.image.names import resolve
from kli.tools.notebook import address, pictures

MAX_IMAGES = 4  # images one call returns (the others are listed with how to look at them)
MAX_FILE_BYTES = pictures.MAX_SOURCE_BYTES
AXES_SHOWN = 6  # axes described per figure
LABEL_CHARS = 60
FILE_MIMES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
              ".gif": "image/gif", ".webp": "image/webp", ".svg": "image/svg+xml"}

DESCRIPTION = f"""\
See a plot or image as an image (for a model that takes images; the text lists each image, \
and a figure's axes, titles, labels and limits, for one that does not). path='nb.ipynb#CELL_ID' \
shows that cell's image outputs (PNG, JPEG, GIF, SVG; output=N only output [N] as read numbers \
them) — read shows them only as one line such as [image/png 640×480, 23 KB]; path='plot.png' \
an image file; name='fig' a live matplotlib Figure or Axes (or any object with _repr_png_); \
no arguments: every matplotlib figure still live in the kernel, drawn now without re-running \
a cell. Each image is scaled to the size the notebook shows it (a little less when that saves \
image tokens), at most {pictures.MAX_EDGE} px on the long edge and \
{pictures.MAX_BYTES // 1024} KB; at most {MAX_IMAGES} images a call. Read-only."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "nb.ipynb#CELL_ID (a cell's image outputs) "
                 "or an image file (png, jpg, gif, webp, svg) relative to the root."},
        "output": {"type": "integer", "minimum": 1,
                   "description": "With a cell: only output [N] (the number read shows)."},
        "name": {"type": "string", "description": "A live object: a matplotlib Figure or "
                 "Axes (fig, ax, axs[0] as fig), or one with _repr_png_ / _repr_svg_."},
    },
    "additionalProperties": False,
}


# -- live figures (matplotlib, found through sys.modules: never imported here) ----------------
def _figure_class() -> type | None:
    mod = sys.modules.get("matplotlib.figure")
    cls = getattr(mod, "Figure", None) if mod is not None else None
    return cls if isinstance(cls, type) else None


def _as_figure(obj: Any) -> Any:
    """The matplotlib Figure ``obj`` is or belongs to (an Axes' figure), else None."""
    cls = _figure_class()
    if cls is None:
        return None
    if isinstance(obj, cls):
        return obj
    try:
        fig = getattr(obj, "figure", None)
    except Exception:
        return None
    return fig if isinstance(fig, cls) else None


def live_figures(call: Call) -> list[tuple[Any, list[str]]]:
    """Every live figure with the names it goes by: pyplot's open figures (``plt figure N``),
    then Figures bound to names in ``__main__``, each once, in that order."""
    found: dict[int, tuple[Any, list[str]]] = {}
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    gcf = getattr(helpers, "Gcf", None)
    if gcf is not None:
        try:
            managers = list(gcf.get_all_fig_managers())
        except Exception:
            managers = []
        for manager in managers:
            fig = getattr(getattr(manager, "canvas", None), "figure", None)
            if fig is not None:
                found.setdefault(id(fig), (fig, []))[1].append(f"plt figure {manager.num}")
    if _figure_class() is not None:
        hidden = call.ws.hidden_names()
        for key, value in sorted(list(call.ws.namespace.items()), key=lambda kv: str(kv[0])):
            if not isinstance(key, str) or key.startswith("_") or key in hidden:
                continue
            if isinstance(value, _figure_class() or ()):
                found.setdefault(id(value), (value, []))[1].append(key)
    return list(found.values())


def _short(text: Any) -> str:
    s = str(text).replace("\n", " ").strip()
    return s if len(s) <= LABEL_CHARS else s[:LABEL_CHARS] + "…"


def _limits(lo: float, hi: float) -> str:
    return f"{lo:.4g}…{hi:.4g}"


def describe_figure(fig: Any) -> list[str]:
    """What a figure shows, in words: per axes its title, axis labels and limits, what is drawn
    (lines, bars/patches, collections such as scatter points, images) and the legend."""
    rows: list[str] = []
    try:
        sup = getattr(fig, "_suptitle", None)
        if sup is not None and sup.get_text():
            rows.append(f"  title {_short(sup.get_text())!r}")
        axes = list(fig.axes)
        for i, ax in enumerate(axes[:AXES_SHOWN], 1):
            bits = []
            if ax.get_title():
                bits.append(f"title {_short(ax.get_title())!r}")
            for axis, label, lim in (("x", ax.get_xlabel(), ax.get_xlim()),
                                     ("y", ax.get_ylabel(), ax.get_ylim())):
                bits.append(f"{axis} {_short(label)!r} {_limits(*lim)}" if label
                            else f"{axis} {_limits(*lim)}")
            drawn = [(len(ax.lines), "line"), (len(ax.patches), "patch"),
                     (len(ax.collections), "collection"), (len(ax.images), "image"),
                     (len(ax.texts), "text")]
            bits.append(", ".join(f"{n} {w}{'' if n == 1 else 'es' if w == 'patch' else 's'}"
                                  for n, w in drawn if n) or "nothing drawn")
            legend = ax.get_legend()
            if legend is not None:
                names = [_short(t.get_text()) for t in legend.get_texts()][:8]
                bits.append("legend " + ", ".join(repr(n) for n in names))
            rows.append(f"  axes {i}: " + " · ".join(bits))
        if len(axes) > AXES_SHOWN:
            rows.append(f"  … {len(axes) - AXES_SHOWN} more axes")
    except Exception as exc:  # a half-built figure: what it is, not a failed call
        rows.append(f"  (its axes could not be described: {type(exc).__name__})")
    return rows


def render_figure(fig: Any, label: str) -> pictures.Picture:
    """``fig`` drawn now as the notebook shows it (the inline backend's tight bounding box, at
    the figure's dpi), within the budget; the figure is not changed."""
    try:
        w_in, h_in = fig.get_size_inches()
        dpi = float(fig.dpi)
        long_px = max(w_in, h_in) * dpi
        if long_px > pictures.MAX_EDGE:
            dpi *= pictures.MAX_EDGE / long_px
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    except Exception as exc:
        return pictures.Picture(None, None, f"the figure does not draw ({type(exc).__name__}: "
                                            f"{_short(exc)})")
    return pictures.fit(buf.getvalue(), "image/png", label=label)


def _repr_picture(obj: Any, label: str) -> pictures.Picture | None:
    """An object's own picture (``_repr_png_``, ``_repr_jpeg_``, ``_repr_svg_``), or None."""
    for method, mime in (("_repr_png_", "image/png"), ("_repr_jpeg_", "image/jpeg"),
                         ("_repr_svg_", "image/svg+xml")):
        fn = getattr(obj, method, None)
        if not callable(fn):
            continue
        try:
            data = fn()
        except Exception as exc:
            return pictures.Picture(None, None, f"{method} raised {type(exc).__name__}")
        if isinstance(data, tuple):  # (data, metadata)
            data = data[0]
        if data is None:
            continue
        raw = data.encode() if isinstance(data, str) else bytes(data)
        return pictures.fit(raw, mime, label=label)
    return None


# -- the tool ---------------------------------------------------------------------------------
class _Shown:
    """The images of one call and their lines of text."""

    def __init__(self) -> None:
        self.parts: list[ImagePart] = []
        self.lines: list[str] = []
        self.facts: list[dict[str, Any]] = []
        self.skipped: list[str] = []

    def add(self, what: str, picture: pictures.Picture, more: list[str] | None = None) -> None:
        fact: dict[str, Any] = {"what": what}
        if picture.part is not None and len(self.parts) >= MAX_IMAGES:
            self.skipped.append(what)
            return
        if picture.part is not None:
            self.parts.append(picture.part)
            fact.update(mime=picture.part.mime, width=picture.part.width,
                        height=picture.part.height, bytes=len(picture.part.data))
        else:
            fact["problem"] = picture.problem
        if picture.source:
            fact["source"] = list(picture.source)
        self.facts.append(fact)
        self.lines.append(f"{what}: {picture.line()}")
        self.lines.extend(more or [])


def _need_read(call: Call) -> None:
    if not call.ws.granted(GATE_READ):
        raise ToolError(denied_text("look", GATE_READ, "agent"), error="denied", gate=GATE_READ)


def _cell(call: Call, path: str, cell_id: str, only: int | None, shown: _Shown) -> str:
    from kli.tools.file import cellview

    loaded = cellview.load(call, path)
    index = cellview.find_cell(loaded, cell_id, verb="look")
    where = f"{loaded.rel}#{loaded.ids[index]}"
    outs = loaded.nb.cells[index].get("outputs")
    outs = outs if isinstance(outs, list) else []
    if only is not None and not 1 <= only <= len(outs):
        raise ToolError(f"look failed: {where} has {len(outs)} output(s); output is 1.."
                        f"{len(outs)} as read path='{where}' numbers them.",
                        error="bad_output", path=where)
    for i, out in enumerate(outs, 1):
        if (only is not None and i != only) or not isinstance(out, dict):
            continue
        for _mime, picture in pictures.fit_output(out, label=f"{where} output [{i}]"):
            shown.add(f"[{i}]", picture)
    if not shown.facts:
        what = f"output [{only}]" if only is not None else f"its {len(outs)} output(s)"
        raise ToolError(
            f"look: {where} has no image in {what} (read path='{where}' shows its outputs as "
            "text). To see a figure the cell drew, call look with no arguments: it draws the "
            "matplotlib figures still live in the kernel.", error="no_image", path=where)
    return where


def _file(call: Call, path: str, shown: _Shown) -> str:
    resolved = call.ws.jail.resolve(path)
    mime = FILE_MIMES.get(os.path.splitext(resolved.rel)[1].lower())
    if mime is None:
        raise ToolError(f"look failed: {resolved.rel} is not an image file "
                        f"({', '.join(sorted(FILE_MIMES))}); a notebook's images are looked at "
                        "by cell: path='nb.ipynb#CELL_ID'.", error="not_image", path=resolved.rel)
    try:
        size = os.path.getsize(resolved.real)
        if size > MAX_FILE_BYTES:
            raise ToolError(f"look refused: {resolved.rel} is {size} bytes, over the "
                            f"{MAX_FILE_BYTES}-byte limit.", error="too_large", path=resolved.rel)
        with open(resolved.real, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise ToolError(f"look failed: {resolved.rel} does not exist; find pattern='**/*.png' "
                        "lists image files.", error="not_found", path=resolved.rel) from None
    except IsADirectoryError:
        raise ToolError(f"look failed: {resolved.rel} is a directory.", error="is_directory",
                        path=resolved.rel) from None
    except OSError as exc:
        raise ToolError(f"look failed: cannot open {resolved.rel} ({exc.strerror}).",
                        path=resolved.rel) from None
    shown.add(resolved.rel, pictures.fit(data, mime, label=resolved.rel))
    return resolved.rel


def _named(call: Call, name: str, shown: _Shown) -> str:
    found = resolve(call, name)
    fig = _as_figure(found.obj)
    if fig is not None:
        shown.add(f"{name} (figure)", render_figure(fig, name), describe_figure(fig))
        return name
    picture = _repr_picture(found.obj, name)
    if picture is None:
        raise ToolError(f"look: {name} is a {type(found.obj).__name__}, not a matplotlib "
                        "Figure or Axes and without a _repr_png_/_repr_svg_ picture; inspect "
                        f"name='{name}' describes it in text.", error="not_image", name=name)
    shown.add(name, picture)
    return name


def _live(call: Call, shown: _Shown) -> str:
    figures = live_figures(call)
    if not figures:
        loaded = "matplotlib.pyplot" in sys.modules or "matplotlib.figure" in sys.modules
        raise ToolError(
            "look: no matplotlib figure is live in the kernel"
            + (" (pyplot's figures are closed after each cell by the inline backend, and no "
               "name in the notebook holds a Figure)" if loaded else " (matplotlib is not "
               "imported)")
            + ". Look at a cell's stored plot with path='nb.ipynb#CELL_ID', or keep a figure "
            "in a name (fig = plt.figure() …) to look at it live.", error="no_figure")
    for fig, names in figures:
        label = ", ".join(names)
        shown.add(f"figure ({label})", render_figure(fig, label), describe_figure(fig))
    return f"{len(figures)} live figure(s)"


def _run(call: Call) -> ToolResult:
    args = call.args
    path, name, only = args.get("path"), args.get("name"), args.get("output")
    if path and name:
        raise ToolError("look takes path or name, not both: path for a cell's stored outputs "
                        "or an image file, name for a live figure.", error="bad_arguments")
    if only is not None and not path:
        raise ToolError("look: output=N selects an output of a cell; give "
                        "path='nb.ipynb#CELL_ID' too.", error="bad_arguments")
    shown = _Shown()
    if path:
        _need_read(call)
        nb_path, cell_id = address.split(path)
        if address.is_notebook(nb_path):
            if cell_id is None:
                raise ToolError(
                    f"look takes one cell of a notebook: path='{nb_path}#CELL_ID' (read "
                    f"path='{nb_path}' lists the cells; a header with '[image/png …]' has an "
                    "image).", error="bad_path", path=nb_path)
            what = _cell(call, nb_path, cell_id, only, shown)
        else:
            what = _file(call, path, shown)
    elif name:
        what = _named(call, name, shown)
    else:
        what = _live(call, shown)
    count = len(shown.parts)
    head = f"look {what}: {count} image{'' if count == 1 else 's'}"
    lines = [head, *shown.lines]
    if shown.skipped:
        lines.append(f"[{len(shown.skipped)} more not shown ({', '.join(shown.skipped)}): at "
                     f"most {MAX_IMAGES} images a call; look at one with output=N or name=…]")
    if not count:
        return ToolResult.error("\n".join(lines), error="not_shown", images=shown.facts)
    return ToolResult(True, "\n".join(lines), {"images": shown.facts, "shown": count,
                                               "skipped": shown.skipped}, tuple(shown.parts))


TOOL = Tool(
    name="look",
    profile="kli",
    gate=GATE_INSPECT,
    description=DESCRIPTION,
    parameters=PARAMETERS,
    run=_run,
    main_arg="path",
)
