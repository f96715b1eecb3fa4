"""``%kli`` / ``%%kli`` and the short aliases, generated from the registry.

    %kli tools [--profile kli|slmcode|all] | %kli caps | %kli help TOOL
    %kli approval [review|auto [file|shell|eval]] [--keep|--no-keep] | %kli pending
    %kli sandbox [on|off] [--network off|all] [--no-keep] | %kli status
    %kli accept ID|--all|--session SID|--path PATH
    %kli reject ID|--all|--session SID|--path PATH [NOTE…]
    %kli TOOL [POSITIONAL…] [--name VALUE | --name=VALUE | --flag | --no-flag]…
    %%kli TOOL [same options]          (the cell body fills the tool's ``main_arg``)

Arguments parse from the tool's JSON Schema: ``--start 3`` converts to the schema's type,
booleans are flags, arrays repeat (``--x a --x b``) or take JSON, objects take JSON. Bare words
fill the required arguments in schema order; when the last one to fill is the tool's
``main_arg`` (``command`` for bash, ``form`` for eval…) it takes the rest of the line verbatim up
to the next known option, so ``%kli bash ls -la | wc -l`` needs no quoting — except a path, an
id or a name, which is one word: ``%kli read a.py --bogus 3`` is an unknown option, not a path.
Every call goes through the one "magic" session (source ``magic``) so anchors persist from cell
to cell. Tab completion (``kli_matcher``) offers the subcommands and tool names, then the
tool's options, from the same registry.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand

from kli.tools.registry import ALL, PROFILE_CHOICES, unknown_profile

if TYPE_CHECKING:
    from kli.kernel.comms import Hub
    from kli.tools.core.registry import Tool
    from kli.tools.core.result import ToolResult

SUBCOMMANDS = ("tools", "caps", "help", "approval", "pending", "accept", "reject", "agent",
               "sandbox", "status")
TOOLS_PROFILES = PROFILE_CHOICES

# Arguments that hold one word (a path, an id, a name): as a tool's main argument on a magic
# line they take one token, not the rest of the line. Code, commands, patterns and text take
# the rest verbatim, their own ``--flags`` included.
_ONE_WORD = ("path", "id", "name")


def _one_word(slot: str) -> bool:
    return slot in _ONE_WORD or slot.endswith("_path")


class MagicUsageError(Exception):
    """A magic line that does not fit the tool's schema; the message includes the usage."""


@dataclass
class _Token:
    raw: str
    start: int
    end: int

    @property
    def value(self) -> str:
        try:
            parts = shlex.split(self.raw)
        except ValueError:
            return self.raw
        return parts[0] if len(parts) == 1 else self.raw


def tokens(line: str) -> list[_Token]:
    """Shell-like tokens with their spans (an unclosed quote runs to the end of the line)."""
    out: list[_Token] = []
    i, n = 0, len(line)
    while i < n:
        while i < n and line[i].isspace():
            i += 1
        if i >= n:
            break
        start, quote = i, None
        while i < n:
            ch = line[i]
            if quote:
                if ch == "\\" and quote == '"' and i + 1 < n:
                    i += 1
                elif ch == quote:
                    quote = None
            elif ch in "'\"":
                quote = ch
            elif ch == "\\" and i + 1 < n:
                i += 1
            elif ch.isspace():
                break
            i += 1
        out.append(_Token(line[start:i], start, i))
    return out


def _props(tool: Tool) -> dict[str, Any]:
    props: dict[str, Any] = tool.parameters.get("properties", {})
    return props


def _option_names(tool: Tool) -> dict[str, str]:
    """``--spelling`` → canonical argument name (dashes and underscores, aliases)."""
    names: dict[str, str] = {}
    for name in [*_props(tool), *tool.aliases]:
        canonical = tool.aliases.get(name, name)
        names["--" + name] = canonical
        names["--" + name.replace("_", "-")] = canonical
    return names


def positional_slots(tool: Tool, *, cell: bool) -> list[str]:
    """Arguments bare words fill, in order: the required ones, then ``main_arg``."""
    props = _props(tool)
    slots = [r for r in tool.parameters.get("required", []) if r in props]
    if tool.main_arg and tool.main_arg in props and tool.main_arg not in slots:
        slots.append(tool.main_arg)
    if cell and tool.main_arg in slots:
        slots.remove(tool.main_arg)
    return slots


