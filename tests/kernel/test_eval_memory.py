"""A runaway eval in a real kli kernel is stopped by the memory guard, and the kernel — the
live image — keeps running. The kernel's allowance is set small with KLI_EVAL_MEMORY_MB."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kli import client
from kli.tools.process import memguard

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.skipif(memguard.rss_bytes() is None, reason="needs /proc (Linux)"),
]


def test_a_runaway_eval_gets_memory_error_and_the_kernel_lives_on(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg"), memguard.ENV: "200"}
    with client.start(cwd=str(tmp_path), label="memory", timeout=60, env=env) as kernel:
        hog = kernel.call(
            "eval", {"code": "x = []\nwhile True:\n    x.append(' ' * 1_000_000)", "timeout": 60}
        )
        assert not hog.ok and hog.details["error"] == "memory", hog.text
        assert "by more than 200 MB (KLI_EVAL_MEMORY_MB=200)" in hog.text
        assert hog.details["memory_allowance"] == 200 * memguard.MB
        alive = kernel.call("eval", {"code": "len(x) > 100, 6 * 7"})
        assert alive.ok and "(True, 42)" in alive.text
        assert kernel.call("eval", {"code": "del x"}).ok
