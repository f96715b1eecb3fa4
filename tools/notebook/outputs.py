"""A cell's outputs, bounded for a model: never base64, never a wall of text.

- a stream or ``text/plain``: its line count, and the first ``HEAD_LINES`` and last
  ``TAIL_LINES`` lines (each cut at ``LINE_CHARS`` characters);
- an error: ``ename: evalue`` and the last ``FRAMES`` traceback entries (ANSI colours removed);
- a rich output: one line per MIME type, e.g. ``[image/png 640×480, 23 KB]`` (the size read from
  the image's header: PNG, GIF, JPEG), ``[text/html table 20×5]`` (body rows × data columns of
  its first table), ``[application/json 2 KB]``.

``summary`` is the one line a notebook read puts in each cell's header; ``render`` the bounded
lines a read of one cell shows under its source, where some rich outputs read as a person sees
them:

- an HTML table (a DataFrame): its shape (pandas' own "N rows × M columns" when it says so), its
  header and first ``TABLE_HEAD`` and last ``TABLE_TAIL`` body rows as aligned text, at most
  ``TABLE_COLS`` columns of ``CELL_CHARS`` characters each;
- ``text/markdown`` and ``text/latex``: their text, bounded like a stream;
- a widget (``application/vnd.jupyter.widget-view+json``): its model's class and state (value,
  bounds, description…), from the ``widgets`` lookup the caller gives (the live kernel's, or the
  notebook's saved widget state); else its model id.

An image stays one line: ``look`` shows the picture itself.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
import sys
from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any

from kli.tools.notebook.model import source_text

HEAD_LINES = 10
TAIL_LINES = 5
LINE_CHARS = 200
FRAMES = 3  # traceback entries shown of an error
FRAME_LINES = 8  # lines shown of each entry (its last ones)
IMAGE_PREFIX_B64 = 64 * 1024  # base64 characters decoded to find a JPEG's size
TABLE_HEAD = 5  # body rows shown from the top of an HTML table
TABLE_TAIL = 3  # and from its bottom
TABLE_COLS = 10  # columns shown (the index column counts)
CELL_CHARS = 24  # characters shown of one table cell
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
TEXT_MIMES = ("text/markdown", "text/latex")
# A widget's state keys worth reading, in this order (the rest are layout and styling).
WIDGET_KEYS = ("description", "value", "min", "max", "step", "options", "_options_labels",
               "index", "disabled", "placeholder")

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def _kb(n_bytes: int) -> str:
    if n_bytes < 1024:
        return f"{n_bytes} B"
    return f"{round(n_bytes / 1024)} KB" if n_bytes < 1024 * 1024 else f"{n_bytes / 1048576:.1f} MB"


def _b64_bytes(b64: str, limit: int | None = None) -> bytes:
    clean = re.sub(r"\s+", "", b64 if limit is None else b64[: limit + limit // 60 + 8])
    if limit is not None:
        clean = clean[: limit - limit % 4]
    try:
        return base64.b64decode(clean + "=" * (-len(clean) % 4))
    except (binascii.Error, ValueError):
        return b""


def image_size(mime: str, b64: str) -> tuple[int, int] | None:
    """Width and height from the image's header, or None when it cannot be read."""
    if mime == "image/png":
        head = _b64_bytes(b64, 32)
        if len(head) >= 24 and head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR":
            w, h = struct.unpack(">II", head[16:24])
            return int(w), int(h)
        return None
    if mime == "image/gif":
        head = _b64_bytes(b64, 16)
        if len(head) >= 10 and head[:3] == b"GIF":
            w, h = struct.unpack("<HH", head[6:10])
            return int(w), int(h)
        return None
    if mime == "image/jpeg":
        data = _b64_bytes(b64, IMAGE_PREFIX_B64)
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                return None
            marker = data[i + 1]
            if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
                i += 2
                continue
            (length,) = struct.unpack(">H", data[i + 2 : i + 4])
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                h, w = struct.unpack(">HH", data[i + 5 : i + 9])
                return int(w), int(h)
            i += 2 + length
    return None


