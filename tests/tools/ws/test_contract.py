"""The edit contract's worked example and repair are what the tools really answer."""

from __future__ import annotations

from pathlib import Path

from kli.tools import Workspace
from kli.tools.ws import contract


def test_worked_example_and_repair_replay_exactly_on_a_real_workspace(
    ws: Workspace, root: Path
) -> None:
    (root / contract.EXAMPLE_PATH).write_text(contract.EXAMPLE_FILE)
    for step in (*contract.WORKED_EXAMPLE, *contract.WORKED_REPAIR):
        result = ws.call(step.tool, step.args)
        assert result.text == step.answer, f"{step.tool} {step.args}"
    assert (root / contract.EXAMPLE_PATH).read_text() == (
        "def total(items):\n"
        "    result = 0\n"
        "    for item in items:\n"
        "        result += item.price * item.quantity\n"
        "    return round(result, 2)\n"
    )


def test_the_repair_starts_with_a_refusal_and_ends_with_a_success(ws: Workspace) -> None:
    refused, fixed = contract.WORKED_REPAIR
    assert refused.answer.startswith("Edit refused — partial ws_read line-number gutter")
    assert refused.args["new_str"] == fixed.args["new_str"]
    assert "|" not in fixed.args["old_str"]


def test_the_contract_states_the_five_rules_and_both_turn_invariants() -> None:
    text = contract.EDIT_CONTRACT
    for rule in (
        "old_str must match the file byte-for-byte, indentation included. ws_read first.",
        "Strip ws_read's `42|` prefix — it is display only and never matches.",
        "Make old_str unique; include 2–3 surrounding lines when a short span repeats.",
        "ws_write creates new files; change existing files with ws_edit or ws_patch.",
        "A failed match is always answered by re-reading and retrying, never by ws_write.",
        "One tool call per turn.",
        "Never end on a tool call.",
    ):
        assert rule in text
    for step in (*contract.WORKED_EXAMPLE, *contract.WORKED_REPAIR):
        for line in step.answer.split("\n"):
            assert "  " + line in text
