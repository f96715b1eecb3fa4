"""Argument validation derived from a tool's JSON Schema.

Supports the subset the registry uses: ``type`` (string, integer, number, boolean, array,
object), ``required``, ``enum``, ``minimum`` / ``exclusiveMinimum`` / ``maximum``, ``maxLength``, ``items`` and
``additionalProperties: false``. Every failure names the argument and the tool's accepted
arguments, so the caller can retry with a corrected call.

Three rules hold for every tool, beyond its schema: a list or object argument holds only what
JSON carries (strings, numbers, booleans, null, lists, objects with string keys; at most
``MAX_DEPTH`` levels deep); a string (or a string in an array) may not hold a lone surrogate (``"\ud800"``: JSON carries it, but no UTF-8 text, file name or command
line can), and an integer must lie within ±2**63 unless the schema bounds it (Python's ints
have no limit; no argument needs more); a number must be finite and within ±2**63 too (JSON
carries no NaN or infinity, but the Python API and a lenient JSON reader do: a NaN timeout made
``await_decision`` wait for ever, as every comparison with NaN is false). Each tool then clamps
a finite number to its documented bound (a timeout to its maximum). Values from the Python API that JSON cannot carry — a
huge int, a list nested 100,000 deep, an object whose ``__repr__`` raises — get an error
message too: ``show`` never raises.

Bounded inputs: an argument that names files or is a pattern — ``path``, ``src``, ``dst``,
``directory``, ``glob`` (``MAX_PATH_CHARS``) and ``pattern`` (a glob or a regular expression,
``MAX_PATTERN_CHARS``) — is capped by its name when its schema sets no ``maxLength``, so no
walk, brace expansion or regex engine is ever handed megabytes (a 50,000-character glob kept
brace expansion and matching busy for seconds, and the time grows with the square of the
length). Content (a file's text, a patch, code, a command) is not capped here.
"""

from __future__ import annotations

import math
import reprlib
from typing import Any

from kli.tools.core.textfile import lone_surrogate

INT_LIMIT = 2**63
MAX_PATH_CHARS = 4096  # Linux's PATH_MAX: no longer path can be opened anyway
MAX_PATTERN_CHARS = 8192  # a glob or a regular expression
NAME_LIMITS = {
    "path": ("path", MAX_PATH_CHARS),
    "src": ("path", MAX_PATH_CHARS),
    "dst": ("path", MAX_PATH_CHARS),
    "directory": ("path", MAX_PATH_CHARS),
    "glob": ("pattern", MAX_PATTERN_CHARS),
    "pattern": ("pattern", MAX_PATTERN_CHARS),
}

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
}


def normalise_aliases(args: dict[str, Any], aliases: dict[str, str]) -> dict[str, Any]:
    """Rename alias keys to their canonical names; the canonical key wins when both appear."""
    out = dict(args)
    for alias, canonical in aliases.items():
        if alias in out:
            value = out.pop(alias)
            out.setdefault(canonical, value)
    return out


def usage(tool_name: str, schema: dict[str, Any]) -> str:
    """One line naming the tool's arguments, required first: ``read path [start] [end] [raw]``."""
    props = schema.get("properties", {})
    required = schema.get("required", [])
    parts = [f"{name}:{props[name].get('type', 'any')}" for name in required if name in props]
    parts += [f"[{name}:{p.get('type', 'any')}]" for name, p in props.items() if name not in required]
    return f"{tool_name} " + " ".join(parts)


_SHOW = reprlib.Repr()
_SHOW.maxstring = 60
_SHOW.maxother = 60
_SHOW.maxlevel = 3


