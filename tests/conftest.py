"""Shared fixtures: an isolated workspace root with no user settings leaking in.

Hypothesis profiles, for every property test: ``ci`` (default: a bounded number of cases, no
deadline, derandomized, so that a run of the suite is repeatable and a landing is not refused
by a case no earlier run drew; a test's own ``max_examples`` still applies) and ``long`` (on
demand: ``KLI_FUZZ_EXAMPLES=100000`` or ``HYPOTHESIS_PROFILE=long``; random, to find new cases,
each found one then kept as a named regression test).
"""

from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from kli.tools import Workspace

_FUZZ_LONG = int(os.environ.get("KLI_FUZZ_EXAMPLES", "0") or 0)
_common = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                              HealthCheck.data_too_large, HealthCheck.filter_too_much],
    "print_blob": True,
}
settings.register_profile("ci", max_examples=int(os.environ.get("KLI_FUZZ_CI_EXAMPLES", "60")),
                          derandomize=True, **_common)
settings.register_profile("long", max_examples=_FUZZ_LONG or 100_000, derandomize=False, **_common)
settings.load_profile("long" if _FUZZ_LONG else os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Each test process finds only the Jupyter servers and kernels it starts: a runtime folder of its
# own, which what it starts inherits. A person's running JupyterLab, or another worker's server,
# is not the suite's (kli mcp's review check asks every server there: kli.kernel.client.reach).
os.environ["JUPYTER_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="kli-test-runtime-")

# A run started in the background of a non-interactive shell (`bash .ci/run &`) inherits SIGINT
# ignored, and Python then installs no KeyboardInterrupt handler: the tests of interrupts would
# test nothing. The suite runs as from a person's terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _isolated_user_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test sees an empty $XDG_CONFIG_HOME so the user's kli settings never apply."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg")))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty workspace root."""
    r = tmp_path / "root"
    r.mkdir()
    return r


@pytest.fixture
def ws(root: Path) -> Workspace:
    return Workspace(str(root))


@pytest.fixture(scope="session")
def progress(pytestconfig: pytest.Config):  # type: ignore[no-untyped-def]
    """``progress(message)`` prints a line on the terminal at once, capture or not: long
    fixtures (an environment built from scratch) say what they are doing and for how long."""
    import time

    reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
    capture = pytestconfig.pluginmanager.get_plugin("capturemanager")
    started = time.monotonic()

    def say(message: str) -> None:
        if reporter is None:
            return
        line = f"  [{time.monotonic() - started:6.1f} s] {message}"
        if capture is None:
            reporter.write_line(line)
            return
        with capture.global_and_fixture_disabled():  # past pytest's capture, to the terminal
            reporter.ensure_newline()
            reporter.write_line(line)

    return say


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects them
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The files that hold a test marked ``serial`` are written to ``KLI_TEST_SERIAL_FILES``
    when it is set (scripts/test: its serial pass then collects those files only, not the whole
    suite again).

    Modules that hold a test marked ``slow`` (a fresh environment built, a source install)
    are collected first: on several workers (scripts/test) they then start at once and run while
    the short ones fill the other workers, instead of starting last and running alone at the
    end. The order inside each module, and of the other modules, is kept."""
    listing = os.environ.get("KLI_TEST_SERIAL_FILES")
    if listing:
        serial = sorted({item.nodeid.split("::")[0] for item in items
                         if item.get_closest_marker("serial")})
        tmp = f"{listing}.{os.getpid()}"
        with open(tmp, "w") as fh:  # each worker collects the same: the last rename wins
            fh.write("".join(f"{path}\n" for path in serial))
        os.replace(tmp, listing)
    slow = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow")}
    if slow:
        items.sort(key=lambda item: item.nodeid.split("::")[0] not in slow)
