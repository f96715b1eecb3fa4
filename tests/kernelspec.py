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
# Every spec ``python -m kli.kernel install`` writes, by name: its source folder.
INSTALLED_SPECS = {"kli": SPEC_SOURCE, "kli-sandboxed": SPEC_SOURCE.parent / "kernelspec-sandboxed"}


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
    first (with the other specs the install writes: ``INSTALLED_SPECS``) when one is missing or
    differs from the checkout's."""
    from jupyter_client.kernelspec import KernelSpecManager

    wanted = {name: json.loads((src / "kernel.json").read_text())
              for name, src in INSTALLED_SPECS.items() if (src / "kernel.json").is_file()}

    def current() -> bool:
        found = KernelSpecManager().find_kernel_specs()
        return all(name in found
                   and json.loads((Path(found[name]) / "kernel.json").read_text()) == spec
                   for name, spec in wanted.items())

    if not current():
        with _install_lock():
            if not current():  # another worker may have installed them meanwhile
                subprocess.run([sys.executable, "-m", "kli.kernel", "install", "--sys-prefix"],
                               check=True, capture_output=True)
    return str(KernelSpecManager().find_kernel_specs()["kli"])


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
