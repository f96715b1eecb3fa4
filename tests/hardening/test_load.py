"""Four agents on one kernel, calling tools as fast as they can (bench/bench_load.py): no reply
lost or mismatched, every stale edit refused, the kernel's memory flat after a warm-up.

CI runs 12 s; ``KLI_HARDENING_LONG=1`` runs the 60 s of the benchmark."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from .conftest import LONG

pytestmark = pytest.mark.kernel

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_load.py"
DURATION = 60.0 if LONG else 12.0


@pytest.mark.timeout(600)
def test_four_agents_racing_on_one_kernel_lose_nothing_and_apply_no_stale_edit() -> None:
    spec = importlib.util.spec_from_file_location("bench_load", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    result = bench.run(duration=DURATION, agents=4)
    failed = [name for name, ok in result["checks"].items() if not ok]
    assert failed == [], (failed, {k: v for k, v in result.items() if k != "per_op"})
    assert result["calls"] > 100
    assert result["edits_applied"] > 0
