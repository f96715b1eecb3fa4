"""ws_patch scenarios, one folder per accepted form and rule of the spec
(tests/fixtures/ws_patch/NNN_name)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .fixture_runner import cases, run_case


@pytest.mark.parametrize("case", cases("ws_patch"), ids=lambda p: p.name)
def test_ws_patch_fixture(case: Path, tmp_path: Path) -> None:
    run_case("ws_patch", case, tmp_path)
