"""How a test installs Python packages into an environment it makes (the Binder environment,
Enterprise Gateway's, the source install's): with uv when the test environment has it, as
scripts/setup.sh's ``py_install`` does, else with pip.

uv resolves like pip, and downloads, unpacks and compiles bytecode in parallel: a JupyterLab
environment takes about 20 s instead of a minute or more (docs/testing.md). The bytecode is
compiled at install, as pip does: where ``PYTHONDONTWRITEBYTECODE`` is set (this machine's
environment sets it) nothing is cached later, and each kernel a test starts would compile every
module it imports again. What a test checks of pip itself (a plain ``pip install`` of the sdist,
binder/postBuild's own pip) stays pip.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def uv() -> str | None:
    """The uv beside this test environment's python (scripts/setup.sh's ``ensure_venv`` puts
    it there; the [test] extra lists it), or None."""
    return shutil.which("uv", path=str(Path(sys.executable).parent))


def install_command(python: Path | str, *args: str) -> list[str]:
    """The command that installs ``args`` (pip's arguments: requirements, ``-r FILE``, ``-e``,
    ``--no-deps``) into the environment of ``python``."""
    found = uv()
    if found is None:
        return [str(python), "-m", "pip", "install", "-q", *args]
    return [found, "pip", "install", "-q", "--compile-bytecode", "--python", str(python), *args]
