"""The edit-format contract a model is given with the slmcode tools (the spec's
``agents.EditContract``).

The rules are the spec's five, then the two harness invariants (one tool call per turn, never
end on a tool call) that ``kli.tools.agent`` enforces. The prompt ships a worked example and a
worked repair — the line-number-prefix failure and its fix — because for a small model a
demonstration outperforms a rule.

The example is data (``EXAMPLE_FILE``, ``WORKED_EXAMPLE``, ``WORKED_REPAIR``): each step is a
call and the exact text the tool answers. tests/tools/ws/test_contract.py replays the steps on a
real workspace and compares every answer, so the prompt cannot drift from the tools.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple


class Step(NamedTuple):
    """One call of a worked example and what the tool answers."""

    tool: str
    args: dict[str, Any]
    answer: str


EXAMPLE_PATH = "cart.py"
EXAMPLE_FILE = (
    "def total(items):\n"
    "    result = 0\n"
    "    for item in items:\n"
    "        result += item.price\n"
    "    return result\n"
)

WORKED_EXAMPLE = (
    Step(
        "ws_read",
        {"path": EXAMPLE_PATH},
        "     1|def total(items):\n"
        "     2|    result = 0\n"
        "     3|    for item in items:\n"
        "     4|        result += item.price\n"
        "     5|    return result",
    ),
    Step(
        "ws_edit",
        {
            "path": EXAMPLE_PATH,
            "old_str": "    for item in items:\n        result += item.price",
            "new_str": "    for item in items:\n        result += item.price * item.quantity",
        },
        "edited cart.py (1 replacement(s))",
    ),
)

# After the example: round the total. The first try carries the gutter on one line.
WORKED_REPAIR = (
    Step(
        "ws_edit",
        {
            "path": EXAMPLE_PATH,
            "old_str": "     4|        result += item.price * item.quantity\n    return result",
            "new_str": "        result += item.price * item.quantity\n    return round(result, 2)",
        },
        "Edit refused — partial ws_read line-number gutter in old_str: line 1 of 2 non-blank "
        "lines start with a `NN|` prefix and the others do not. The prefix is display only and "
        "is not in the file, so this can never match; and since only some lines carry it, it "
        "was not stripped automatically. Remove it from every line and retry.\n"
        "  before: '     4|        result += item.price * item.quantity'\n"
        "  after:  '        result += item.price * item.quantity'",
    ),
    Step(
        "ws_edit",
        {
            "path": EXAMPLE_PATH,
            "old_str": "        result += item.price * item.quantity\n    return result",
            "new_str": "        result += item.price * item.quantity\n    return round(result, 2)",
        },
        "edited cart.py (1 replacement(s))",
    ),
)

EDIT_RULES = """\
Editing files — the contract:
- old_str must match the file byte-for-byte, indentation included. ws_read first.
- Strip ws_read's `42|` prefix — it is display only and never matches.
- Make old_str unique; include 2–3 surrounding lines when a short span repeats.
- ws_write creates new files; change existing files with ws_edit or ws_patch.
- A failed match is always answered by re-reading and retrying, never by ws_write."""

# The harness invariants of pkg/agents, as the model is told them (kli.tools.agent keeps them).
TURN_RULES = """\
Working in turns:
- One tool call per turn. Only the first tool call of a message runs; any others are dropped.
- Never end on a tool call. After your last tool result, answer in plain text: what you did, \
what you found, what is left."""


def _render(steps: tuple[Step, ...]) -> str:
    lines = []
    for step in steps:
        lines.append(f"call: {step.tool} {json.dumps(step.args, ensure_ascii=False)}")
        lines.append("answer:")
        lines.extend("  " + line for line in step.answer.split("\n"))
    return "\n".join(lines)


WORKED = f"""\
Worked example — {EXAMPLE_PATH} should count each item's quantity:
{_render(WORKED_EXAMPLE)}

Worked repair — then round the total; the first try pasted the `4|` prefix on one line:
{_render(WORKED_REPAIR)}
The fix was to copy the lines without their prefixes, exactly as the file holds them."""

EDIT_CONTRACT = f"{EDIT_RULES}\n\n{TURN_RULES}\n\n{WORKED}"
