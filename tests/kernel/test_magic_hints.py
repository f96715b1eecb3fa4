"""Hints shown to a person say the magic they would type, generated from the registry's
argument info (the tools write each hint once, for the agent)."""

from __future__ import annotations

from typing import Any

import pytest

from kli.kernel.magics import for_person, magic_call, parse_magic_args, spoken_to_person
from kli.tools.core.result import ToolResult
from kli.tools.registry import REGISTRY


def test_an_agent_call_in_a_hint_is_said_as_the_magic() -> None:
    text = "Re-read line 2 of a.py (read path='a.py' start=1 end=8) and redo the patch."
    assert for_person(text) == "Re-read line 2 of a.py (%kli read a.py --start 1 --end 8) and redo the patch."
    json_form = 'To write this candidate exactly as shown: edit {"accept_repair": "c1", "path": "a.py"}'
    assert for_person(json_form).endswith("%kli edit --accept-repair c1 --path a.py")
    assert for_person("Read it first (read path='u.py', or a search)") == (
        "Read it first (%kli read u.py, or a search)")


def test_the_lines_of_a_file_are_shown_as_they_are() -> None:
    text = "1:ab|hint = \"read path='a.py' start=1\"\n*   2|read path='b.py'\n[Next page: read path='c.py' start=3]\n"
    shown = for_person(text).splitlines()
    assert shown[:2] == text.splitlines()[:2]
    assert shown[2] == "[Next page: %kli read c.py --start 3]"


def test_text_without_an_agent_call_is_unchanged() -> None:
    for text in ("Edited a.py: +1 -1", "%kli read a.py --start 2", "a read of path names", ""):
        assert for_person(text) == text


@pytest.mark.parametrize(("tool", "args"), [
    ("read", {"path": "a.py", "start": 1, "end": 8}),
    ("read", {"path": "nb.ipynb#c3", "start": 41}),
    ("read", {"path": "with space.py", "raw": True}),
    ("edit", {"accept_repair": "c1", "path": "a.py"}),
    ("bash", {"command": "ls -la 'x y'", "timeout": 5}),
])
def test_the_magic_form_parses_back_to_the_same_call(tool: str, args: dict[str, Any]) -> None:
    t = REGISTRY.tools[tool]
    line = magic_call(t, args)
    assert line is not None and line.startswith(f"%kli {tool} ")
    assert parse_magic_args(t, line[len(f"%kli {tool} "):]) == args


def test_a_value_of_several_lines_has_no_one_line_magic() -> None:
    assert magic_call(REGISTRY.tools["edit"], {"input": "@@ a.py\n= 1:ab\n~x\n"}) is None


def test_a_magic_result_shows_its_text_and_file_messages_for_a_person() -> None:
    result = ToolResult(False, "stale: read path='a.py' start=1 end=7", {
        "files": [{"path": "a.py", "status": "rejected", "message": "read path='a.py' start=1"}]})
    shown = spoken_to_person(result)
    assert shown.text == "stale: %kli read a.py --start 1 --end 7"
    assert shown.details["files"][0]["message"] == "%kli read a.py --start 1"
    assert result.text.endswith("end=7")  # the agent's result is not changed


def test_a_hint_to_repeat_with_a_flag_is_said_as_the_magic_option_a_person_types():
    text = ("undo refused: a.txt changed since change 3 (someone edited it after). Nothing was "
            "changed. Look at it first; to put the old bytes back anyway, repeat with force=true "
            "(what is there now is kept, so that can be undone too).")
    assert "repeat with --force (what is there now" in for_person(text)
    assert "force=true" not in for_person(text)
    assert for_person("12:ab|repeat with force=true\n") == "12:ab|repeat with force=true\n"
