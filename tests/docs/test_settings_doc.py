"""docs/settings.md names every setting the code reads, and every gate with its tools.

The scan looks for the ways the code reads settings — ``settings.get("NAME"…)``,
``settings["NAME"]``, ``setting(settings, "NAME")`` / ``call_setting(call, "NAME")`` — and the
slmcode defaults table; a new setting read anywhere in tools/ or kernel/ fails here until it is
documented.
"""

from __future__ import annotations

import re
from pathlib import Path

from kli.tools.core.registry import GATES
from kli.tools.registry import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "settings.md"
READS = re.compile(
    r"""(?:settings\.get\(\s*|settings\[\s*|\bsetting\(\s*[\w.]+\s*,\s*|call_setting\(\s*\w+\s*,\s*)"""
    r"""["'](\w+)["']"""
)


def settings_read_by_code() -> set[str]:
    names: set[str] = set()
    for folder in ("tools", "kernel"):
        for path in (ROOT / folder).rglob("*.py"):
            names.update(READS.findall(path.read_text(encoding="utf-8")))
    from kli.tools.ws import common

    names.update(common._DEFAULTS)
    return names


def test_the_scan_finds_the_settings_it_must() -> None:
    found = settings_read_by_code()
    assert {"capabilities", "max_tool_chars", "shell_policy"} <= found


def test_every_setting_the_code_reads_is_documented() -> None:
    doc = DOC.read_text(encoding="utf-8")
    missing = sorted(n for n in settings_read_by_code() if f"| `{n}` |" not in doc)
    assert missing == [], f"document these settings in docs/settings.md: {missing}"


def test_every_gate_lists_exactly_its_tools() -> None:
    doc = DOC.read_text(encoding="utf-8")
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `([\w/]+)` \| (.+) \|$", doc, re.M)}
    for gate in GATES:
        tools = sorted(n for n, t in REGISTRY.tools.items() if t.gate == gate)
        assert sorted(re.findall(r"`(\w+)`", rows[gate])) == tools, gate
    ungated = sorted(n for n, t in REGISTRY.tools.items() if t.gate is None)
    none_row = next(line for line in doc.splitlines() if line.startswith("| (none) |"))
    assert sorted(re.findall(r"`(\w+)`", none_row.split("—")[0])) == ungated
