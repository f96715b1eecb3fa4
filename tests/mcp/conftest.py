"""Fixtures for the MCP tests: the kli kernelspec (tests/kernelspec.py), and a notebook's kernel
with its activity panel (see helpers.Notebook)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kernelspec import kli_kernelspec  # noqa: F401  (session, autouse: the spec installed)

from .helpers import Notebook, server_env


@pytest.fixture
def notebook(tmp_path: Path) -> Iterator[Notebook]:
    root = tmp_path / "root"
    root.mkdir()
    nb = Notebook(root, Path(server_env(tmp_path)["JUPYTER_RUNTIME_DIR"]))
    yield nb
    nb.close()
