"""ws_skill and skills.py: project and user skill folders, cards first, body on demand."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.ws.skills import parse_skill


@pytest.fixture
def user_skills() -> Path:
    p = Path(os.environ["XDG_CONFIG_HOME"]) / "kli" / "skills"
    p.mkdir(parents=True)
    return p


@pytest.fixture
def project_skills(root: Path) -> Path:
    p = root / ".kli" / "skills"
    p.mkdir(parents=True)
    return p


def test_cards_list_project_and_user_skills(ws: Workspace, project_skills: Path, user_skills: Path) -> None:
    (project_skills / "atomic-coding.md").write_text(
        "---\nname: atomic-coding\ndescription: One small verified change at a time.\n---\n"
        "# Atomic coding\n\n1. Read first.\n2. Edit one thing.\n"
    )
    (user_skills / "go-tests").mkdir()
    (user_skills / "go-tests" / "SKILL.md").write_text(
        '---\ndescription: "Table-driven Go tests."\n---\nUse t.Run.\n'
    )
    r = ws.call("ws_skill", {})
    assert r.ok
    assert r.text.splitlines()[1:] == [
        "- atomic-coding — One small verified change at a time.",
        "- go-tests — Table-driven Go tests.",
    ]
    assert "Atomic coding" not in r.text  # bodies are not shown as cards


def test_name_returns_the_full_body(ws: Workspace, project_skills: Path) -> None:
    (project_skills / "atomic-coding.md").write_text(
        "---\nname: atomic-coding\ndescription: d\n---\n# Atomic coding\n\n1. Read first.\n"
    )
    r = ws.call("ws_skill", {"name": "Atomic-Coding"})
    assert r.ok
    assert r.text == "# skill: atomic-coding (project)\nd\n\n# Atomic coding\n\n1. Read first."


def test_unknown_name_lists_available_skills(ws: Workspace, project_skills: Path) -> None:
    (project_skills / "atomic-coding.md").write_text("---\nname: atomic-coding\ndescription: d\n---\nb\n")
    r = ws.call("ws_skill", {"name": "atomic"})
    assert not r.ok and r.details["error"] == "unknown_skill"
    assert "no skill named 'atomic'." in r.text
    assert "Available skills:\n- atomic-coding — d" in r.text


def test_project_skill_shadows_user_skill(ws: Workspace, project_skills: Path, user_skills: Path) -> None:
    (project_skills / "x.md").write_text("---\nname: x\ndescription: project one\n---\nP\n")
    (user_skills / "x.md").write_text("---\nname: x\ndescription: user one\n---\nU\n")
    r = ws.call("ws_skill", {"name": "x"})
    assert r.text.endswith("P") and "(project)" in r.text


def test_no_skills_installed_says_where_they_go(ws: Workspace) -> None:
    r = ws.call("ws_skill", {})
    assert r.ok and ".kli/skills/" in r.text and "No skills are installed" in r.text
    r = ws.call("ws_skill", {"name": "x"})
    assert not r.ok and "No skills are installed" in r.text


def test_front_matter_is_optional() -> None:
    assert parse_skill("# Title\n\nDo the thing.\n", "stem") == ("stem", "Do the thing.", "# Title\n\nDo the thing.\n")
    name, desc, body = parse_skill("---\nname: 'q'\n---\nbody\n", "stem")
    assert (name, desc, body) == ("q", "body", "body")