def magic_call(tool: Tool, args: dict[str, Any]) -> str | None:
    """The ``%kli`` line that makes the call ``args`` (``%kli read a.py --start 1 --end 8``):
    bare words for the positional slots given in order, ``--option value`` for the rest — the
    parser's own reading of the registry's argument info. None when a value cannot go on one
    line (a patch of several lines goes in a ``%%kli`` cell)."""
    props = _props(tool)
    words: list[str] = []
    rest = dict(args)
    for slot in positional_slots(tool, cell=False):
        if slot not in rest or not isinstance(rest[slot], str) or rest[slot].startswith("-"):
            break
        words.append(_word(rest.pop(slot)))
    for name, value in rest.items():
        if name not in props and name not in tool.aliases:
            return None
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            words.append(flag if value else "--no-" + flag[2:])
        elif isinstance(value, (int, float, str)):
            words += [flag, _word(str(value))]
        else:
            return None
    line = " ".join([f"%kli {tool.name}", *words])
    return None if "\n" in line else line


def _word(value: str) -> str:
    """``value`` as one magic word: quoted only when the tokenizer would split or unquote it."""
    if value and not any(c.isspace() or c in "'\"\\" for c in value):
        return value
    return shlex.quote(value)


# A call written for the agent: ``read path='a.py' start=1 end=8`` (the arguments as Python
# literals or bare words) or ``edit {"accept_repair": "c1", "path": "a.py"}`` (JSON).
_KV = r"""\w+=(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|[^\s'",;)\]]+)"""
_KV_ONE = re.compile(r"""(\w+)=('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|[^\s'",;)\]]+)""")


def _agent_args(tool: Tool, written: str) -> dict[str, Any] | None:
    """The arguments of an agent-syntax call's text (after the tool name), or None."""
    import ast

    if written.startswith("{"):
        try:
            args = json.loads(written)
        except ValueError:
            return None
        return args if isinstance(args, dict) else None
    args = {}
    for m in _KV_ONE.finditer(written):
        name, raw = m.group(1), m.group(2)
        if raw[:1] in "'\"":
            try:
                args[name] = ast.literal_eval(raw)
            except (ValueError, SyntaxError):
                return None
        else:
            try:
                args[name] = _convert(tool, name, raw)
            except MagicUsageError:
                return None
    return args


_CONTENT_ROW = re.compile(r"\s*[*>+~-]?\s*\d+(?::\w+)?\|")


def for_person(text: str) -> str:
    """``text`` with every call written for the agent (``read path='a.py' start=1``) said as
    the magic a person types (``%kli read a.py --start 1``); a call that has no one-line magic
    form stays as written. Results of magics are shown through this: the tools write their
    hints once, for the agent."""
    from kli.tools.registry import REGISTRY

    names = "|".join(re.escape(n) for n in sorted(REGISTRY.tools, key=len, reverse=True))
    pattern = re.compile(
        rf"(?<![%\w.])({names})((?: {_KV})+|" + r""" \{[^{}\n]*\})"""
    )

    def spoken(m: re.Match[str]) -> str:
        tool = REGISTRY.tools[m.group(1)]
        args = _agent_args(tool, m.group(2).strip())
        line = magic_call(tool, args) if args else None
        return line or m.group(0)

    def retried(line: str) -> str:  # "repeat with force=true": the same call with an option
        return _REPEAT_WITH.sub(lambda m: f"repeat with --{m.group(1).replace('_', '-')}",
                                pattern.sub(spoken, line))

    # A file's own lines (``12:ab|…``, ``*   2|…``) are shown as they are, whatever they say.
    return "".join(
        line if _CONTENT_ROW.match(line) else retried(line)
        for line in text.splitlines(keepends=True)
    )


# A hint to repeat the same call with a flag (``repeat with force=true``), as a person repeats a
# magic: ``repeat with --force``.
_REPEAT_WITH = re.compile(r"\brepeat with (\w+)=true\b")


def spoken_to_person(result: ToolResult) -> ToolResult:
    """``result`` as a magic shows it: its text and its files' messages ``for_person``."""
    from kli.tools.core.result import ToolResult

    details = dict(result.details)
    if details.get("error") == "denied" and isinstance(details.get("gate"), str):
        from kli.tools.core.workspace import denied_text

        tool = result.text.split(" denied: ", 1)[0]  # the agent's text names the tool first
        return ToolResult(result.ok, denied_text(tool, details["gate"], "person"), details)
    files = details.get("files")
    if isinstance(files, list):
        details["files"] = [
            {**f, "message": for_person(f["message"])}
            if isinstance(f, dict) and isinstance(f.get("message"), str) else f
            for f in files
        ]
    return ToolResult(result.ok, for_person(result.text), details, result.images)


