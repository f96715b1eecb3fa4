"""ws_edit scenarios, one folder per row of the spec's ladder and refusal tables
(tests/fixtures/ws_edit/NNN_name)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .fixture_runner import cases, run_case


@pytest.mark.parametrize("case", cases("ws_edit"), ids=lambda p: p.name)
def test_ws_edit_fixture(case: Path, tmp_path: Path) -> None:
    run_case("ws_edit", case, tmp_path)
