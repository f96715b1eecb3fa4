"""Every tool's spec in each provider's format obeys that provider's documented rules, and a
strict call's nulls come back as absent arguments.

The checkers below restate each provider's published rules independently of
``kli.tools.core.formats`` (which would make a test that cannot fail):

- OpenAI, function calling with ``strict: true`` (Structured Outputs, "Supported schemas"):
  tool ``{"type": "function", "function": {name, description, parameters, strict}}``; name
  ``^[a-zA-Z0-9_-]{1,64}$``; the root is an object, not ``anyOf``; every object has
  ``additionalProperties: false`` and lists all its properties in ``required`` (optional ones
  are expressed as a union with ``null``); types string, number, integer, boolean, object, array,
  null; keywords limited to the supported set; at most 10 levels of nesting, 5000 properties,
  1000 enum values.
- Anthropic, Messages API tools: ``{name, description, input_schema}``, name
  ``^[a-zA-Z0-9_-]{1,64}$``, ``input_schema`` a JSON Schema whose ``type`` is ``object``.
- MCP (2025-06-18 schema, ``Tool``): ``name``, optional ``title``/``description``, ``inputSchema``
  with ``type: "object"``; checked also with the MCP SDK's own ``Tool`` model when installed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from kli.tools import Workspace
from kli.tools.core.formats import FORMATS, absent_nulls, in_format, openai_strict_schema
from kli.tools.core.schema import validate
from kli.tools.registry import REGISTRY

SPECS = [tool.spec() for tool in REGISTRY.tools.values()]
NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

OPENAI_TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}
OPENAI_SUPPORTED = {
    "type", "description", "properties", "required", "additionalProperties", "items", "anyOf",
    "enum", "const", "$ref", "$defs", "definitions", "pattern", "format", "multipleOf",
    "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems",
}


def openai_strict_problems(schema: dict[str, Any]) -> list[str]:
    """Every way ``schema`` breaks OpenAI's strict rules (empty: it is strict-valid)."""
    problems: list[str] = []
    counts = {"properties": 0}
    if schema.get("type") != "object" or "anyOf" in schema:
        problems.append("root: must be type object, not anyOf")

    def walk(node: dict[str, Any], where: str, depth: int) -> None:
        if depth > 10:
            problems.append(f"{where}: nested deeper than 10 levels")
        for key in node:
            if key not in OPENAI_SUPPORTED:
                problems.append(f"{where}: unsupported keyword {key!r}")
        kinds = node.get("type")
        for kind in kinds if isinstance(kinds, list) else [kinds] if kinds else []:
            if kind not in OPENAI_TYPES:
                problems.append(f"{where}: unsupported type {kind!r}")
        if len(node.get("enum", [])) > 1000:
            problems.append(f"{where}: more than 1000 enum values")
        is_object = kinds == "object" or (isinstance(kinds, list) and "object" in kinds)
        if is_object or "properties" in node:
            props = node.get("properties", {})
            counts["properties"] += len(props)
            if node.get("additionalProperties") is not False:
                problems.append(f"{where}: additionalProperties must be false")
            missing = set(props) - set(node.get("required", []))
            if missing:
                problems.append(f"{where}: not in required: {sorted(missing)}")
            for name, sub in props.items():
                walk(sub, f"{where}.{name}", depth + 1)
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{where}[]", depth + 1)
        for i, branch in enumerate(node.get("anyOf", [])):
            walk(branch, f"{where}|{i}", depth + 1)

    walk(schema, "$", 1)
    if counts["properties"] > 5000:
        problems.append("more than 5000 properties")
    return problems


def accepts_null(schema: dict[str, Any]) -> bool:
    try:
        jsonschema.validate(None, schema)
    except jsonschema.ValidationError:
        return False
    return True


def test_the_checker_fails_the_plain_specs_as_openai_strict_does() -> None:
    # every spec with an optional parameter fails (it is not in required) ...
    for spec in SPECS:
        params = spec["parameters"]
        optional = set(params.get("properties", {})) - set(params.get("required", []))
        problems = openai_strict_problems(params)
        assert bool(optional) == any("not in required" in p for p in problems), spec["name"]
    # ... and so does ws_write's additionalProperties: true
    assert any("additionalProperties" in p for p in openai_strict_problems(
        REGISTRY.tools["ws_write"].parameters))


@pytest.mark.parametrize("spec", SPECS, ids=[s["name"] for s in SPECS])
def test_openai_format_is_strict_valid(spec: dict[str, Any]) -> None:
    (tool,) = in_format([spec], "openai")
    assert set(tool) == {"type", "function"} and tool["type"] == "function"
    function = tool["function"]
    assert set(function) == {"name", "description", "parameters", "strict"}
    assert function["strict"] is True and NAME.match(function["name"])
    assert isinstance(function["description"], str) and function["description"]
    params = function["parameters"]
    assert openai_strict_problems(params) == []
    jsonschema.Draft202012Validator.check_schema(params)
    original = spec["parameters"]
    required = set(original.get("required", []))
    for name, prop in params["properties"].items():
        assert accepts_null(prop) == (name not in required), name  # optional <=> nullable