def magic_usage(tool: Tool) -> str:
    """``%kli read PATH [--start INT] [--end INT] [--raw]`` plus the schema's own usage line."""
    from kli.tools.core.schema import usage

    props = _props(tool)
    parts = [s.upper() for s in positional_slots(tool, cell=False)]
    for name, prop in props.items():
        if name in parts or name.upper() in parts:
            continue
        kind = prop.get("type", "value")
        flag = "--" + name.replace("_", "-")
        if kind == "boolean":
            parts.append(f"[{flag}]")
        elif "enum" in prop:
            parts.append(f"[{flag} {'|'.join(str(v) for v in prop['enum'])}]")
        else:
            parts.append(f"[{flag} {kind.upper()}]")
    line = f"%kli {tool.name} " + " ".join(parts)
    if tool.main_arg:
        line += f"\n       %%kli {tool.name} [options]   (cell body = {tool.main_arg})"
    return f"Usage: {line.rstrip()}\nSchema: {usage(tool.name, tool.parameters)}"


def _convert(tool: Tool, name: str, text: str) -> Any:
    prop = _props(tool).get(name, {})
    kind = prop.get("type")
    flag = "--" + name.replace("_", "-")
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
        if kind == "boolean":
            lowered = text.lower()
            if lowered in ("true", "yes", "1", "on"):
                return True
            if lowered in ("false", "no", "0", "off"):
                return False
            raise ValueError(text)
        if kind in ("array", "object"):
            stripped = text.strip()
            if stripped[:1] in "[{":
                return json.loads(stripped)
            if kind == "array":
                item = prop.get("items", {}).get("type")
                return [_convert_item(item, text)]
            raise ValueError(text)
    except (ValueError, json.JSONDecodeError) as exc:
        raise MagicUsageError(f"{flag} expects {kind}, got {text!r}.") from exc
    return text


def _convert_item(kind: str | None, text: str) -> Any:
    if kind == "integer":
        return int(text)
    if kind == "number":
        return float(text)
    return text


def _accepted(tool: Tool) -> str:
    return ", ".join("--" + p.replace("_", "-") for p in _props(tool)) or "none"


def unknown_tool(name: str, where: str = "%kli") -> str:
    """``%kli: unknown tool 'raed'. Did you mean read? See %kli tools.``"""
    from kli.tools.core import suggest
    from kli.tools.registry import REGISTRY

    close = suggest.close_names(name, REGISTRY.tools)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    return f"{where}: unknown tool {name!r}.{hint} See %kli tools."


def parse_tools_args(line: str) -> str | None:
    """The profile ``%kli tools [--profile P | P]`` asks for (None: every tool); raises
    ``MagicUsageError`` for anything else."""
    toks = [t.value for t in tokens(line)]
    profile: str | None = None
    i = 0
    while i < len(toks):
        word = toks[i]
        spelled, eq, inline = word.partition("=")
        if spelled == "--profile":
            if not eq:
                if i + 1 >= len(toks):
                    raise MagicUsageError("--profile needs a value (kli, slmcode or all).")
                i += 1
                inline = toks[i]
            value = inline
        elif word.startswith("--"):
            raise MagicUsageError(f"unknown option {spelled} (accepted: --profile).")
        else:
            value = word
        if value not in TOOLS_PROFILES:
            raise MagicUsageError(unknown_profile(value))
        profile = None if value == ALL else value
        i += 1
    return profile


def parse_magic_args(tool: Tool, line: str, cell: str | None = None) -> dict[str, Any]:
    """Arguments for ``tool`` from a magic line (and cell body); raises ``MagicUsageError``."""
    props = _props(tool)
    options = _option_names(tool)
    args: dict[str, Any] = {}
    if cell is not None:
        if not tool.main_arg:
            raise MagicUsageError(f"{tool.name} takes no cell body; use %kli {tool.name} …")
        args[tool.main_arg] = cell
    slots = positional_slots(tool, cell=cell is not None)
    toks = tokens(line)
    i = 0
    while i < len(toks):
        tok = toks[i]
        word = tok.value
        if tok.raw == "--":
            toks, i = toks[i + 1 :], 0
            options = {}
            continue
        spelled, eq, inline = word.partition("=")
        negated = spelled.startswith("--no-") and ("--" + spelled[5:]) in options
        if spelled in options or negated:
            name = options["--" + spelled[5:]] if negated else options[spelled]
            kind = props.get(name, {}).get("type")
            if negated:
                if kind != "boolean":
                    raise MagicUsageError(f"{spelled} is not a flag: {name} is {kind}.")
                value: Any = False
            elif eq:
                value = _convert(tool, name, inline)
            elif kind == "boolean":
                value = True
            else:
                if i + 1 >= len(toks):
                    raise MagicUsageError(f"{spelled} needs a value ({kind}).")
                i += 1
                value = _convert(tool, name, toks[i].value)
            if kind == "array" and isinstance(args.get(name), list) and not eq:
                args[name] = args[name] + (value if isinstance(value, list) else [value])
            else:
                args[name] = value
            i += 1
            continue
        remaining = [s for s in slots if s not in args]
        takes_rest = (len(remaining) == 1 and remaining[0] == tool.main_arg
                      and not _one_word(remaining[0]))
        if word.startswith("--") and len(word) > 2:
            raise MagicUsageError(f"unknown option {spelled} (accepted: {_accepted(tool)}).")
        # a bare word: fill the next positional slot
        if not remaining:
            raise MagicUsageError(f"unexpected argument {word!r}: every positional argument "
                                  "is already given.")
        slot = remaining[0]
        if takes_rest:
            j = i
            while j < len(toks) and toks[j].value.partition("=")[0] not in options:
                j += 1
            span = toks[i:j]
            text = line[span[0].start : span[-1].end]
            args[slot] = span[0].value if len(span) == 1 else text
            i = j
            continue
        args[slot] = _convert(tool, slot, word)
        i += 1
    return args


