"""The README a newcomer reads: its first commands, its links, and its agent example all work."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
COMMANDS = [
    "bash scripts/run     # set up and start JupyterLab with the kli kernel, Jupyter AI's chat with"
    " the kli agent, and the tour (headless: prints the URL)",
    "bash scripts/test    # set up and run every check: linters, extension build and tests, pytest"
    " on the installed wheel",
]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _blocks(text: str) -> list[tuple[str, str]]:
    return re.findall(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)


def test_readme_opens_with_what_it_is_then_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    title, rest = text.split("\n", 1)
    assert title == "# kli-kernel"
    intro = rest.split("```", 1)[0].strip()
    assert intro and "\n\n" not in intro and "#" not in intro  # one paragraph, no heading between
    assert len(re.findall(r"[.!?](?:\s|$)", intro)) == 2  # two sentences
    assert _blocks(text)[0][1].splitlines() == COMMANDS
    for script in ("scripts/run", "scripts/test"):
        assert (ROOT / script).is_file()


def test_relative_links_in_readme_and_docs_resolve() -> None:
    broken = []
    for page in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#", 1)[0]).resolve()
            if not path.exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []


@pytest.mark.kernel
def test_readme_agent_example_runs_as_written(tmp_path: Path) -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("## An agent in five lines", 1)[1].split("\n## ", 1)[0]
    code = next(body for lang, body in _blocks(section) if lang == "python")
    assert len(code.strip().splitlines()) == 5
    (tmp_path / "myproject").mkdir()
    app = tmp_path / "myproject" / "app.py"
    app.write_text("def answer():\n    return 41\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "1:bd|def answer():\n2:c2|    return 41" in out.stdout
    assert "True Edited app.py (+1 -1)" in out.stdout and out.stdout.rstrip().endswith("written")
    assert app.read_text() == "def answer():\n    return 42\n"
