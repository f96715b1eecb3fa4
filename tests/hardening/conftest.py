"""Hardening suite: bad input, faults and load (issue 8; docs/reliability.md).

Hypothesis profiles: ``ci`` (default: a bounded number of cases, no deadline, derandomized so
that a run of the suite is repeatable and a landing is not refused by a case no earlier run drew)
and ``long`` (on demand: ``KLI_FUZZ_EXAMPLES=100000`` or ``--hypothesis-profile long``; random,
to find new cases, each found one then kept as a named regression test). Long runs of the
load and abuse tests are enabled with ``KLI_HARDENING_LONG=1``; CI runs their bounded versions.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

CI_EXAMPLES = int(os.environ.get("KLI_FUZZ_CI_EXAMPLES", "60"))
LONG_EXAMPLES = int(os.environ.get("KLI_FUZZ_EXAMPLES", "0") or 0)
LONG = os.environ.get("KLI_HARDENING_LONG", "") not in ("", "0")

_common = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                              HealthCheck.data_too_large, HealthCheck.filter_too_much],
    "print_blob": True,
}
settings.register_profile("ci", max_examples=CI_EXAMPLES, derandomize=True, **_common)
settings.register_profile(
    "long", max_examples=LONG_EXAMPLES or 100_000, derandomize=False, **_common
)
settings.load_profile("long" if LONG_EXAMPLES else os.environ.get("HYPOTHESIS_PROFILE", "ci"))


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
kli_kernelspec = kernel_harness.kli_kernelspec  # the session fixture that installs the spec
