"""What the installed wheel must carry: the kernelspec and the prebuilt JupyterLab extension.

These run where scripts/test installed the wheel (KLI_TEST_INSTALLED_WHEEL=1, as in CI): a file
missing from the wheel's data fails here rather than on a user's machine.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not os.environ.get("KLI_TEST_INSTALLED_WHEEL"),
    reason="checks the installed wheel; scripts/test sets KLI_TEST_INSTALLED_WHEEL=1",
)
BIN = Path(sys.executable).parent


def test_package_is_installed_from_the_wheel_not_the_source_tree() -> None:
    import kli.client
    import kli.kernel
    import kli.tools

    for module in (kli.tools, kli.kernel, kli.client):
        installed = Path(module.__file__ or "").resolve()
        assert installed.parents[1].name == "kli", installed
        assert installed.parents[2].name == "site-packages", installed


def test_kernelspec_kli_is_listed_by_jupyter() -> None:
    out = subprocess.run([str(BIN / "jupyter"), "kernelspec", "list", "--json"],
                         capture_output=True, text=True, check=True)
    specs = json.loads(out.stdout)["kernelspecs"]
    assert "kli" in specs
    spec = specs["kli"]["spec"]
    assert spec["display_name"] == "Python 3 (kli)"
    assert spec["language"] == "python"
    resources = Path(specs["kli"]["resource_dir"])
    assert (resources / "logo-64x64.png").is_file()


def test_kernelspec_kli_sandboxed_is_listed_and_starts_the_launcher() -> None:
    """The kernel in the box (docs/sandbox.md) ships beside ``kli``."""
    out = subprocess.run([str(BIN / "jupyter"), "kernelspec", "list", "--json"],
                         capture_output=True, text=True, check=True)
    spec = json.loads(out.stdout)["kernelspecs"]["kli-sandboxed"]["spec"]
    assert spec["display_name"] == "Python 3 (kli, sandboxed)"
    assert spec["argv"][1:3] == ["-m", "kli.kernel.sandbox"]
    assert spec["interrupt_mode"] == "message"


def test_labextension_is_installed_and_enabled_without_node() -> None:
    env = dict(os.environ, PATH=str(BIN) + os.pathsep + "/usr/bin:/bin")  # no build step needed
    out = subprocess.run([str(BIN / "jupyter"), "labextension", "list"],
                         capture_output=True, text=True, env=env, check=True)
    listing = out.stdout + out.stderr
    line = next((ln for ln in listing.splitlines() if "kli-kernel" in ln), "")
    assert "enabled" in line and "OK" in line, listing
    share = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "kli-kernel"
    assert (share / "package.json").is_file()
    assert list((share / "static").glob("remoteEntry.*.js"))


def test_the_server_extension_that_stops_jupyter_ais_agents_is_enabled() -> None:
    """kli.kernel.ai.agent_processes (the agents of Jupyter AI's ACP personas stop with the
    server) is enabled by the wheel's etc/jupyter config, with no command run."""
    out = subprocess.run([str(BIN / "jupyter"), "server", "extension", "list"],
                         capture_output=True, text=True, check=True)
    listing = re.sub(r"\x1b\[[0-9;]*m", "", out.stdout + out.stderr)  # no colours
    assert re.search(r"kli\.kernel\.ai\.agent_processes\s+enabled", listing), listing
    assert re.search(r"kli\.kernel\.ai\.agent_processes\s+OK", listing), listing
