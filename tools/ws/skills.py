"""Skills: Markdown files with a name and a description, disclosed progressively.

A skill is ``<name>.md`` or ``<name>/SKILL.md`` in one of the skill folders, searched in order
(the first definition of a name wins):

1. ``<root>/.kli/skills/`` — the project's skills;
2. ``$XDG_CONFIG_HOME/kli/skills/`` (``~/.config/kli/skills/``) — the user's skills.

The file may start with YAML-style front matter::

    ---
    name: atomic-coding
    description: Make one small, verified change at a time.
    ---
    (body)

Without front matter (or without ``name:``) the name is the file's stem (the folder's name
for ``SKILL.md``) and the description the first non-heading line of the body. Hosts render
``cards()`` (name + description) into a prompt; ``ws_skill`` pulls a full body on demand.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from kli.tools.core.settings import CONTROL_DIR
from kli.tools.core.textfile import read_bytes

SKILLS_DIR = "skills"
SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 256 * 1024
DESCRIPTION_CHARS = 200


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str
    path: str  # absolute
    source: str  # "project" or "user"

    def card(self) -> str:
        return f"- {self.name} — {self.description}" if self.description else f"- {self.name}"


def skill_dirs(root: str) -> list[tuple[str, str]]:
    """``(folder, source)`` pairs, project first."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return [
        (os.path.join(root, CONTROL_DIR, SKILLS_DIR), "project"),
        (os.path.join(base, "kli", SKILLS_DIR), "user"),
    ]


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def parse_skill(text: str, default_name: str) -> tuple[str, str, str]:
    """``(name, description, body)`` of one skill file's text."""
    meta: dict[str, str] = {}
    body = text
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                for raw in lines[1:i]:
                    key, sep, value = raw.partition(":")
                    if sep and not raw.startswith((" ", "\t")):
                        meta[key.strip().lower()] = _unquote(value)
                body = "\n".join(lines[i + 1 :]).lstrip("\n")
                break
    name = meta.get("name") or default_name
    description = meta.get("description", "")
    if not description:
        for line in body.splitlines():
            stripped = line.strip()
            if stripped and not stripped.startswith("#"):
                description = stripped
                break
    description = " ".join(description.split())
    if len(description) > DESCRIPTION_CHARS:
        description = description[: DESCRIPTION_CHARS - 1] + "…"
    return name.strip(), description, body


def _candidates(folder: str) -> list[tuple[str, str]]:
    """``(path, default name)`` of every skill file in ``folder``."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    found: list[tuple[str, str]] = []
    for e in entries:
        try:
            if e.is_file() and e.name.lower().endswith(".md"):
                found.append((e.path, e.name[:-3]))
            elif e.is_dir() and os.path.isfile(os.path.join(e.path, SKILL_FILE)):
                found.append((os.path.join(e.path, SKILL_FILE), e.name))
        except OSError:
            continue
    return found


def load_skills(root: str) -> list[Skill]:
    """Every skill visible from ``root``, project skills shadowing user skills by name
    (case-insensitive), sorted by name."""
    seen: dict[str, Skill] = {}
    for folder, source in skill_dirs(root):
        for path, default in _candidates(folder):
            try:
                text = read_bytes(path, limit=MAX_SKILL_BYTES).decode("utf-8", "replace")
            except OSError:  # too large, not a regular file, unreadable
                continue
            name, description, body = parse_skill(text, default)
            if name and name.lower() not in seen:
                seen[name.lower()] = Skill(name, description, body, path, source)
    return sorted(seen.values(), key=lambda s: s.name.lower())


def find_skill(skills: list[Skill], name: str) -> Skill | None:
    want = name.strip().lower()
    for s in skills:
        if s.name.lower() == want:
            return s
    return None


def cards(skills: list[Skill]) -> str:
    """The cards (name + description) of ``skills``, one per line."""
    return "\n".join(s.card() for s in skills)