# Error codes of a tool that could not parse its main argument (edit's hashline patch, ws_patch's
# diff): given on one magic line, such text lost the line breaks it needs.
_PARSE_ERRORS = ("parse", "unparsable")


def one_line_text_hint(tool: Tool, args: dict[str, Any], details: dict[str, Any]) -> str | None:
    """For a one-line ``%kli TOOL TEXT`` whose TEXT the tool could not parse: point to the cell
    form, where the text keeps its lines (``%kli edit @@ a.py`` has no ops: they go below)."""
    text = args.get(tool.main_arg or "")
    if details.get("error") not in _PARSE_ERRORS or not isinstance(text, str) or "\n" in text:
        return None
    return (f"The text after %kli {tool.name} was given on one line ({text[:60]!r}), and it "
            f"needs its line breaks. Write it in a cell instead: %%kli {tool.name} on the first "
            "line, the text on the lines below.")


def completions(line: str, aliases: tuple[str, ...] | list[str] = ()) -> tuple[str, list[str]]:
    """What Tab offers on a ``%kli`` / ``%%kli`` / alias line up to the cursor: ``(fragment,
    candidates)`` — the subcommands and tool names after ``%kli``, tool names after ``help``,
    the tool's options (``--start``…) or an enum's values after that; ``("", [])`` off such a
    line. ``aliases`` are the tool names registered as ``%TOOL`` magics."""
    from kli.tools.registry import REGISTRY

    stripped = line.lstrip()
    words = stripped.split(" ")
    fragment = words[-1]
    head = words[0].lstrip("%")
    if not stripped.startswith("%") or len(words) < 2:
        return "", []
    if head == "kli":
        tool_words = words[1:]
    elif head in aliases and head in REGISTRY.tools:
        tool_words = [head, *words[1:]]
    else:
        return "", []
    if len(tool_words) == 1:
        names = [*SUBCOMMANDS, *REGISTRY.tools]
    elif tool_words[0] == "help" and len(tool_words) == 2:
        names = list(REGISTRY.tools)
    elif tool_words[0] == "tools":
        names = ["--profile"] if fragment.startswith("-") else list(TOOLS_PROFILES)
        if len(tool_words) > 2 and tool_words[-2] == "--profile":
            names = list(TOOLS_PROFILES)
    elif tool_words[0] in REGISTRY.tools:
        tool = REGISTRY.tools[tool_words[0]]
        if not fragment.startswith("-"):
            previous = tool_words[-2] if len(tool_words) > 2 else ""
            name = _option_names(tool).get(previous)
            names = [str(v) for v in _props(tool).get(name or "", {}).get("enum", [])]
        else:
            used = set(tool_words[1:-1])
            try:  # arguments the line already gives (options or bare words) are not offered
                given = set(parse_magic_args(tool, " ".join(tool_words[1:-1])))
            except MagicUsageError:
                given = set()
            names = ["--" + p.replace("_", "-") for p in _props(tool) if p not in given]
            names += [f"--no-{n[2:]}" for n in names
                      if _props(tool)[_option_names(tool)[n]].get("type") == "boolean"]
            names = [n for n in names if n not in used]
    else:
        return fragment, []
    return fragment, [n for n in names if n.startswith(fragment)]


