"""Hardening suite: bad input, faults and load (issue 8; docs/reliability.md).

The hypothesis profiles (``ci``, derandomized; ``long``, random, with ``KLI_FUZZ_EXAMPLES``)
are set for every test in tests/conftest.py. Long runs of the load and abuse tests are enabled
with ``KLI_HARDENING_LONG=1``; CI runs their bounded versions.
"""

from __future__ import annotations

import os

from hypothesis import settings

LONG_EXAMPLES = int(os.environ.get("KLI_FUZZ_EXAMPLES", "0") or 0)
LONG = os.environ.get("KLI_HARDENING_LONG", "") not in ("", "0")


def examples(scale: float = 1.0) -> int:
    """max_examples for one test: the profile's count times ``scale`` (expensive tests run fewer
    cases in CI; the long run gives every test the full count)."""
    if LONG_EXAMPLES:
        return LONG_EXAMPLES
    return max(5, int(settings().max_examples * scale))


# -- real kernels -------------------------------------------------------------------------------
# The kernel tests' harness (tests/kernel/conftest.py) is reused: loaded by path, since the test
# folders are not packages.
import importlib.util as _ilu  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

_spec = _ilu.spec_from_file_location(
    "kli_kernel_test_harness", _Path(__file__).resolve().parents[1] / "kernel" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
kernel_harness = _ilu.module_from_spec(_spec)
_spec.loader.exec_module(kernel_harness)
from tests.kernelspec import kli_kernelspec  # noqa: E402, F401  (session, autouse: installed)
