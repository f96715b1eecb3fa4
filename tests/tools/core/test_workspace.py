"""Workspace.call: the single entry point never raises, validates from the schema, gates by
capability, and reports every call to listeners."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kli.tools import ToolResult, Workspace
from kli.tools.core import atomic
from kli.tools.core.registry import GATE_READ, Call, Profile, Tool
from kli.tools.core.result import ToolError
from kli.tools.registry import REGISTRY, Registry


def _echo(call: Call) -> ToolResult:
    return ToolResult.success(f"echo {call.args.get('text')}", session=call.session.id)


def _boom(call: Call) -> ToolResult:
    raise RuntimeError("kaboom")


def _refuse(call: Call) -> ToolResult:
    raise ToolError("refused because of X; retry with Y", error="refused")


@pytest.fixture
def probe_registry(ws: Workspace) -> Registry:
    """A registry holding test-only tools, handed to the test's workspace."""
    schema = {
        "type": "object",
        "properties": {"text": {"type": "string"}, "n": {"type": "integer", "minimum": 0},
                       "mode": {"type": "string", "enum": ["a", "b"]}},
        "required": ["text"],
        "additionalProperties": False,
    }
    tools = [
        Tool("t_echo", "kli", GATE_READ, "echo", schema, _echo, aliases={"txt": "text"}),
        Tool("t_boom", "kli", None, "boom", {"type": "object", "properties": {}}, _boom),
        Tool("t_refuse", "kli", None, "refuse", {"type": "object", "properties": {}}, _refuse),
    ]
    reg = Registry.build(tools, [Profile("kli"), Profile("slmcode")])
    ws.registry = reg
    return reg


def test_unknown_tool_is_an_error_result_with_suggestion(ws: Workspace, probe_registry: Registry) -> None:
    result = ws.call("t_ech", {"text": "x"})
    assert not result.ok
    assert "unknown tool 't_ech'" in result.text
    assert "t_echo" in result.text
    assert result.details["error"] == "unknown_tool"


def test_missing_required_argument_is_named(ws: Workspace, probe_registry: Registry) -> None:
    result = ws.call("t_echo", {})
    assert not result.ok
    assert "missing required argument 'text'" in result.text
    assert "Usage: t_echo text:string" in result.text


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({"text": 3}, "argument 'text' must be string"),
        ({"text": "x", "n": "3"}, "argument 'n' must be integer"),
        ({"text": "x", "n": True}, "argument 'n' must be integer"),
        ({"text": "x", "n": -1}, "argument 'n' must be >= 0"),
        ({"text": "x", "mode": "c"}, "argument 'mode' must be one of 'a', 'b'"),
        ({"text": "x", "bogus": 1}, "unknown argument 'bogus' (accepted: text, n, mode)"),
    ],
)
def test_mistyped_arguments_are_named(ws: Workspace, probe_registry: Registry, args: dict[str, Any], fragment: str) -> None:
    result = ws.call("t_echo", args)
    assert not result.ok
    assert fragment in result.text
    assert result.details["error"] == "bad_arguments"


def test_non_object_arguments_are_refused(ws: Workspace, probe_registry: Registry) -> None:
    result = ws.call("t_echo", ["x"])  # type: ignore[arg-type]
    assert not result.ok
    assert "arguments must be a JSON object" in result.text


def test_integral_float_is_accepted_as_integer(ws: Workspace, probe_registry: Registry) -> None:
    assert ws.call("t_echo", {"text": "x", "n": 3.0}).ok


def test_alias_is_renamed_and_canonical_key_wins(ws: Workspace, probe_registry: Registry) -> None:
    assert ws.call("t_echo", {"txt": "a"}).text == "echo a"
    assert ws.call("t_echo", {"txt": "a", "text": "b"}).text == "echo b"


def test_internal_exception_becomes_error_result(ws: Workspace, probe_registry: Registry) -> None:
    result = ws.call("t_boom", {})
    assert not result.ok
    assert "internal error: RuntimeError: kaboom" in result.text
    assert result.details["error"] == "internal"


def test_tool_error_becomes_error_result_with_details(ws: Workspace, probe_registry: Registry) -> None:
    result = ws.call("t_refuse", {})
    assert result == ToolResult(False, "refused because of X; retry with Y", {"error": "refused"})


