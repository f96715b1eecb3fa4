"""docs/tools.md and the README's tools table are generated from the registry; stale is a failure.

Fix a failure with ``python scripts/gen_docs.py`` and commit the result.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from kli.tools.registry import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
GEN = ROOT / "scripts" / "gen_docs.py"


def _check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(root / "scripts" / "gen_docs.py"), "--check"],
                          capture_output=True, text=True, timeout=60, cwd=root)


def _copy_tree(tmp: Path) -> Path:
    for rel in ("scripts/gen_docs.py", "README.md", "docs/tools.md"):
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp / rel)
    return tmp


def test_tools_md_and_readme_table_match_the_registry() -> None:
    out = _check(ROOT)
    assert out.returncode == 0, out.stderr


def test_every_registered_tool_is_documented_with_its_gate_and_parameters() -> None:
    tools_md = (ROOT / "docs" / "tools.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("<!-- tools:start -->", 1)[1].split("<!-- tools:end -->", 1)[0]
    for name, tool in REGISTRY.tools.items():
        assert f"\n### {name}\n" in tools_md
        section = tools_md.split(f"\n### {name}\n", 1)[1].split("\n### ", 1)[0]
        if tool.gate:
            assert f"gate `{tool.gate}`" in section
        for param in tool.parameters.get("properties", {}):
            assert f"| `{param}` |" in section, (name, param)
        assert f"[`{name}`](docs/tools.md#{name})" in table


def test_check_mode_fails_and_names_the_file_when_the_readme_table_is_edited(tmp_path: Path) -> None:
    root = _copy_tree(tmp_path)
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    readme.write_text(text.replace("<!-- tools:end -->", "| `ghost` | kli | — | not a tool |\n"
                                   "<!-- tools:end -->"), encoding="utf-8")
    out = _check(root)
    assert out.returncode == 1
    assert "README.md" in out.stderr and "gen_docs.py" in out.stderr


def test_check_mode_fails_when_tools_md_is_missing_then_generation_fixes_it(tmp_path: Path) -> None:
    root = _copy_tree(tmp_path)
    (root / "docs" / "tools.md").unlink()
    out = _check(root)
    assert out.returncode == 1 and "docs/tools.md" in out.stderr
    subprocess.run([sys.executable, str(root / "scripts" / "gen_docs.py")], check=True,
                   capture_output=True, timeout=60)
    assert _check(root).returncode == 0
    assert (root / "docs" / "tools.md").read_text() == (ROOT / "docs" / "tools.md").read_text()