def _html_table(html: str) -> tuple[int, int] | None:
    """Rows × columns of the first table: body rows, and data cells of the first body row."""
    m = re.search(r"<table\b.*?</table>", html, re.S | re.I)
    if not m:
        return None
    table = m.group(0)
    body = re.search(r"<tbody\b.*?</tbody>", table, re.S | re.I)
    rows = re.findall(r"<tr\b.*?</tr>", body.group(0) if body else table, re.S | re.I)
    if not rows:
        return 0, 0
    first = rows[0] if body else rows[-1]
    cols = len(re.findall(r"<td\b", first, re.I)) or len(re.findall(r"<th\b", first, re.I))
    return len(rows), cols


class _Table(HTMLParser):
    """The rows of the first ``<table>``: header rows and body rows, each a list of cell
    texts; and the text after it (pandas' "N rows × M columns")."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.head: list[list[str]] = []
        self.body: list[list[str]] = []
        self.after = ""
        self._depth = 0
        self._done = False
        self._in_head = False
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if self._done:
            return
        if tag == "table":
            self._depth += 1
        elif self._depth == 1 and tag == "thead":
            self._in_head = True
        elif self._depth == 1 and tag == "tr":
            self._row = []
        elif self._depth == 1 and tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if self._done:
            return
        if tag == "table":
            self._depth -= 1
            self._done = self._depth == 0
        elif self._depth == 1 and tag == "thead":
            self._in_head = False
        elif self._depth == 1 and tag in ("td", "th") and self._cell is not None:
            if self._row is not None:
                self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif self._depth == 1 and tag == "tr" and self._row is not None:
            (self.head if self._in_head else self.body).append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._done:
            self.after += data
        elif self._cell is not None:
            self._cell.append(data)


def _cut_cell(text: str) -> str:
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def table_lines(html: str, indent: str = "  ") -> list[str] | None:
    """An HTML table (a DataFrame's) as a person reads it: its shape, then its header and its
    first and last body rows as aligned text (module docstring); None when there is no table."""
    if not re.search(r"<table\b", html, re.I):
        return None
    parser = _Table()
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # a broken table: its one-line size stays the answer
        return None
    head, body = parser.head, parser.body
    if not head and body and all(c for c in body[0]) and "<th" in html.lower():
        head, body = body[:1], body[1:]
    said = re.search(r"(\d[\d,]*)\s+rows?\s+[×x]\s+(\d[\d,]*)\s+columns?", parser.after)
    cols = max((len(r) for r in head + body), default=0)
    counted = _html_table(html) or (len(body), cols)
    shape = (f"{said.group(1)} rows × {said.group(2)} columns" if said
             else f"{counted[0]} rows × {counted[1]} columns")
    shown = body if len(body) <= TABLE_HEAD + TABLE_TAIL else (
        [*body[:TABLE_HEAD], ["…"], *body[-TABLE_TAIL:]])
    rows = [*head, *shown]
    if cols > TABLE_COLS:
        rows = [[*r[: TABLE_COLS - 1], "…"] if len(r) > TABLE_COLS else r for r in rows]
    rows = [[_cut_cell(c) for c in r] for r in rows]
    width = [0] * max((len(r) for r in rows), default=0)
    for r in rows:
        for i, c in enumerate(r):
            width[i] = max(width[i], len(c))
    out = [f"table, {shape}" + (f" (first {TABLE_HEAD} and last {TABLE_TAIL} rows shown)"
                                if len(body) > TABLE_HEAD + TABLE_TAIL else "") + ":"]
    for r in rows:
        out.append(indent + "  ".join(c.ljust(width[i]) for i, c in enumerate(r)).rstrip())
    return out


def widget_line(value: Any, widgets: Callable[[str], dict[str, Any] | None] | None) -> str:
    """A widget output as its model: ``widget IntSlider: description 'n', value 5, min 0, max
    10`` (its state from ``widgets``), or its model id when no state is known."""
    model_id = value.get("model_id") if isinstance(value, dict) else None
    state = widgets(str(model_id)) if widgets is not None and model_id else None
    if not state:
        return f"widget {model_id or '?'} (its state is not known here: not saved in the notebook)"
    name = str(state.get("_model_name") or "Widget").removesuffix("Model")
    bits = []
    for key in WIDGET_KEYS:
        if key in state and (key == "value" or not (state[key] is None or state[key] is False
                                                    or state[key] in ("", []))):
            shown = repr(state[key])
            bits.append(f"{key.strip('_')} {shown if len(shown) <= 80 else shown[:80] + '…'}")
    return f"widget {name}: " + (", ".join(bits) if bits else "no state")


def widget_lookup(notebook_metadata: Any) -> Callable[[str], dict[str, Any] | None]:
    """A widget model's state by id: the live kernel's (ipywidgets' instances, when this
    process imported ipywidgets — never imported here), else the notebook's saved widget state
    (``metadata.widgets``)."""
    saved: Any = {}
    if isinstance(notebook_metadata, dict):
        widgets = notebook_metadata.get("widgets")
        if isinstance(widgets, dict):
            saved = (widgets.get("application/vnd.jupyter.widget-state+json") or {}).get("state")

    def lookup(model_id: str) -> dict[str, Any] | None:
        module = sys.modules.get("ipywidgets.widgets.widget")
        instances = getattr(module, "_instances", None) if module is not None else None
        live = instances.get(model_id) if isinstance(instances, dict) else None
        if live is not None:
            try:
                state = live.get_state()
                return state if isinstance(state, dict) else None
            except Exception:
                pass
        entry = saved.get(model_id) if isinstance(saved, dict) else None
        if not isinstance(entry, dict) or not isinstance(entry.get("state"), dict):
            return None
        return {"_model_name": entry.get("model_name", ""), **entry["state"]}

    return lookup


def _rich_line(mime: str, value: Any) -> str:
    text = source_text(value) if not isinstance(value, (dict, int, float, bool)) else ""
    if mime.startswith("image/") and mime != "image/svg+xml":
        size = len(re.sub(r"\s+", "", text)) * 3 // 4
        dims = image_size(mime, text)
        where = f"{dims[0]}×{dims[1]}, " if dims else ""
        return f"[{mime} {where}{_kb(size)}]"
    if mime == "text/html":
        table = _html_table(text)
        if table is not None:
            return f"[text/html table {table[0]}×{table[1]}]"
        return f"[text/html {_kb(len(text.encode()))}]"
    if isinstance(value, (dict, list)) and not text:
        import json

        return f"[{mime} {_kb(len(json.dumps(value)))}]"
    return f"[{mime} {_kb(len(text.encode()))}]"


def _lines_of(text: str) -> list[str]:
    lines = strip_ansi(text).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _bounded(lines: list[str], indent: str = "  ") -> list[str]:
    def cut(line: str) -> str:
        return line if len(line) <= LINE_CHARS else f"{line[:LINE_CHARS]}… [+{len(line) - LINE_CHARS} chars]"

    if len(lines) <= HEAD_LINES + TAIL_LINES:
        return [indent + cut(x) for x in lines]
    dropped = len(lines) - HEAD_LINES - TAIL_LINES
    return (
        [indent + cut(x) for x in lines[:HEAD_LINES]]
        + [f"{indent}… [{dropped} lines not shown] …"]
        + [indent + cut(x) for x in lines[-TAIL_LINES:]]
    )


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _data_parts(data: dict[str, Any]) -> tuple[list[str], str | None]:
    """One line per rich MIME type, and the ``text/plain`` text when it is the only view
    (a rich output's plain fallback is not shown beside it)."""
    rich = [m for m in data if m != "text/plain"]
    lines = [_rich_line(m, data[m]) for m in rich]
    plain = source_text(data.get("text/plain")) if not rich and "text/plain" in data else None
    return lines, plain


def summary(outputs: list[dict[str, Any]]) -> str:
    """One line for a cell header: what the outputs are, e.g. ``stdout 3 lines; [image/png
    640×480, 23 KB]``; empty for no outputs."""
    parts: list[str] = []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            n = len(_lines_of(source_text(out.get("text"))))
            parts.append(f"{out.get('name', 'stream')} {_count(n, 'line')}")
        elif kind == "error":
            parts.append(f"error {out.get('ename', '')}: {strip_ansi(str(out.get('evalue', '')))[:80]}")
        elif kind in ("execute_result", "display_data"):
            data = out.get("data") if isinstance(out.get("data"), dict) else {}
            assert isinstance(data, dict)
            rich, plain = _data_parts(data)
            parts.extend(rich)
            if plain is not None:
                lines = _lines_of(plain)
                first = lines[0][:60] if lines else ""
                more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
                parts.append(f"text/plain {first!r}{more}" if lines else "text/plain ''")
        else:
            parts.append(f"[{kind}]")
    return "; ".join(parts)


def _rich_rows(mime: str, value: Any, line: str, label: str,
               widgets: Callable[[str], dict[str, Any] | None] | None) -> list[str]:
    """The rows of one rich MIME type in a read of one cell: as a person reads it where the
    module docstring says so, else its one line."""
    text = source_text(value) if not isinstance(value, (dict, int, float, bool)) else ""
    if mime == "text/html":
        table = table_lines(text)
        if table is not None:
            return [f"{label} {table[0]}", *table[1:]]
    if mime in TEXT_MIMES:
        lines = _lines_of(text)
        return [f"{label} {mime} ({_count(len(lines), 'line')}):", *_bounded(lines)]
    if mime == WIDGET_MIME:
        return [f"{label} {widget_line(value, widgets)}"]
    return [f"{label} {line}"]


def render(outputs: list[dict[str, Any]],
           widgets: Callable[[str], dict[str, Any] | None] | None = None) -> list[str]:
    """The bounded lines of every output (for a read of one cell). ``widgets`` looks up a
    widget model's state by id (None: none known)."""
    rows: list[str] = []
    for i, out in enumerate(outputs, 1):
        kind = out.get("output_type")
        if kind == "stream":
            lines = _lines_of(source_text(out.get("text")))
            rows.append(f"[{i}] {out.get('name', 'stream')} ({_count(len(lines), 'line')}):")
            rows.extend(_bounded(lines))
        elif kind == "error":
            rows.append(f"[{i}] error {out.get('ename', '')}: {strip_ansi(str(out.get('evalue', '')))}")
            frames = [strip_ansi(str(f)) for f in out.get("traceback") or []]
            shown = frames[-FRAMES:]
            if len(frames) > len(shown):
                rows.append(f"  … [{len(frames) - len(shown)} earlier traceback entries] …")
            for frame in shown:
                lines = frame.rstrip("\n").split("\n")
                if len(lines) > FRAME_LINES:
                    lines = ["…", *lines[-FRAME_LINES:]]
                rows.extend("  " + (x if len(x) <= LINE_CHARS else x[:LINE_CHARS] + "…") for x in lines)
        elif kind in ("execute_result", "display_data"):
            data = out.get("data") if isinstance(out.get("data"), dict) else {}
            assert isinstance(data, dict)
            rich, plain = _data_parts(data)
            label = f"Out[{out.get('execution_count')}]" if kind == "execute_result" else "display"
            if plain is not None:
                lines = _lines_of(plain)
                rows.append(f"[{i}] {label} text/plain ({_count(len(lines), 'line')}):")
                rows.extend(_bounded(lines))
            rich_mimes = [m for m in data if m != "text/plain"]
            for mime, line in zip(rich_mimes, rich, strict=True):
                rows.extend(_rich_rows(mime, data[mime], line, f"[{i}] {label}", widgets))
        else:
            rows.append(f"[{i}] [{kind}]")
    return rows