def test_result_details_are_json_serialisable(ws: Workspace, probe_registry: Registry) -> None:
    for name, args in [("t_echo", {"text": "x"}), ("t_boom", {}), ("nope", {})]:
        json.dumps(ws.call(name, args).to_json())


def _settings(root: Path, data: Any) -> None:
    (root / ".kli").mkdir(exist_ok=True)
    (root / ".kli" / "settings.json").write_text(json.dumps(data) if not isinstance(data, str) else data)


def test_absent_capabilities_grant_every_gate(root: Path, probe_registry: Registry) -> None:
    assert Workspace(str(root), registry=probe_registry).call("t_echo", {"text": "x"}).ok


def test_empty_capabilities_deny_gated_tools_and_run_nothing(root: Path, probe_registry: Registry) -> None:
    _settings(root, {"capabilities": []})
    ws = Workspace(str(root), registry=probe_registry)
    result = ws.call("t_echo", {"text": "x"})
    assert not result.ok
    assert "capability 'file/read' is not granted" in result.text
    assert result.details == {"error": "denied", "gate": "file/read"}
    assert ws.call("t_refuse", {}).details["error"] == "refused"  # ungated tools still run


def test_capability_list_grants_exactly_its_members(root: Path, probe_registry: Registry) -> None:
    _settings(root, {"capabilities": ["file/read"]})
    assert Workspace(str(root), registry=probe_registry).call("t_echo", {"text": "x"}).ok
    _settings(root, {"capabilities": ["file/write"]})
    assert not Workspace(str(root), registry=probe_registry).call("t_echo", {"text": "x"}).ok


def test_settings_change_takes_effect_on_next_call(root: Path, probe_registry: Registry) -> None:
    ws = Workspace(str(root), registry=probe_registry)
    assert ws.call("t_echo", {"text": "x"}).ok
    _settings(root, {"capabilities": []})
    assert not ws.call("t_echo", {"text": "x"}).ok


def test_broken_settings_file_fails_closed_naming_the_file(root: Path, probe_registry: Registry) -> None:
    _settings(root, "{not json")
    result = Workspace(str(root), registry=probe_registry).call("t_echo", {"text": "x"})
    assert not result.ok
    assert "settings.json is not valid JSON (line 1" in result.text
    assert result.details["error"] == "bad_settings"


def test_host_settings_merge_over_files(root: Path, probe_registry: Registry) -> None:
    _settings(root, {"capabilities": []})
    assert Workspace(str(root), registry=probe_registry, settings={"capabilities": ["file/read"]}).call("t_echo", {"text": "x"}).ok


def test_listener_receives_one_event_per_call(ws: Workspace, probe_registry: Registry) -> None:
    events: list[dict[str, Any]] = []
    ws.add_listener(events.append)
    session = ws.open_session("agent one")
    ws.call("t_echo", {"text": "x"}, session, source="agent")
    ws.call("t_boom", {})
    assert [(e["tool"], e["ok"], e["source"]) for e in events] == [("t_echo", True, "agent"), ("t_boom", False, "api")]
    assert events[0]["session"] == session.id and events[0]["session_label"] == "agent one"
    assert events[0]["duration_ms"] >= 0
    json.dumps(events)


def test_broken_listener_does_not_break_the_call(ws: Workspace, probe_registry: Registry) -> None:
    def bad(event: dict[str, Any]) -> None:
        raise ValueError("listener bug")

    ws.add_listener(bad)
    assert ws.call("t_echo", {"text": "x"}).ok


def test_sessions_are_distinct_and_default_exists(ws: Workspace, probe_registry: Registry) -> None:
    a, b = ws.open_session("a"), ws.open_session("b")
    assert a.id != b.id != ws.default_session.id
    assert ws.call("t_echo", {"text": "x"}, a).details["session"] == a.id
    assert ws.call("t_echo", {"text": "x"}).details["session"] == ws.default_session.id