def show(value: Any) -> str:
    """A short ``repr`` of ``value`` for an error message; never raises (a value whose repr
    fails, is too deep or is an int too long to print is described by its type)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**60:
        return f"<int of {value.bit_length()} bits>"
    try:
        text = _SHOW.repr(value)
    except Exception:  # a broken __repr__, a RecursionError: describe, never raise
        return f"<{_type_name(value)} that cannot be shown>"
    return text if len(text) <= 80 else text[:77] + "..."


def _type_name(value: Any) -> str:
    try:
        return str(type(value).__name__)
    except Exception:
        return "object"


def _type_ok(value: Any, expected: str) -> bool:
    if expected == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if expected == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _PY_TYPES.get(expected, (object,)))


def validate(tool_name: str, schema: dict[str, Any], args: Any) -> tuple[dict[str, Any], str | None]:
    """Check ``args`` against ``schema``.

    Returns ``(cleaned_args, None)`` on success — integers given as integral floats become
    ints — or ``(args, message)`` naming the first problem found. Never raises, whatever
    ``args`` holds.
    """
    try:
        return _validate(tool_name, schema, args)
    except Exception as exc:  # a value that breaks comparison or iteration (Python API only)
        return (args if isinstance(args, dict) else {}), (
            f"{tool_name}: the arguments could not be checked ({_type_name(exc)} while reading "
            "them); send plain JSON values (strings, numbers, booleans, lists, objects). "
            f"Usage: {usage(tool_name, schema)}"
        )


def _plain(value: Any) -> Any:
    """A ``str``, ``int`` or ``float`` subclass's value as the plain type (its overridden
    methods never run inside a tool); anything else as it is."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool:
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bool):
        return bool(int.__int__(value))
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    return value


def _check_length(tool_name: str, name: str, value: str, prop: dict[str, Any]) -> str | None:
    """The string's length against its schema's ``maxLength``, or its name's cap."""
    kind, limit = NAME_LIMITS.get(name, ("string", None))
    if "maxLength" in prop:
        kind, limit = "string", int(prop["maxLength"])
    if limit is None or len(value) <= limit:
        return None
    return (
        f"{tool_name}: argument '{name}' is too long: {len(value)} characters, over the "
        f"{limit}-character limit for a {kind}. Nothing was run. Send a shorter {kind}"
        + (
            " (a narrower glob, or several calls)." if kind == "pattern"
            else " (a path inside the workspace root)." if kind == "path"
            else "."
        )
    )


# Values nested deeper than this are refused: no tool's arguments need more, and a value
# nested 100,000 deep breaks whatever recurses over it.
MAX_DEPTH = 64
_JSON_LEAVES = (str, int, float, bool, type(None))


def _not_json(name: str, value: Any) -> str | None:
    """Where ``value`` holds something JSON cannot carry (a set, bytes, an object; a key that
    is not a string; nesting past ``MAX_DEPTH``), in words — None when it is plain JSON."""
    stack: list[tuple[str, Any, int]] = [(name, value, 0)]
    while stack:
        where, item, depth = stack.pop()
        if type(item) is float and not math.isfinite(item):
            return f"'{where}' holds {item}, which JSON cannot carry"
        if type(item) in _JSON_LEAVES:
            continue
        if depth >= MAX_DEPTH:
            return f"'{where}' is nested more than {MAX_DEPTH} levels deep"
        if type(item) in (list, tuple):
            stack.extend((f"{where}[{i}]", v, depth + 1) for i, v in enumerate(item))
        elif type(item) is dict:
            for key, v in item.items():
                if type(key) is not str:
                    return f"'{where}' has a key that is not a string ({_type_name(key)})"
                stack.append((f"{where}.{key}", v, depth + 1))
        else:
            return f"'{where}' holds a {_type_name(item)}, which JSON cannot carry"
    return None


def _check_value(tool_name: str, name: str, value: Any) -> str | None:
    """The rules every argument obeys whatever its schema (see the module docstring)."""
    if type(value) in (list, tuple, dict):
        problem = _not_json(name, value)
        if problem is not None:
            return f"{tool_name}: argument {problem}; send plain JSON values."
    if isinstance(value, str):
        at = lone_surrogate(value)
        if at is not None:
            return (
                f"{tool_name}: argument '{name}' holds a lone surrogate (U+{ord(value[at]):04X} "
                f"at index {at}), which no UTF-8 text, file name or command line can hold; send "
                "real characters (in JSON, a \\ud83d\\ude00 pair is one character, a lone "
                "\\ud800 is none)."
            )
    elif isinstance(value, int) and not isinstance(value, bool):
        if not -INT_LIMIT < value < INT_LIMIT:
            return (
                f"{tool_name}: argument '{name}' is out of range ({show(value)}); integers "
                f"must lie within ±2**63."
            )
    elif isinstance(value, float):
        if not math.isfinite(value):
            return (
                f"{tool_name}: argument '{name}' must be a finite number, got {value}; send a "
                "number of seconds (or lines, …) within the bound its description gives, or omit "
                "it for the default. Nothing was run."
            )
        if not -INT_LIMIT < value < INT_LIMIT:
            return (
                f"{tool_name}: argument '{name}' is out of range ({show(value)}); numbers must "
                "lie within ±2**63. Nothing was run."
            )
    return None


