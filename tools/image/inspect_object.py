"""inspect — one live object by name or dotted path (kli profile, gate image/inspect).

Shows, each bounded: the type and the facts of ``describe`` (shape, dtype, length, size); a
data frame's columns with their dtypes (``MAX_COLUMNS``); the bounded ``repr`` (``REPR_CHARS``);
the signature; the docstring's first ``DOC_LINES`` lines; the source file and line range.
When the source file is under the workspace root its lines come as ``LINE:HH|`` rows (at most
``MAX_SOURCE_LINES``) and are recorded for the session like a ``read``, so ``edit`` can change
them at once; outside the root only the path and range are given. Then the public attributes
(``MAX_ATTRIBUTES``), found with ``inspect.getattr_static`` so no property code runs.
"""

from __future__ import annotations

import inspect as pyinspect
import os
import types
from typing import Any

from kli.tools.core.registry import GATE_INSPECT, Call, Tool
from kli.tools.core.result import ToolResult
from kli.tools.core.textfile import split_lines
from kli.tools.file.anchors import record_view, render_row
from kli.tools.file.read import load_text
from kli.tools.image.describe import facts, human_bytes, type_name
from kli.tools.image.names import resolve
from kli.tools.process.saferepr import saferepr

REPR_CHARS = 2000
DOC_LINES = 12
MAX_SOURCE_LINES = 200
MAX_ATTRIBUTES = 60
MAX_COLUMNS = 50

DESCRIPTION = f"""\
Describe one live object by name or dotted path (df, np.linalg.norm, mymod.Cls.method): its \
type, shape and dtype or length and size, data-frame columns, a bounded repr, signature, the \
docstring's first {DOC_LINES} lines, its source file and line range — as LINE:HH| rows ready \
for edit when the file is under the workspace root — and its public attributes. Read-only. \
Parameters: name; source (default true: show the source rows)."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "A name or dotted path in the image."},
        "source": {"type": "boolean", "description": "Show source rows; default true."},
    },
    "required": ["name"],
    "additionalProperties": False,
}


def _unwrap(obj: Any) -> Any:
    """The function behind a method, property, class/static method or functools.wraps."""
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, property) and obj.fget is not None:
        obj = obj.fget
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    try:
        return pyinspect.unwrap(obj)
    except ValueError:
        return obj


def source_location(obj: Any) -> tuple[str, int, int] | None:
    """(file, first line, last line) of ``obj``'s source, when Python knows it."""
    target = _unwrap(obj)
    if not isinstance(target, (type, types.ModuleType, types.FunctionType, types.CodeType)):
        target = type(target) if not callable(target) else target
    try:
        path = pyinspect.getsourcefile(target) or pyinspect.getfile(target)
        lines, first = pyinspect.getsourcelines(target)
    except (TypeError, OSError):
        return None
    first = max(first, 1)
    return path, first, first + len(lines) - 1


def _under_root(call: Call, path: str) -> bool:
    if not os.path.isabs(path) or not os.path.exists(path):
        return False
    real = os.path.realpath(path)
    root = os.path.realpath(call.ws.root)
    return real == root or real.startswith(root + os.sep)


def source_rows(call: Call, path: str, first: int, last: int) -> tuple[list[str], str]:
    """``LINE:HH|`` rows of ``path`` lines first..last (recorded for the session) and its
    root-relative path; raises ToolError as ``read`` would."""
    real, rel, text, _size = load_text(call, path)
    lines = split_lines(text)
    last = min(last, len(lines), first + MAX_SOURCE_LINES - 1)
    rows: list[str] = []
    texts: dict[int, str] = {}
    cut: set[int] = set()
    for number in range(first, last + 1):
        shown, _hh, was_cut = render_row(number, lines[number - 1])
        rows.append(shown)
        texts[number] = lines[number - 1]
        if was_cut:
            cut.add(number)
    record_view(call.session, real, lines, texts, cut)
    return rows, rel


def _attributes(obj: Any) -> list[str]:
    if isinstance(obj, (types.ModuleType, type)):
        names = [n for n in dir(obj) if not n.startswith("_")]
    else:
        try:
            names = [n for n in vars(obj) if isinstance(n, str) and not n.startswith("_")]
        except TypeError:
            names = []
        names += [n for n in dir(type(obj)) if not n.startswith("_") and n not in names]
    out = []
    for n in sorted(names)[:MAX_ATTRIBUTES]:
        try:
            value = pyinspect.getattr_static(obj, n)
        except AttributeError:
            continue
        kind = type(value).__name__
        if isinstance(value, types.FunctionType):
            kind = "method" if isinstance(obj, type) or not isinstance(obj, types.ModuleType) \
                else "function"
        out.append(f"{n} ({kind})")
    if len(names) > MAX_ATTRIBUTES:
        out.append(f"… {len(names) - MAX_ATTRIBUTES} more")
    return out