def make_matcher(shell: Any) -> Callable[[Any], dict[str, Any]]:
    """An IPython completion matcher (API v2) for the magics of ``shell``: on a ``%kli`` line
    it offers only its own candidates, so Python names do not crowd out the tool's options.
    The kernel's ``complete_request`` reaches it through IPython's completer."""
    from IPython.core.completer import SimpleCompletion, context_matcher

    @context_matcher()
    def kli_matcher(context: Any) -> dict[str, Any]:
        fragment, names = completions(context.text_until_cursor,
                                      getattr(shell, "_kli_aliases", ()))
        if not names:
            return {"completions": []}
        return {"completions": [SimpleCompletion(n, type="magic") for n in names],
                "suppress": True, "matched_fragment": fragment}

    kli_matcher.kli = True
    return kli_matcher


AGENT_USAGE = (
    "Usage: %kli agent [--model ID] [--profile kli|slmcode|all] [--steps N] [--wait SECONDS] "
    "TASK…  (or %%kli agent [OPTIONS] with the task as the cell). The model is a litellm id "
    "(openai/gpt-4.1-mini, ollama/qwen2.5-coder…), kli/demo (the keyless demo model) or "
    "replay:FILE (a recorded model), by default the first model set up (KLI_AGENT_MODEL, or a "
    "provider's key: docs/agent.md)."
)
_AGENT_OPTIONS = {"--model": str, "--profile": str, "--steps": int, "--wait": float}


def parse_agent_args(line: str, cell: str | None = None) -> tuple[dict[str, Any], str]:
    """``%kli agent``'s options (model, profile, steps, wait) and its task: the rest of the
    line after the leading options, verbatim, or the cell's body. MagicUsageError saying what
    is wrong."""
    options: dict[str, Any] = {}
    rest = line.strip()
    while rest.startswith("--"):
        flag, _, rest = rest.partition(" ")
        name, eq, value = flag.partition("=")
        if name not in _AGENT_OPTIONS:
            raise MagicUsageError(f"unknown option {name}")
        if not eq:
            value, _, rest = rest.strip().partition(" ")
        if not value:
            raise MagicUsageError(f"{name} needs a value")
        try:
            options[name[2:]] = _AGENT_OPTIONS[name](value)
        except ValueError:
            raise MagicUsageError(f"{name} takes a number (got {value!r})") from None
        rest = rest.strip()
    if options.get("profile", "kli") not in PROFILE_CHOICES:
        raise MagicUsageError(f"--profile is one of {', '.join(PROFILE_CHOICES)}")
    if int(options.get("steps", 1)) < 1:
        raise MagicUsageError("--steps is at least 1")
    if "wait" in options:
        from kli.tools.agent import check_review_wait

        try:
            options["wait"] = check_review_wait(options["wait"])
        except ValueError as exc:
            raise MagicUsageError(f"--wait: {exc}") from None
    task = (cell if cell is not None else rest).strip()
    if cell is not None and rest:
        raise MagicUsageError(f"with %%kli agent the task is the cell; unexpected {rest!r}")
    if not task:
        raise MagicUsageError("no task given")
    return options, task


