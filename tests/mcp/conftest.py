"""Fixtures for the MCP tests: the kli kernelspec, and a notebook's kernel with its activity
panel (see helpers.Notebook)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import Notebook, server_env

SPEC_SOURCE = Path(__file__).resolve().parents[2] / "kernel" / "kernelspec"


@pytest.fixture(scope="session", autouse=True)
def kli_kernelspec() -> str:
    """The ``kli`` kernelspec is findable (installed into sys.prefix when an editable install
    did not put it in place)."""
    from jupyter_client.kernelspec import KernelSpecManager

    specs = KernelSpecManager().find_kernel_specs()
    source = json.loads((SPEC_SOURCE / "kernel.json").read_text())
    current = specs.get("kli")
    if current is None or json.loads((Path(current) / "kernel.json").read_text()) != source:
        subprocess.run([sys.executable, "-m", "kli.kernel", "install", "--sys-prefix"],
                       check=True, capture_output=True)
        current = KernelSpecManager().find_kernel_specs()["kli"]
    return str(current)


@pytest.fixture
def notebook(tmp_path: Path) -> Iterator[Notebook]:
    root = tmp_path / "root"
    root.mkdir()
    nb = Notebook(root, Path(server_env(tmp_path)["JUPYTER_RUNTIME_DIR"]))
    yield nb
    nb.close()
