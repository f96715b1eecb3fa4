"""A bounded ``repr``: what ``eval`` prints for a value.

Like Common Lisp's ``*print-length*`` 100, ``*print-level*`` 20 and ``*print-circle*``:

- at most ``MAX_ITEMS`` items of a list, tuple, set, frozenset, dict or deque are shown, then
  ``...(N more)``;
- containers nested deeper than ``MAX_DEPTH`` print as ``[...]`` / ``{...}`` / ``(...)``;
- a container that contains itself prints the repeated reference as ``<cycle list>`` (so a
  cyclic value prints finitely);
- a string or bytes longer than ``MAX_STRING`` is cut, with its length shown;
- the whole text never exceeds ``MAX_TOTAL`` characters (100 items × depth 20 could otherwise
  be enormous), and another object's own ``repr`` is cut to ``MAX_OTHER``;
- a ``repr`` that raises prints as ``<repr of T failed: E>``.

Containers whose type overrides ``__repr__`` (other than namedtuples, ``defaultdict``,
``OrderedDict``, ``Counter`` and ``deque``, which are walked) use their own ``repr``, cut.
"""

from __future__ import annotations

import collections
from typing import Any

MAX_ITEMS = 100
MAX_DEPTH = 20
MAX_STRING = 2000
MAX_OTHER = 4000
MAX_TOTAL = 20_000


class _Full(Exception):
    pass


class _Writer:
    def __init__(self, limit: int) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit

    def put(self, text: str) -> None:
        room = self.limit - self.size
        if len(text) > room:
            self.parts.append(text[: max(room, 0)])
            self.size = self.limit
            raise _Full
        self.parts.append(text)
        self.size += len(text)


_WALKED = (list, tuple, set, frozenset, dict, collections.deque)
_WALKED_REPRS = {t.__repr__ for t in (list, tuple, set, frozenset, dict)}


def _cut_text(value: str | bytes) -> str:
    if len(value) <= MAX_STRING:
        return repr(value)
    unit = "characters" if isinstance(value, str) else "bytes"
    return f"{value[:MAX_STRING]!r}... ({len(value)} {unit} in all)"


def _other(value: Any) -> str:
    try:
        text = repr(value)
    except Exception as exc:
        try:
            kind = type(value).__name__
        except Exception:
            kind = "object"
        return f"<repr of {kind} failed: {type(exc).__name__}: {exc}>"
    if not isinstance(text, str):
        return f"<repr of {type(value).__name__} returned {type(text).__name__}>"
    if len(text) > MAX_OTHER:
        return f"{text[:MAX_OTHER]}... ({len(text)} characters of repr in all)"
    return text


def _shape(value: Any) -> tuple[str, str, str] | None:
    """(prefix, opening, closing) when ``value`` is a container this module walks."""
    kind = type(value)
    if not isinstance(value, _WALKED):
        return None
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return f"{kind.__name__}(", "", ")"
    if isinstance(value, collections.deque):
        return "deque(", "[", "])"
    if isinstance(value, collections.defaultdict):
        return f"defaultdict({_other(value.default_factory)}, ", "{", "})"
    if isinstance(value, (collections.OrderedDict, collections.Counter)):
        return f"{kind.__name__}(", "{", "})"
    if kind.__repr__ not in _WALKED_REPRS:
        return None  # a subclass with its own repr
    if isinstance(value, dict):
        return "", "{", "}"
    if isinstance(value, list):
        return "", "[", "]"
    if isinstance(value, tuple):
        return "", "(", ")"
    if isinstance(value, frozenset):
        return ("frozenset(", "{", "})") if value else ("frozenset(", "", ")")
    return ("", "{", "}") if value else ("set(", "", ")")


def _walk(value: Any, out: _Writer, depth: int, path: set[int]) -> None:
    if isinstance(value, (str, bytes)):
        out.put(_cut_text(value))
        return
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            out.put(repr(value))
        except ValueError:  # more digits than int_max_str_digits allows
            out.put(f"<int of {value.bit_length()} bits>")
        return
    shape = _shape(value)
    if shape is None:
        out.put(_other(value))
        return
    prefix, opening, closing = shape
    if id(value) in path:
        out.put(f"<cycle {type(value).__name__}>")
        return
    if depth >= MAX_DEPTH:
        out.put(f"{prefix}{opening}...{closing}")
        return
    path.add(id(value))
    try:
        out.put(prefix + opening)
        is_named = isinstance(value, tuple) and hasattr(value, "_fields")
        if isinstance(value, dict):
            items: Any = value.items()
        else:
            items = value
        count = len(value)
        for index, item in enumerate(items):
            if index >= MAX_ITEMS:
                out.put(f", ...({count - MAX_ITEMS} more)")
                break
            if index:
                out.put(", ")
            if isinstance(value, dict):
                key, val = item
                _walk(key, out, depth + 1, path)
                out.put(": ")
                _walk(val, out, depth + 1, path)
            else:
                if is_named:
                    out.put(f"{value._fields[index]}=")
                _walk(item, out, depth + 1, path)
        if type(value) is tuple and count == 1:
            out.put(",")
        out.put(closing)
    finally:
        path.discard(id(value))


def saferepr(value: Any) -> str:
    """The bounded repr of ``value`` (never raises for a misbehaving ``__repr__``)."""
    out = _Writer(MAX_TOTAL)
    try:
        _walk(value, out, 0, set())
    except _Full:
        return "".join(out.parts) + f"... (value cut at {MAX_TOTAL} characters)"
    except RuntimeError as exc:  # e.g. "dictionary changed size during iteration"
        return "".join(out.parts) + f"... (printing stopped: {exc})"
    return "".join(out.parts)