@magics_class
class KliMagics(Magics):
    """The ``%kli`` family; ``hub`` holds the Workspace and the magic session."""

    def __init__(self, shell: Any, hub: Hub) -> None:
        super().__init__(shell)
        self.hub = hub

    @no_var_expand
    @line_cell_magic
    def kli(self, line: str, cell: str | None = None) -> None:
        """%kli tools | caps | help TOOL | TOOL args… ; %%kli TOOL args… (body = main arg)."""
        head, _, rest = line.strip().partition(" ")
        rest = rest.strip()
        if not head:
            self._print(self._overview())
        elif head == "tools" and cell is None:
            try:
                profile = parse_tools_args(rest)
            except MagicUsageError as exc:
                self._print(f"%kli tools: {exc}\nUsage: %kli tools [--profile kli|slmcode|all]",
                            error=True)
                return
            self._print(self._tools(profile))
        elif head == "caps" and cell is None:
            if rest:
                self._print(f"%kli caps: takes no arguments (got {rest!r}).", error=True)
                return
            self._print(self._caps())
        elif head in ("approval", "pending", "accept", "reject") and cell is None:
            self._review(head, rest)
        elif head in ("sandbox", "status") and cell is None:
            self._box(head, rest)
        elif head == "agent":
            self._agent(rest, cell)
        elif head == "help" and cell is None:
            if not rest:
                self._print(self._overview())
            elif self._tool(rest) is None:
                self._print(unknown_tool(rest, "%kli help"), error=True)
            else:
                self._print(self._help(rest))
        else:
            self.run_tool(head, rest, cell)

    # -- helpers -----------------------------------------------------------------------------
    @staticmethod
    def _print(text: str, *, error: bool = False) -> None:
        import sys

        stream = sys.stderr if error else sys.stdout
        stream.write(text if text.endswith("\n") else text + "\n")
        stream.flush()

    def _tool(self, name: str) -> Tool | None:
        from kli.tools.registry import REGISTRY

        return REGISTRY.tools.get(name)

    def run_tool(self, name: str, line: str, cell: str | None) -> None:
        from kli.kernel.display import show_result

        tool = self._tool(name)
        if tool is None:
            self._print(unknown_tool(name), error=True)
            return
        try:
            args = parse_magic_args(tool, line, cell)
        except MagicUsageError as exc:
            self._print(f"%kli {tool.name}: {exc}\n{magic_usage(tool)}", error=True)
            return
        session = self.hub.magic_session
        result = self.hub.ws.call(tool.name, args, session, source="magic")
        if not result.ok:
            from kli.tools.core.result import ToolResult

            if result.details.get("error") == "bad_arguments":
                result = ToolResult(False, f"{result.text}\n{magic_usage(tool)}", result.details)
            elif cell is None and (hint := one_line_text_hint(tool, args, result.details)):
                result = ToolResult(False, f"{result.text}\n{hint}", result.details)
        from kli.tools.core import imports

        with imports.guarded(self.hub.ws.root):  # showing it imports lazily (ipywidgets) too
            show_result(self.hub, tool.name, spoken_to_person(result), session.id)

    def _review(self, head: str, rest: str) -> None:
        """The review magics (docs/review.md): typed by the person, so never held."""
        from kli.tools.core import approval

        ws = self.hub.ws
        words = rest.split()
        if approval.by_agent() and (head in ("accept", "reject") or (head == "approval" and words)):
            self._print(
                f"%kli {head} was run by an agent's call (a cell of its run_cells, its eval), not "
                "typed by a person: only a person decides held calls and switches approval "
                "mode. Nothing was changed.", error=True)
            return
        if head == "approval":
            usage = "Usage: %kli approval [review|auto [file|shell|eval]] [--keep|--no-keep]"
            keeps = [w for w in words if w in ("--keep", "--no-keep")]
            words = [w for w in words if w not in keeps]
            if words or keeps:
                if len(words) > 2 or len(keeps) > 1:
                    self._print(usage, error=True)
                    return
                try:
                    approval.set_mode(ws, words[0] if words else None,
                                      words[1] if len(words) > 1 else None,
                                      keeps[0] == "--keep" if keeps else None)
                except approval.KeepError as exc:
                    self._print(f"%kli approval: {exc}", error=True)
                except ValueError as exc:
                    self._print(f"%kli approval: {exc}.\n{usage}", error=True)
                    return
            current, problem = approval.modes(ws.settings)
            if problem is not None:
                self._print(problem, error=True)
                return
            self._print("approval: " + ", ".join(f"{k} {v}" for k, v in current.items())
                        + f" ({approval.origin(ws).words(ws.root)}). Agent calls of a kind "
                        "under review wait for Accept / Reject; --keep keeps the choice in a "
                        "settings file, --no-keep for this kernel only.")
            return
        if head == "pending":
            rows = [f"{p.id}  {p.session_label or p.session_id:<12}  {p.kind:<6}  "
                    f"{p.path or approval.command_of(p.plan) if p.kind == approval.KIND else p.path}"
                    + (f"  ({p.expired})" if p.expired else "")
                    for p in ws.pending_candidates()]
            self._print("\n".join(rows) if rows else "nothing is pending.")
            return
        usage = f"Usage: %kli {head} ID|--all|--session SID|--path PATH" + (
            " [NOTE…]" if head == "reject" else "")
        if not words:
            self._print(usage, error=True)
            return
        scope: dict[str, str | None] = {}
        first, tail = words[0], words[1:]
        if first in ("--session", "--path"):
            if not tail:
                self._print(usage, error=True)
                return
            scope[first[2:]] = tail[0]
            tail = tail[1:]
        note = " ".join(tail)
        if tail and head == "accept":
            self._print(usage, error=True)
            return
        if first.startswith("--") and first not in ("--all", "--session", "--path"):
            self._print(f"%kli {head}: unknown option {first}.\n{usage}", error=True)
            return
        if first.startswith("--"):
            result = approval.bulk(ws, head, "magic", session=scope.get("session"),
                                   path=scope.get("path"), note=note)
        elif head == "accept":
            result = approval.accept_any(ws, first, "magic")
        else:
            result = approval.reject(ws, first, "magic", note)
        self._print(result.text, error=not result.ok)

    def _box(self, head: str, rest: str) -> None:
        """``%kli sandbox`` switches the box (docs/sandbox.md), kept per project as approval is;
        ``%kli status`` shows review and the box, with what the box stops and does not."""
        from kli.tools.core import approval, sandbox

        ws = self.hub.ws
        words = rest.split()
        usage = "Usage: %kli sandbox [on|off] [--network off|all] [--no-keep]"
        if head == "status" and words:
            self._print(f"%kli status: takes no arguments (got {rest!r}).", error=True)
            return
        if head == "sandbox" and words:
            if approval.by_agent():
                self._print("%kli sandbox was run by an agent's call, not typed by a person: "
                            "only a person switches the box. Nothing was changed.", error=True)
                return
            keep = "--no-keep" not in words
            words = [w for w in words if w != "--no-keep"]
            network = None
            if "--network" in words:
                at = words.index("--network")
                if at + 1 >= len(words):
                    self._print(usage, error=True)
                    return
                network = words[at + 1]
                del words[at:at + 2]
            if len(words) > 1 or (words and words[0] not in sandbox.MODES):
                self._print(usage, error=True)
                return
            try:
                sandbox.set_choice(ws, words[0] if words else None, network, keep)
            except approval.KeepError as exc:
                self._print(f"%kli sandbox: {exc}", error=True)
            except ValueError as exc:
                self._print(f"%kli sandbox: {exc}.\n{usage}", error=True)
                return
        box = sandbox.describe(ws)
        lines = []
        if head == "status":
            current, problem = approval.modes(ws.settings)
            lines.append("approval: " + (problem or ", ".join(
                f"{k} {v}" for k, v in current.items())
                + f" ({approval.origin(ws).words(ws.root)})"))
        word = "NOT made" if box["state"] in ("failed", "unavailable") else box["state"]
        lines.append(f"box: {box['said']}" if word != "NOT made" else f"box: NOT made — "
                     f"{box['said']}")
        if box.get("problem"):
            lines.append(box["problem"])
        if box["state"] in ("kernel", "commands"):
            lines.append("  it stops: " + "; ".join(box["stops"]))
        lines.append("  it does not stop: " + "; ".join(box["does_not_stop"]))
        self._print("\n".join(lines), error=box["state"] in ("failed", "unavailable"))

    def _agent(self, rest: str, cell: str | None) -> None:
        """``%kli agent [OPTIONS] TASK`` / ``%%kli agent [OPTIONS]`` (the body is the task): the
        agent loop on this kernel's Workspace, its steps shown in the cell (docs/agent.md)."""
        from kli.kernel.agentcell import run_in_cell
        from kli.tools.agent import DEFAULT_MAX_TURNS, DEFAULT_REVIEW_WAIT
        from kli.tools.core import approval

        if approval.by_agent():
            self._print("%kli agent was run by an agent's call, not typed by a person; an agent "
                        "does not start another agent here. Nothing was run.", error=True)
            return
        try:
            options, task = parse_agent_args(rest, cell)
        except MagicUsageError as exc:
            self._print(f"%kli agent: {exc}\n{AGENT_USAGE}", error=True)
            return
        try:
            from kli.tools.agentmodels import agent_model

            model = agent_model(options.get("model"))
        except (ImportError, ValueError) as exc:
            self._print(f"%kli agent: {exc}", error=True)
            return
        run = run_in_cell(
            self.hub, self.shell, task, model=model,
            profile=str(options.get("profile", "kli")),
            max_turns=int(options.get("steps", DEFAULT_MAX_TURNS)),
            review_wait=float(options.get("wait", DEFAULT_REVIEW_WAIT)))
        if run is not None and run.answer is None:
            self._print(f"The agent gave no answer ({run.stopped}).", error=True)

    def _overview(self) -> str:
        return (
            "%kli tools            list the tools (--profile kli|slmcode|all)\n"
            "%kli caps             granted capabilities\n"
            "%kli approval [MODE [KIND]] [--keep|--no-keep]  show or switch approval mode "
            "(review|auto), kept in a settings file or for this kernel only\n"
            "%kli pending          pending proposals and repair previews\n"
            "%kli sandbox [on|off] [--network off|all]  show or switch the box (docs/sandbox.md)\n"
            "%kli status           review and the box: what each lets through\n"
            "%kli accept|reject ID accept or reject one (or --all, --session S, --path P)\n"
            "%kli agent TASK       run an agent on this kernel (--model, --profile, --steps)\n"
            "%kli help TOOL        a tool's description and usage\n"
            "%kli TOOL args…       call a tool (options from its schema)\n"
            "%%kli TOOL args…      call a tool; the cell body is its main argument"
        )

    def _tools(self, profile: str | None = None) -> str:
        from kli.tools.registry import profile_tools

        aliases = set(getattr(self.shell, "_kli_aliases", ()))
        chosen = profile_tools(profile)
        width = max((len(t.name) for t in chosen), default=4)
        rows = []
        for tool in chosen:
            first = tool.description.strip().split("\n")[0]
            first = first.split(". ")[0].rstrip(".")
            alias = " (%" + tool.name + ")" if tool.name in aliases else ""
            rows.append(f"{tool.name:<{width}}  {tool.profile:<7}  {tool.gate or '-':<12}  "
                        f"{first}{alias}")
        if not rows:
            return f"no tools in profile {profile!r}." if profile else "no tools are registered."
        return "\n".join(rows)

    def _caps(self) -> str:
        from kli.tools.core.registry import GATES
        from kli.tools.core.settings import project_capabilities, user_settings_path

        ws = self.hub.ws
        problem = ws.settings_error()
        caps = ws.settings.get("capabilities")
        source = "every gate granted (no 'capabilities' setting)" if caps is None else \
            f"capabilities = {json.dumps(caps)}"
        lines = [f"{gate:<14} {'granted' if ws.granted(gate) else 'DENIED'}" for gate in GATES]
        lines.append(source)
        files = project_capabilities(ws.root)
        if not files:
            lines.append("project settings: (none)")
        else:
            lines.append("project settings, nearest first (capabilities: the intersection of "
                         "those that set it):")
            for path, file_caps, file_problem in files:
                said = f"error: {file_problem}" if file_problem else "no 'capabilities'" \
                    if file_caps is None else f"capabilities = {json.dumps(file_caps)}"
                lines.append(f"  {path}  {said}")
        user = user_settings_path()
        lines.append(f"user settings:    {user}" if os.path.isfile(user) else
                     f"user settings:    (none; {user} would be read if it existed)")
        if problem:
            lines.append(f"SETTINGS ERROR (every call fails until fixed): {problem}")
        return "\n".join(lines)

    def _help(self, name: str) -> str:
        tool = self._tool(name)
        if tool is None:
            return f"%kli help: unknown tool {name!r}; see %kli tools."
        lines = [f"{tool.name} ({tool.profile}; capability {tool.gate or 'none'})", "",
                 tool.description.strip(), "", magic_usage(tool), "", "Arguments:"]
        required = set(tool.parameters.get("required", []))
        for pname, prop in _props(tool).items():
            bits = [prop.get("type", "any")]
            if pname in required:
                bits.append("required")
            if "enum" in prop:
                bits.append("one of " + ", ".join(str(v) for v in prop["enum"]))
            if "default" in prop:
                bits.append(f"default {prop['default']!r}")
            if pname == tool.main_arg:
                bits.append("%%kli cell body")
            lines.append(f"  --{pname.replace('_', '-')} ({'; '.join(bits)})"
                         + (f": {prop['description']}" if prop.get("description") else ""))
        return "\n".join(lines)