def _run(call: Call) -> ToolResult:
    found = resolve(call, call.args["name"])
    obj = found.obj
    f = facts(obj)
    lines = [f"{found.dotted}: {type_name(obj)}"]
    if "shape" in f:
        lines.append("shape: " + " × ".join(str(n) for n in f["shape"]))
    if "dtype" in f:
        lines.append(f"dtype: {f['dtype']}")
    if "len" in f:
        lines.append(f"len: {f['len']}")
    if "size" in f:
        kind = "data" if f.get("size_kind") == "data" else "shallow, sys.getsizeof"
        lines.append(f"size: {human_bytes(f['size'])} ({kind})")
    columns = getattr(obj, "columns", None) if "shape" in f else None
    dtypes = getattr(obj, "dtypes", None) if columns is not None else None
    if columns is not None and dtypes is not None:
        try:
            pairs = list(zip(list(columns), [str(d) for d in list(dtypes)], strict=False))
            shown = ", ".join(f"{c} {d}" for c, d in pairs[:MAX_COLUMNS])
            more = f" … (+{len(pairs) - MAX_COLUMNS})" if len(pairs) > MAX_COLUMNS else ""
            lines.append(f"columns ({len(pairs)}): {shown}{more}")
            f["columns"] = [{"name": str(c), "dtype": d} for c, d in pairs[:MAX_COLUMNS]]
        except Exception:
            pass
    text = saferepr(obj)
    if len(text) > REPR_CHARS:
        text = text[:REPR_CHARS] + f"… [+{len(text) - REPR_CHARS} chars]"
    lines.append("repr:\n" + text)
    target = _unwrap(obj)
    if callable(target):
        try:
            lines.append(f"signature: {getattr(target, '__name__', found.attr)}"
                         f"{pyinspect.signature(target)}")
        except (TypeError, ValueError):
            pass
    doc = pyinspect.getdoc(obj) if isinstance(obj, (type, types.ModuleType)) or callable(obj) \
        else None
    if doc:
        doc_lines = doc.splitlines()
        more = f"\n… ({len(doc_lines) - DOC_LINES} more doc lines)" if len(doc_lines) > DOC_LINES \
            else ""
        lines.append("doc:\n" + "\n".join(doc_lines[:DOC_LINES]) + more)
    details: dict[str, Any] = {"name": found.dotted, **f}
    where = source_location(obj) if not _array_like_value(obj) else None
    if where is not None:
        path, first, last = where
        details.update(source_file=path, source_lines=[first, last])
        if _under_root(call, path) and call.args.get("source", True):
            rows, rel = source_rows(call, path, first, last)
            details["source_file"] = rel
            shown_to = first + len(rows) - 1
            cut = f" (first {len(rows)} shown)" if shown_to < last else ""
            lines.append(f"source: {rel} lines {first}-{last}{cut} — anchors recorded; edit "
                         "them directly:")
            lines += rows
        elif _under_root(call, path):
            lines.append(f"source: {os.path.relpath(path, call.ws.root)} lines {first}-{last}")
        else:
            lines.append(f"source: {path} lines {first}-{last} (outside the workspace root: "
                         "shown as text, not anchors; change it with redefine):")
            lines += _plain_source(obj)
    elif callable(target) or isinstance(obj, (type, types.ModuleType)):
        lines.append("source: not available (defined in C, or its file is gone)")
    attrs = [] if _plain(obj) or "shape" in f else _attributes(obj)
    if attrs:
        lines.append(f"attributes ({len(attrs)} shown): " + ", ".join(attrs))
    return ToolResult.success("\n".join(lines), **details)


def _plain_source(obj: Any) -> list[str]:
    try:
        text = pyinspect.getsource(_unwrap(obj))
    except (OSError, TypeError):
        return []
    shown = text.splitlines()
    if len(shown) > MAX_SOURCE_LINES:
        shown = [*shown[:MAX_SOURCE_LINES], f"… ({len(shown) - MAX_SOURCE_LINES} more lines)"]
    return shown


def _array_like_value(obj: Any) -> bool:
    return "shape" in facts(obj) and not isinstance(obj, type)


def _plain(obj: Any) -> bool:
    return isinstance(obj, (int, float, complex, bool, str, bytes, list, tuple, dict, set,
                            frozenset, type(None)))


TOOL = Tool(
    name="inspect",
    profile="kli",
    gate=GATE_INSPECT,
    description=DESCRIPTION,
    parameters=PARAMETERS,
    run=_run,
    main_arg="name",
)
