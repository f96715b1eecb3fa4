"""The tool core stays free of Jupyter, and nothing is installed under a top-level name other
than ``kli``."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata

JUPYTER_MODULES = ("jupyter_client", "jupyter_core", "ipykernel", "IPython", "zmq", "comm",
                   "ipywidgets", "traitlets", "tornado", "nbformat")


def test_kli_tools_imports_nothing_from_jupyter() -> None:
    code = (
        "import importlib, json, sys\n"
        "import kli.tools\n"
        "from kli.tools.registry import REGISTRY\n"
        "for tool in REGISTRY.tools.values(): importlib.import_module(tool.run.__module__)\n"
        "import kli.tools.cli\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout)
    offenders = [m for m in loaded if m.split(".")[0] in JUPYTER_MODULES]
    assert offenders == []


def test_no_top_level_tools_or_kernel_module_is_installed() -> None:
    files = metadata.files("kli-kernel") or []
    top = {str(f).split("/")[0] for f in files if str(f).endswith(".py")}
    assert "tools" not in top and "kernel" not in top
    # Editable installs list a finder instead of the sources; the import names still are kli.*.
    import kli.tools

    assert kli.tools.__name__ == "kli.tools"


def test_console_script_is_declared() -> None:
    eps = metadata.entry_points(group="console_scripts")
    assert any(ep.name == "kli" and ep.value == "kli.tools.cli:main" for ep in eps)
