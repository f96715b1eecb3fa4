"""Argument validation derived from a tool's JSON Schema.

Supports the subset the registry uses: ``type`` (string, integer, number, boolean, array,
object), ``required``, ``enum``, ``minimum`` / ``maximum``, ``items`` and
``additionalProperties: false``. Every failure names the argument and the tool's accepted
arguments, so the caller can retry with a corrected call.
"""

from __future__ import annotations

from typing import Any

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
    ints — or ``(args, message)`` naming the first problem found.
    """
    def hint() -> str:  # built only for an error message: validation runs on every call
        return f"Usage: {usage(tool_name, schema)}"

    if not isinstance(args, dict):
        return {}, f"{tool_name}: arguments must be a JSON object, got {type(args).__name__}. {hint()}"
    props: dict[str, Any] = schema.get("properties", {})
    cleaned: dict[str, Any] = {}
    for name in schema.get("required", []):
        if name not in args or args[name] is None:
            return args, f"{tool_name}: missing required argument '{name}'. {hint()}"
    for name, value in args.items():
        prop = props.get(name)
        if prop is None:
            if schema.get("additionalProperties", True) is False:
                accepted = ", ".join(props) or "none"
                return args, (
                    f"{tool_name}: unknown argument '{name}' (accepted: {accepted}). {hint()}"
                )
            cleaned[name] = value
            continue
        if value is None and name not in schema.get("required", []):
            continue  # an explicit null means "use the default"
        expected = prop.get("type")
        if expected and not _type_ok(value, expected):
            return args, (
                f"{tool_name}: argument '{name}' must be {expected}, got "
                f"{type(value).__name__} {value!r:.60}. {hint()}"
            )
        if expected == "integer" and isinstance(value, float):
            value = int(value)
        if "enum" in prop and value not in prop["enum"]:
            choices = ", ".join(repr(c) for c in prop["enum"])
            return args, f"{tool_name}: argument '{name}' must be one of {choices}, got {value!r}."
        if "minimum" in prop and value < prop["minimum"]:
            return args, f"{tool_name}: argument '{name}' must be >= {prop['minimum']}, got {value}."
        if "maximum" in prop and value > prop["maximum"]:
            return args, f"{tool_name}: argument '{name}' must be <= {prop['maximum']}, got {value}."
        item_type = prop.get("items", {}).get("type") if expected == "array" else None
        if item_type:
            for i, item in enumerate(value):
                if not _type_ok(item, item_type):
                    return args, (
                        f"{tool_name}: argument '{name}[{i}]' must be {item_type}, got "
                        f"{type(item).__name__}. {hint()}"
                    )
        cleaned[name] = value
    return cleaned, None