def _validate(tool_name: str, schema: dict[str, Any], args: Any) -> tuple[dict[str, Any], str | None]:
    def hint() -> str:  # built only for an error message: validation runs on every call
        return f"Usage: {usage(tool_name, schema)}"

    if not isinstance(args, dict):
        return {}, (
            f"{tool_name}: arguments must be a JSON object, got {_type_name(args)}. {hint()}"
        )
    props: dict[str, Any] = schema.get("properties", {})
    required = schema.get("required", [])
    cleaned: dict[str, Any] = {}
    for name in required:
        if name not in args or args[name] is None:
            return args, f"{tool_name}: missing required argument '{name}'. {hint()}"
    for name, value in args.items():
        if not isinstance(name, str):
            return args, (
                f"{tool_name}: argument names must be strings, got {show(name)}. {hint()}"
            )
        name = _plain(name)  # a str subclass's overridden methods never run inside a tool
        prop = props.get(name)
        if prop is None:
            if schema.get("additionalProperties", True) is False:
                accepted = ", ".join(props) or "none"
                return args, (
                    f"{tool_name}: unknown argument {show(name)} (accepted: {accepted}). {hint()}"
                )
            # An extra argument is kept (the schema allows it), so it obeys the rules every
            # argument obeys: plain JSON, no lone surrogates, integers within range.
            value = _plain(value)
            problem = _check_value(tool_name, name, value)
            if problem is None and type(value) not in (*_JSON_LEAVES, list, tuple, dict):
                problem = (
                    f"{tool_name}: argument '{name}' holds a {_type_name(value)}, which JSON "
                    "cannot carry; send plain JSON values."
                )
            if problem is not None:
                return args, problem
            cleaned[name] = value
            continue
        if value is None and name not in required:
            continue  # an explicit null means "use the default"
        expected = prop.get("type")
        if expected and not _type_ok(value, expected):
            return args, (
                f"{tool_name}: argument '{name}' must be {expected}, got "
                f"{_type_name(value)} {show(value)}. {hint()}"
            )
        if expected == "integer" and isinstance(value, float):
            value = int(value)
        value = _plain(value)
        problem = _check_value(tool_name, name, value)
        if problem is None and isinstance(value, str):
            problem = _check_length(tool_name, name, value, prop)
        if problem is not None:
            return args, problem
        if "enum" in prop and value not in prop["enum"]:
            choices = ", ".join(repr(c) for c in prop["enum"])
            return args, (
                f"{tool_name}: argument '{name}' must be one of {choices}, got {show(value)}."
            )
        if "minimum" in prop and value < prop["minimum"]:
            return args, (
                f"{tool_name}: argument '{name}' must be >= {prop['minimum']}, got {show(value)}."
            )
        if "exclusiveMinimum" in prop and value <= prop["exclusiveMinimum"]:
            return args, (
                f"{tool_name}: argument '{name}' must be > {prop['exclusiveMinimum']}, got "
                f"{show(value)}."
            )
        if "maximum" in prop and value > prop["maximum"]:
            return args, (
                f"{tool_name}: argument '{name}' must be <= {prop['maximum']}, got {show(value)}."
            )
        if expected == "array":
            item_type = prop.get("items", {}).get("type")
            value = [_plain(item) for item in value]
            for i, item in enumerate(value):
                if item_type and not _type_ok(item, item_type):
                    return args, (
                        f"{tool_name}: argument '{name}[{i}]' must be {item_type}, got "
                        f"{_type_name(item)}. {hint()}"
                    )
                problem = _check_value(tool_name, f"{name}[{i}]", item)
                if problem is not None:
                    return args, problem
        cleaned[name] = value
    return cleaned, None
