"""The keyless demo model: a short script, not a model, that carries one task — the demo bug of
the tour's chat notebook (binder/chat_agent.ipynb) — through kli's real agent loop, so a new
user sees the loop work in a chat or a cell with no API key and no network.

    from kli.tools.agentmodels import agent_model
    model = agent_model("kli/demo")          # DemoModel: the id is DEMO_ID

What it does, whatever the task says (it reads only the conversation, never the task's words):

1. ``read`` the notebook the task or the persona's context names (the first ``*.ipynb``);
2. finds the demo bug in that read — a mean divided by ``len(xs) - 1`` — and proposes an
   anchored ``edit`` of its cell, with the anchors the read showed (held for review when the
   person's review is on: the loop waits for their Accept);
3. once the edit is written, ``eval``s the fixed definition with a check (``mean([2, 4, 6])``);
4. answers, saying what it changed and what the check printed — and that it is a script.

Each reply is worked out from the conversation so far (the tool results the loop sent back),
so one model serves any number of runs, and a refusal on the way (no notebook named, no demo bug
in it, the edit rejected, refused, or still waiting for review, the check failing) ends the run
with an answer saying so and how to go on. It reports no token usage: nothing is spent.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

DEMO_ID = "kli/demo"
DEMO_NAME = "kli demo (keyless)"
DEMO_LABEL = f"{DEMO_ID} — the keyless demo model (a script: no key, no network)"

NOTEBOOK = re.compile(r"""(?<![\w/.-])([^\s"'`<>()|#]+\.ipynb)\b""")
CELL_HEADER = re.compile(r"""([^\s"'`<>()|#]+\.ipynb)#([\w.-]+)""")
ROW = re.compile(r"^\s*(\d+):([0-9a-f]{2})\|(.*)$")
DEF = re.compile(r"^\s*def\s+(\w+)\s*\(")
# The demo bug: a mean that divides by one less than the count.
BUG = re.compile(r"/\s*\(\s*len\((\w+)\)\s*-\s*1\s*\)")
CHECK_ARGS = "[2, 4, 6]"
SIGNATURE = ("\n\n(I am kli's keyless demo model: a script that needs no key and no network, "
             "and it fixes only this demo's bug. With a real model any task works: set one up "
             "(docs/agent.md says which variable), and choose it in the chat's model menu — "
             "beside kli under the input, or in its … menu.)")


def _reply(content: str | None = None, call: tuple[str, dict[str, Any]] | None = None,
           turn: int = 0) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if call is not None:
        message["tool_calls"] = [{"id": f"demo-{turn + 1}", "type": "function",
                                  "function": {"name": call[0],
                                               "arguments": json.dumps(call[1])}}]
    return {"id": f"demo-{turn + 1}", "object": "chat.completion", "model": DEMO_ID,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if call else "stop"}]}


def find_bug(read_text: str) -> dict[str, Any] | None:
    """The demo bug in a ``read`` of a notebook: its notebook, cell, line, anchor, the line as
    it is and as fixed, the function it is in, and the cell's source fixed; None when absent."""
    cell: tuple[str, str] | None = None
    rows: dict[tuple[str, str], list[tuple[int, str, str]]] = {}
    for raw in read_text.splitlines():
        row = ROW.match(raw)
        if row and cell is not None:
            rows.setdefault(cell, []).append((int(row.group(1)), row.group(2), row.group(3)))
            continue
        header = CELL_HEADER.search(raw)
        if header and not row:
            cell = (header.group(1), header.group(2))
    for (path, cid), lines in rows.items():
        for number, anchor, text in lines:
            bug = BUG.search(text)
            if bug is None:
                continue
            fixed = text[:bug.start()] + f"/ len({bug.group(1)})" + text[bug.end():]
            names = [m.group(1) for _, _, t in lines if (m := DEF.match(t))]
            source = "\n".join(fixed if n == number else t for n, _, t in lines)
            return {"path": path, "cell": cid, "line": number, "anchor": anchor, "text": text,
                    "fixed": fixed, "function": names[0] if names else None, "source": source}
    return None


