"""Magic arguments parse from each tool's schema (no kernel needed: real registry tools)."""

from __future__ import annotations

import pytest

from kli.kernel.magics import MagicUsageError, magic_usage, parse_magic_args, positional_slots
from kli.tools.registry import REGISTRY

pytestmark = pytest.mark.kernel

T = REGISTRY.tools


def test_first_positional_fills_the_first_required_argument() -> None:
    assert parse_magic_args(T["read"], "a.py") == {"path": "a.py"}


def test_options_convert_to_the_schema_types() -> None:
    assert parse_magic_args(T["read"], "a.py --start 3 --end=9 --raw") == {
        "path": "a.py", "start": 3, "end": 9, "raw": True}
    assert parse_magic_args(T["read"], "--no-raw a.py") == {"path": "a.py", "raw": False}


def test_enum_option_and_cell_body_fill_the_main_argument() -> None:
    args = parse_magic_args(T["edit"], "--repair preview", "@@ a.py\n+\n~x\n")
    assert args == {"repair": "preview", "input": "@@ a.py\n+\n~x\n"}


def test_dashes_and_underscores_and_aliases_spell_the_same_option() -> None:
    assert parse_magic_args(T["edit"], "--accept-repair c1 --path a.py") == {
        "accept_repair": "c1", "path": "a.py"}
    assert parse_magic_args(T["edit"], "--accept_repair c1 --path a.py")["accept_repair"] == "c1"
    assert parse_magic_args(T["eval"], "--package os 1")["module"] == "os"


def test_main_argument_takes_the_rest_of_the_line_verbatim() -> None:
    assert parse_magic_args(T["bash"], "ls -la | wc -l") == {"command": "ls -la | wc -l"}
    assert parse_magic_args(T["bash"], "--timeout 5 echo 'a  b'") == {
        "timeout": 5, "command": "echo 'a  b'"}
    assert parse_magic_args(T["bash"], '"ls -la"') == {"command": "ls -la"}
    assert parse_magic_args(T["eval"], "x = {1: 2}") == {"code": "x = {1: 2}"}


def test_several_required_arguments_fill_in_order() -> None:
    assert parse_magic_args(T["search"], "'def f' src/*.py --context 2") == {
        "pattern": "def f", "path": "src/*.py", "context": 2}
    assert parse_magic_args(T["write"], "out.txt", "hello\n") == {"path": "out.txt",
                                                                 "content": "hello\n"}


@pytest.mark.parametrize(
    ("tool", "line", "cell", "message"),
    [
        ("read", "a.py --start three", None, "--start expects integer"),
        ("read", "--bogus 1 a.py", None, "unknown option --bogus"),
        ("read", "a.py --start", None, "--start needs a value"),
        ("search", "a b c", None, "unexpected argument 'c'"),
        ("read", "--no-path a.py", None, "is not a flag"),
    ],
)
def test_usage_errors_name_the_problem(tool: str, line: str, cell: str | None, message: str) -> None:
    with pytest.raises(MagicUsageError, match=message):
        parse_magic_args(T[tool], line, cell)


def test_usage_is_generated_from_the_schema() -> None:
    text = magic_usage(T["read"])
    assert text.startswith("Usage: %kli read PATH [--start INTEGER] [--end INTEGER] [--raw]")
    assert "Schema: read path:string [start:integer]" in text
    assert "[--repair safe|preview|reject]" in magic_usage(T["edit"])
    assert "%%kli bash [options]   (cell body = command)" in magic_usage(T["bash"])


@pytest.mark.parametrize("name", sorted(T))
def test_every_tool_parses_its_own_usage_shape(name: str) -> None:
    tool = T[name]
    slots = positional_slots(tool, cell=False)
    line = " ".join(f"v{i}" for i in range(len(slots)))
    args = parse_magic_args(tool, line)
    assert set(args) == set(slots)