def register_magics(shell: Any, hub: Hub) -> KliMagics:
    """Register ``%kli`` (cheap: the registry is not imported until a tool is used)."""
    magics = KliMagics(shell, hub)
    shell.register_magics(magics)
    completer = getattr(shell, "Completer", None)
    if completer is not None:
        completer.custom_matchers[:] = [m for m in completer.custom_matchers
                                        if not getattr(m, "kli", False)]
        completer.custom_matchers.append(make_matcher(shell))
    return magics


def register_aliases(shell: Any, magics: KliMagics) -> list[str]:
    """One ``%TOOL`` / ``%%TOOL`` alias per tool whose name no existing magic uses (``%edit``
    and ``%%bash`` are IPython's, so they stay IPython's). Returns the aliases registered (also
    kept on ``shell._kli_aliases``)."""
    from kli.tools.registry import REGISTRY

    taken = set(shell.magics_manager.magics["line"]) | set(shell.magics_manager.magics["cell"])
    aliases = []
    for name in REGISTRY.tools:
        if name in taken or not name.isidentifier():
            continue

        def alias(line: str, cell: str | None = None, _name: str = name) -> None:
            magics.run_tool(_name, line, cell)

        alias = no_var_expand(alias)
        alias.__doc__ = f"Alias of %kli {name} (see %kli help {name})."
        shell.register_magic_function(alias, magic_kind="line_cell", magic_name=name)
        aliases.append(name)
    shell._kli_aliases = aliases
    return aliases