class DemoModel:
    """The keyless demo model (see the module docstring): a ``Model`` whose every reply is
    worked out from the conversation. ``model`` is ``kli/demo``; ``label`` names it as the
    keyless demo wherever a run shows its model."""

    model = DEMO_ID
    label = DEMO_LABEL

    def __call__(self, messages: list[dict[str, Any]],
                 tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        calls: list[str] = []
        for m in messages:
            for call in m.get("tool_calls") or []:
                calls.append(str((call.get("function") or {}).get("name")))
        results = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
        task = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"),
                    "")
        if tools is None:  # the loop's final request: say where the script got to
            return _reply(self._summary(calls, results) + SIGNATURE, turn=turn)
        if not calls:
            named = NOTEBOOK.findall(task)
            if not named:
                return _reply("I need a notebook to work on: name it in the task (`fix mean in "
                              "chat_agent.ipynb`)." + SIGNATURE, turn=turn)
            return _reply(None, ("read", {"path": named[0]}), turn)
        last = results[-1] if results else ""
        if calls[-1] == "read":
            bug = find_bug(last)
            if bug is None:
                return _reply(
                    "I read the notebook and found no demo bug in it (a mean that divides by "
                    "`len(xs) - 1`), so there is nothing for me to fix. Run the set-up cell of "
                    "chat_agent.ipynb to write the bug back, and ask again." + SIGNATURE,
                    turn=turn)
            patch = (f"@@ {bug['path']}#{bug['cell']}\n= {bug['line']}:{bug['anchor']}\n"
                     f"~{bug['fixed']}\n")
            return _reply(f"{bug['function'] or 'the function'} in cell {bug['cell']} divides "
                          "by one less than the count; I will fix that line.",
                          ("edit", {"input": patch}), turn)
        bug = self._bug(messages)
        if calls[-1] == "edit":
            if bug is None:
                return _reply("I lost track of the edit I made." + SIGNATURE, turn=turn)
            written = self._written(last)
            if written is not None:
                return _reply(written + SIGNATURE, turn=turn)
            check = f"{bug['function']}({CHECK_ARGS})" if bug["function"] else "None"
            return _reply("The edit is in; now I run the fixed definition with a check.",
                          ("eval", {"code": f"# check the fixed cell: {check}\n"
                                            f"{bug['source']}\n{check}"}), turn)
        if calls[-1] == "eval" and bug is not None:
            # eval shows the last expression's value as "[line N] VALUE"
            shown = re.findall(r"^\[line \d+\]\s*(.*)$", last, re.M)
            value = shown[-1] if shown else "(no value shown)"
            if "Error" in last or "refused" in last.lower():
                return _reply(f"The check failed: {value}. The edit is in the cell; look at it "
                              "there." + SIGNATURE, turn=turn)
            name = bug["function"] or "the function"
            return _reply(
                f"Fixed `{name}` in `{bug['path']}` (cell {bug['cell']}): it divided by "
                f"`len(xs) - 1`, one less than the count, and now divides by `len(xs)`. The "
                f"check ran the fixed cell in the kernel: `{name}({CHECK_ARGS})` gives "
                f"{value}. Run the notebook's cells to see it there." + SIGNATURE, turn=turn)
        return _reply(self._summary(calls, results) + SIGNATURE, turn=turn)

    @staticmethod
    def _bug(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The bug found in the run's read (the first tool result)."""
        for m in messages:
            if m.get("role") == "tool":
                return find_bug(str(m.get("content") or ""))
        return None

    @staticmethod
    def _written(result: str) -> str | None:
        """None when the edit's result says it is written (at once, or accepted after the
        person's review); else the answer that ends the run."""
        if "[review]" in result:
            verdict = re.search(r"was (accepted|rejected|refused|discarded)\b",
                                result.split("[review]", 1)[1])
            if verdict is None:
                return ("The edit is still waiting for your review, so nothing is written and I "
                        "stop here. Accept it in the kli panel, then check the cell.")
            if verdict.group(1) == "accepted":
                return None
            if verdict.group(1) == "rejected":
                return ("You rejected the edit, so the cell is as it was and I stop here. Ask "
                        "again to get the edit back.")
            return (f"The edit was {verdict.group(1)} when it was to be written (the cell had "
                    "changed?); nothing was written. Run the set-up cell and ask again.")
        if result.startswith("Not written"):
            return ("The edit is held for your review and I was not to wait for it. Accept it "
                    "in the kli panel, then check the cell.")
        if re.match(r"@@ |.*: ok\b|Edited|edit ok", result) or "+1 -1" in result:
            return None
        first = result.strip().splitlines()[0] if result.strip() else "no reason given"
        return f"The edit was refused: {first}"

    @staticmethod
    def _summary(calls: list[str], results: list[str]) -> str:
        done = ", ".join(calls) if calls else "nothing yet"
        return f"I stopped before the end of my script (calls made: {done})."


if TYPE_CHECKING:  # mypy checks it conforms to its role (kli.tools.roles)
    from kli.tools.roles import Model

    def _is_model(model: DemoModel) -> Model:
        return model