@pytest.mark.parametrize("spec", SPECS, ids=[s["name"] for s in SPECS])
def test_anthropic_format_follows_the_tool_use_shape(spec: dict[str, Any]) -> None:
    (tool,) = in_format([spec], "anthropic")
    assert set(tool) == {"name", "description", "input_schema"}
    assert NAME.match(tool["name"]) and tool["description"]
    assert tool["input_schema"]["type"] == "object"
    jsonschema.Draft202012Validator.check_schema(tool["input_schema"])
    assert tool["input_schema"] == spec["parameters"]


@pytest.mark.parametrize("spec", SPECS, ids=[s["name"] for s in SPECS])
def test_mcp_format_is_an_mcp_tool(spec: dict[str, Any]) -> None:
    (tool,) = in_format([spec], "mcp")
    assert {"name", "description", "inputSchema"} <= set(tool)
    assert set(tool) <= {"name", "title", "description", "inputSchema", "outputSchema",
                         "annotations", "_meta"}
    assert re.match(r"^[A-Za-z0-9_.-]{1,128}$", tool["name"])
    assert tool["inputSchema"]["type"] == "object"
    jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
    mcp_types = pytest.importorskip("mcp.types")
    parsed = mcp_types.Tool.model_validate(tool)
    assert parsed.name == spec["name"]


def test_unknown_format_is_refused_naming_the_formats() -> None:
    with pytest.raises(ValueError, match="use one of openai, anthropic, mcp"):
        in_format(SPECS, "gemini")
    assert FORMATS == ("openai", "anthropic", "mcp")


def test_strict_rewrite_reaches_nested_objects_and_keeps_the_input_untouched() -> None:
    schema = {"type": "object", "properties": {
        "items": {"type": "array", "items": {"anyOf": [
            {"type": "object", "properties": {"text": {"type": "string"},
                                              "note": {"type": "string", "default": "x"}},
             "required": ["text"]},
            {"type": "string"}]}},
        "mode": {"enum": ["a", "b"]}}, "additionalProperties": True}
    before = repr(schema)
    strict = openai_strict_schema(schema)
    assert repr(schema) == before
    assert openai_strict_problems(strict) == []
    branch = strict["properties"]["items"]["items"]["anyOf"][0]  # items is optional: nullable
    assert branch["required"] == ["text", "note"] and "default" not in branch["properties"]["note"]
    assert accepts_null(branch["properties"]["note"]) and not accepts_null(branch["properties"]["text"])
    assert accepts_null(strict["properties"]["mode"])


def _sample(prop: dict[str, Any]) -> Any:
    if "enum" in prop:
        return prop["enum"][0]
    return {"string": "x", "integer": 1, "number": 1.0, "boolean": False, "array": [],
            "object": {}}.get(prop.get("type", "string"), "x")


@pytest.mark.parametrize("spec", SPECS, ids=[s["name"] for s in SPECS])
def test_a_strict_call_with_nulls_for_every_optional_is_valid(spec: dict[str, Any]) -> None:
    """A strict model sends every property, null for those it does not mean to set."""
    params = spec["parameters"]
    required = set(params.get("required", []))
    args = {name: (_sample(p) if name in required else None)
            for name, p in params["properties"].items()}
    strict = in_format([spec], "openai")[0]["function"]["parameters"]
    jsonschema.validate(args, strict)  # what the model may send
    cleaned = absent_nulls(args, params)
    assert set(cleaned) == required
    assert validate(spec["name"], params, args)[1] is None  # the tools take it as it comes, too


def test_absent_nulls_drops_optional_nulls_at_every_level_and_keeps_required_ones() -> None:
    schema = {"type": "object", "required": ["a"], "properties": {
        "a": {"type": ["string", "null"]}, "b": {"type": "integer"},
        "list": {"type": "array", "items": {"type": "object", "required": ["t"],
                                            "properties": {"t": {"type": "string"},
                                                           "n": {"type": "string"}}}}}}
    got = absent_nulls({"a": None, "b": None, "list": [{"t": "x", "n": None}]}, schema)
    assert got == {"a": None, "list": [{"t": "x"}]}
    assert absent_nulls("not a dict", schema) == "not a dict"


def test_read_with_strict_nulls_reads_like_read_without_them(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    ws = Workspace(str(tmp_path))
    plain = ws.call("read", {"path": "a.py"})
    strict = ws.call("read", {"path": "a.py", "start": None, "end": None, "raw": None})
    assert strict.ok and strict.text == plain.text
