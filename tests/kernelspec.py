"""The kli kernelspec for the tests, in one home.

Two ways a test gets it:
- ``kli_kernelspec``, a session fixture: the spec installed where jupyter_client finds it (into
  ``sys.prefix`` with ``python -m kli.kernel install --sys-prefix`` when the editable install did
  not put it there, or put an old one), for the kernels the tests start through jupyter_client.
  A test folder's conftest makes it autouse by importing it
  (``from tests.kernelspec import kli_kernelspec``).
- ``write_kli_kernelspec(share)``: the spec written into a test server's own ``share/jupyter``
  (tests/jupyter_server.py's servers), running this Python.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import shutil
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SPEC_SOURCE = Path(__file__).resolve().parents[1] / "kernel" / "kernelspec"


@contextlib.contextmanager
def _install_lock() -> Iterator[None]:
    """One installer at a time: pytest-xdist workers start their sessions together, and two
    ``kernelspec install`` runs into the same ``sys.prefix`` would race."""
    lock = Path(tempfile.gettempdir()) / f"kli-kernelspec-{zlib.crc32(sys.prefix.encode()):08x}.lock"
    with open(lock, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def install_kli_kernelspec() -> str:
    """The folder of the ``kli`` kernelspec jupyter_client finds, installed into ``sys.prefix``
    first when it is missing or differs from the checkout's."""
    from jupyter_client.kernelspec import KernelSpecManager

    source = json.loads((SPEC_SOURCE / "kernel.json").read_text())

    def current() -> str | None:
        found = KernelSpecManager().find_kernel_specs().get("kli")
        if found is None or json.loads((Path(found) / "kernel.json").read_text()) != source:
            return None
        return str(found)

    path = current()
    if path is not None:
        return path
    with _install_lock():
        path = current()  # another worker may have installed it meanwhile
        if path is None:
            subprocess.run([sys.executable, "-m", "kli.kernel", "install", "--sys-prefix"],
                           check=True, capture_output=True)
            path = str(KernelSpecManager().find_kernel_specs()["kli"])
    return path


@pytest.fixture(scope="session", autouse=True)
def kli_kernelspec() -> str:
    """The ``kli`` kernelspec is findable (``install_kli_kernelspec``); its folder."""
    return install_kli_kernelspec()


def write_kli_kernelspec(share: Path, metadata: dict[str, Any] | None = None) -> Path:
    """The ``kli`` kernelspec in ``share/kernels/kli`` (with its logos), running this Python
    (and so the worktree's kli the PYTHONPATH shim names), ``metadata`` added to its own; its
    folder."""
    spec_dir = share / "kernels" / "kli"
    spec_dir.mkdir(parents=True)
    spec = json.loads((SPEC_SOURCE / "kernel.json").read_text())
    spec["argv"] = [sys.executable, *spec["argv"][1:]]
    spec["metadata"].update(metadata or {})
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    for logo in SPEC_SOURCE.glob("logo-*"):
        shutil.copy(logo, spec_dir / logo.name)
    return spec_dir
