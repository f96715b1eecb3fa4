"""ws_skill — list skill cards, or pull one skill's full body on demand (see skills.py)."""

from __future__ import annotations

from kli.tools.core import suggest
from kli.tools.core.registry import Call, Tool
from kli.tools.core.result import ToolResult
from kli.tools.ws.skills import cards, find_skill, load_skills

DESCRIPTION = """Skills are short how-to guides for recurring tasks. Without a name, lists the
available skills as cards (name — description); with a name, returns that skill's full text:
  ws_skill {}                          list the skills
  ws_skill {"name": "atomic-coding"}   read one skill in full
Read a skill's body before doing the task it describes. An unknown name returns the list of
available skills."""

_NONE = (
    "No skills are installed. Skills are Markdown files with `name:` / `description:` front "
    "matter in .kli/skills/ (this project) or ~/.config/kli/skills/ (your user folder)."
)


def _run(call: Call) -> ToolResult:
    skills = load_skills(call.ws.root)
    name = (call.args.get("name") or "").strip()
    if not name:
        if not skills:
            return ToolResult.success(_NONE, skills=[])
        text = (
            f"{len(skills)} skill(s) available — pull one in full with "
            '{"name": "<name>"}:\n' + cards(skills)
        )
        return ToolResult.success(text, skills=[s.name for s in skills])
    skill = find_skill(skills, name)
    if skill is None:
        if not skills:
            return ToolResult.error(f"no skill named {name!r}. {_NONE}", error="unknown_skill")
        close = suggest.close_names(name.lower(), [s.name.lower() for s in skills], n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        return ToolResult.error(
            f"no skill named {name!r}.{hint} Available skills:\n{cards(skills)}",
            error="unknown_skill",
            skills=[s.name for s in skills],
        )
    call.session.telemetry["ws_skill." + skill.name] += 1
    header = f"# skill: {skill.name} ({skill.source})"
    if skill.description:
        header += f"\n{skill.description}"
    return ToolResult.success(
        f"{header}\n\n{skill.body.rstrip()}", name=skill.name, path=skill.path
    )


TOOL = Tool(
    name="ws_skill",
    profile="slmcode",
    gate=None,
    description=DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Skill name; omit to list the skills."},
        },
        "additionalProperties": False,
    },
    run=_run,
    main_arg="name",
    aliases={"skill": "name"},
    touches_image=False,
)
