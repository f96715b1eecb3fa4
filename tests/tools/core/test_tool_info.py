"""``Tool.info()``: what a UI is told of each tool (ToolInfo of docs/protocol.md), from the
registry — the activity panel keeps no list of main arguments of its own."""

from __future__ import annotations

from kli.tools.registry import REGISTRY


def test_every_tool_says_its_main_argument_and_summary_arguments() -> None:
    for tool in REGISTRY.tools.values():
        info = tool.info()
        assert info["name"] == tool.name and info["main_arg"] == tool.main_arg
        props = tool.parameters.get("properties", {})
        assert all(arg in props for arg in info["summary_args"]), tool.name
        if tool.main_arg:
            assert tool.main_arg in info["summary_args"]


def test_a_path_leads_the_summary_then_the_main_argument() -> None:
    tools = REGISTRY.tools
    assert tools["bash"].info()["summary_args"] == ["command"]
    assert tools["read"].info()["summary_args"] == ["path"]
    assert tools["edit"].info()["summary_args"] == ["path", "input"]