def test_profile_before_hook_can_answer_without_running(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[str] = []

    def run(call: Call) -> ToolResult:
        ran.append("ran")
        return ToolResult.success("ran")

    tool = Tool("t_guarded", "slmcode", None, "g", {"type": "object", "properties": {}}, run)
    reg = Registry.build([tool], [Profile("kli"), Profile("slmcode", before=lambda c: ToolResult.error("nudge"))])
    ws.registry = reg
    assert ws.call("t_guarded", {}).text == "nudge"
    assert ran == []


def test_specs_come_from_the_registry() -> None:
    ws = Workspace(".")
    names = [s["name"] for s in ws.specs(None)]
    assert names == list(REGISTRY.tools)
    for spec in ws.specs(None):
        assert spec["parameters"]["type"] == "object"
        assert spec["description"]


def test_specs_take_all_for_every_tool_and_refuse_an_unknown_profile_naming_the_profiles() -> None:
    ws = Workspace(".")
    assert [s["name"] for s in ws.specs("all")] == list(REGISTRY.tools)
    assert [t.name for t in ws.tools("all")] == list(REGISTRY.tools)
    assert [s["name"] for s in ws.specs("slmcode")] == REGISTRY.names("slmcode")
    for bad in ("lisp", "", "ALL"):
        with pytest.raises(ValueError) as err:
            ws.specs(bad)
        assert str(err.value) == (f"unknown profile {bad!r}; the profiles are kli, slmcode and all "
                                  "(every tool).")


# -- core reads what it must know of a tool from its entry, never from its name --------------
def _writes_behind_the_writers(call: Call) -> ToolResult:
    with open(call.ws.jail.resolve("made.txt", write=True).real, "w") as f:  # not atomic: unseen
        f.write("made\n")
    return ToolResult.success("wrote")


def test_a_tool_that_detects_changes_has_its_files_detected_whatever_its_name(root: Path) -> None:
    params = {"type": "object", "properties": {}}
    seen = Tool("t_anything", "kli", None, "x", params, _writes_behind_the_writers,
                detects_changes=True, touches_image=False)
    unseen = Tool("bash", "kli", None, "x", params, _writes_behind_the_writers, touches_image=False)
    ws = Workspace(str(root), registry=Registry.build([seen, unseen], [Profile("kli")]))
    found = ws.call("t_anything", {})
    assert [f["path"] for f in found.details["files"]] == ["made.txt"] and "change" in found.details
    (root / "made.txt").unlink()
    assert "files" not in ws.call("bash", {}).details  # the name "bash" alone detects nothing


def test_the_registry_s_after_call_hooks_rewrite_each_result_in_order(root: Path) -> None:
    def first(call: Call, result: ToolResult) -> ToolResult:
        return ToolResult.success(result.text + f" +{call.tool.name}")

    def second(call: Call, result: ToolResult) -> ToolResult:
        return ToolResult.success(result.text + " +second")

    reg = Registry.build([Tool("t_echo", "kli", None, "e", {"type": "object", "properties": {
        "text": {"type": "string"}}}, _echo)], [Profile("kli")], after_call=(first, second))
    assert Workspace(str(root), registry=reg).call("t_echo", {"text": "x"}).text == \
        "echo x +t_echo +second"


def test_a_call_deciding_a_preview_is_never_held_by_its_tool_s_flag_not_its_name(root: Path) -> None:
    (root / ".kli").mkdir(exist_ok=True)
    (root / ".kli" / "settings.json").write_text(json.dumps({"approval": "review"}))
    params = {"type": "object", "properties": {"reject_repair": {"type": "string"}}}

    def ran(call: Call) -> ToolResult:  # a write through core's writers: captured when held
        atomic.write_atomic(call.ws.jail.resolve("w.txt", write=True).real, b"w\n", None)
        return ToolResult.success("ran")

    deciding = Tool("t_fix", "kli", None, "f", params, ran, mutates=True, action="file",
                    makes_preview=True)
    named_edit = Tool("edit", "kli", None, "f", params, ran, mutates=True, action="file")
    ws = Workspace(str(root), registry=Registry.build([deciding, named_edit], [Profile("kli")]))
    assert ws.call("t_fix", {"reject_repair": "p1"}, source="agent").text == "ran"
    (root / "w.txt").unlink()
    held = ws.call("edit", {"reject_repair": "p1"}, source="agent")  # the name alone: held
    assert held.details["status"] == "pending" and not (root / "w.txt").exists()


def test_registry_refuses_duplicates_and_unknown_profiles() -> None:
    tool = Tool("x", "kli", None, "x", {"type": "object"}, _echo)
    with pytest.raises(ValueError, match="registered twice"):
        Registry.build([tool, tool], [Profile("kli")])
    with pytest.raises(ValueError, match="unknown profile"):
        Registry.build([Tool("y", "nope", None, "y", {"type": "object"}, _echo)], [Profile("kli")])
