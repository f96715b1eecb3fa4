"""Bounded inputs: path and pattern arguments are capped once, in validation, naming the limit."""

from __future__ import annotations

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
