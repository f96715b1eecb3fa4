"""Bounded inputs: path and pattern arguments are capped once, in validation, naming the limit."""

from __future__ import annotations

import pytest

from kli.tools.core.schema import validate


def test_a_pattern_over_its_limit_is_refused_naming_the_limit() -> None:
    from kli.tools.core.schema import MAX_PATTERN_CHARS

    schema = {"type": "object", "properties": {"pattern": {"type": "string"}}}
    _, problem = validate("find", schema, {"pattern": "{a,b}" * 3000})
    assert problem is not None
    assert f"over the {MAX_PATTERN_CHARS}-character limit for a pattern" in problem
    assert validate("find", schema, {"pattern": "x" * MAX_PATTERN_CHARS})[1] is None


def test_a_path_over_path_max_is_refused_and_content_is_not_capped() -> None:
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    }
    _, problem = validate("write", schema, {"path": "a/" * 3000, "content": "x"})
    assert problem is not None and "4096-character limit for a path" in problem
    assert validate("write", schema, {"path": "a.txt", "content": "x" * 10_000_000})[1] is None


def test_a_schema_max_length_applies_to_any_string() -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 3}}}
    assert "3-character limit" in (validate("t", schema, {"name": "abcd"})[1] or "")


def _filler(prop: dict[str, object]) -> object:
    """A plain value of a required argument's type, so only the number under test is wrong."""
    return {"string": "a.py", "integer": 1, "number": 1, "boolean": False, "array": [],
            "object": {}}.get(str(prop.get("type")), "a.py")


@pytest.mark.serial  # asserts a wall-clock time
def test_every_number_argument_of_every_tool_refuses_nan_infinity_and_huge_naming_it(
        tmp_path: object) -> None:
    """One place (validation) keeps every timeout and count finite and bounded: NaN, ±inf or
    1e300 for any number or integer parameter of any tool is an error result naming that
    parameter, at once (a NaN timeout made await_decision wait for ever)."""
    import math
    import time
    from pathlib import Path

    from kli.tools.core.workspace import Workspace
    from kli.tools.registry import REGISTRY

    ws = Workspace(Path(str(tmp_path)))
    checked = []
    for tool in REGISTRY.tools.values():
        props = tool.parameters.get("properties") or {}
        for name, prop in props.items():
            if prop.get("type") not in ("number", "integer"):
                continue
            for bad in (math.nan, math.inf, -math.inf, 1e300, -1e300):
                args: dict[str, object] = {name: bad}
                for req in tool.parameters.get("required") or []:
                    if req != name:
                        args[req] = _filler(props[req])
                started = time.monotonic()
                result = ws.call(tool.name, args, source="agent")
                assert time.monotonic() - started < 2.0, (tool.name, name, bad)
                assert not result.ok and result.details.get("error") == "bad_arguments", (
                    tool.name, name, bad, result.text)
                assert f"'{name}'" in result.text, (tool.name, name, bad, result.text)
            checked.append(f"{tool.name}.{name}")
    assert "await_decision.timeout" in checked and "run_cells.timeout" in checked
    assert len(checked) >= 15


def test_a_nan_inside_a_list_or_object_argument_is_not_json() -> None:
    schema = {"type": "object", "properties": {"items": {"type": "array"}}}
    problem = validate("t", schema, {"items": [{"n": float("nan")}]})[1]
    assert problem is not None and "items[0].n" in problem and "JSON cannot carry" in problem
