"""The atheris harnesses in fuzz/ run (a few hundred inputs each), so they do not rot. They
need atheris (``pip install -e '.[fuzz]'``); without it this test is skipped and says so."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"
HARNESSES = sorted(p.name for p in FUZZ.glob("fuzz_*.py"))


def test_every_harness_is_listed_in_the_readme() -> None:
    readme = (FUZZ / "README.md").read_text()
    assert HARNESSES and all(name in readme for name in HARNESSES)


@pytest.mark.parametrize("name", HARNESSES)
def test_harness_runs_clean_for_a_few_hundred_inputs(name: str, tmp_path: Path) -> None:
    pytest.importorskip("atheris", reason="atheris is not installed (pip install -e '.[fuzz]')")
    out = subprocess.run([sys.executable, str(FUZZ / name), "-runs=300", "-seed=8"],
                         capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Done 300 runs" in out.stderr
