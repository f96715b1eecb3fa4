"""Maps the repository's top-level folders onto the ``kli`` import namespace.

The design card keeps ``tools/`` and ``kernel/`` at the top of the repository, while the
installed import names are ``kli.tools`` and ``kli.kernel`` (``kli`` itself is a namespace
package, so nothing called ``tools`` or ``kernel`` is installed at top level). ``client/`` is
the public name ``kli.client`` of the agent client implemented in ``kli.kernel.client``. Data files —
the kernelspec and the prebuilt JupyterLab extension — are installed under
``share/jupyter`` so ``jupyter kernelspec list`` and ``jupyter labextension list`` see them.

A build from source (``pip install .``, an sdist, ``pip install git+…``) whose prebuilt extension
files are missing runs ``labextension/build.sh --fast`` first — the JupyterLab extension
template's convention (its build hook runs the npm build unless the targets exist) — and stops,
saying how to get them, when Node.js/npm is not there. Editable installs skip it: they install
no data files.

Native parts, each optional (without it the pure Python fallback is used):

- ``kli.tools.image._namediff`` (``tools/image/_namediff.c``: the live image's name diff, issue
  33), a C extension built with the package; ``optional=True``, so a machine without a C
  compiler or Python's headers still installs. An editable install builds it in place
  (``tools/image/_namediff.*.so``, ignored by git).
- kli-scan (``native/``: search's native first pass) is built by ``native/build.sh``, which the
  README's commands run, into ``tools/file/native/kli-scan``; when it is there the wheel carries
  it, else search uses rg.

The wheel is tagged for this platform and Python (it lists an extension module), even when the
optional build failed and it holds only Python.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = {"kli.tools": "tools", "kli.kernel": "kernel", "kli.client": "client"}


def _packages() -> list[str]:
    found = []
    for name, folder in SOURCES.items():
        base = os.path.join(HERE, folder)
        if not os.path.isfile(os.path.join(base, "__init__.py")):
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__")))
            if "__init__.py" in filenames:
                rel = os.path.relpath(dirpath, base)
                found.append(name if rel == "." else name + "." + rel.replace(os.sep, "."))
    return found


LABEXTENSION = os.path.join(HERE, "labextension")
PREBUILT = os.path.join(LABEXTENSION, "kli_kernel_labextension")


def _prebuilt_present() -> bool:
    return os.path.isfile(os.path.join(PREBUILT, "package.json")) and bool(
        glob.glob(os.path.join(PREBUILT, "static", "remoteEntry.*.js")))


def ensure_labextension() -> None:
    """Build the prebuilt JupyterLab extension unless it is there (or there is no source)."""
    if _prebuilt_present() or not os.path.isfile(os.path.join(LABEXTENSION, "package.json")):
        return
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        raise SystemExit(
            "kli-kernel: the prebuilt JupyterLab extension (labextension/kli_kernel_labextension/)"
            f" is missing and {' and '.join(missing)} not found to build it. Install Node.js and"
            " npm (e.g. apt-get install nodejs npm) and build again, or run"
            " `bash labextension/build.sh --fast` first, or install the wheel from PyPI"
            " (`pip install kli-kernel`), which carries the prebuilt extension.")
    print("kli-kernel: building the JupyterLab extension (labextension/build.sh --fast)",
          flush=True)
    subprocess.run(["bash", os.path.join(LABEXTENSION, "build.sh"), "--fast"], check=True)
    if not _prebuilt_present():
        raise SystemExit("kli-kernel: labextension/build.sh ran but left no "
                         "kli_kernel_labextension/static/remoteEntry.*.js")


class BuildPyWithLabextension(build_py):
    """``build_py`` that first makes sure the prebuilt extension exists, then lists its files
    as data files (they may have been created just now)."""

    def run(self) -> None:
        if not getattr(self, "editable_mode", False):
            ensure_labextension()
            self.distribution.data_files[:] = _data_files()
        super().run()


def _data_files() -> list[tuple[str, list[str]]]:
    """Kernelspec and prebuilt labextension files, each under its share/jupyter target."""
    trees = [
        ("kernel/kernelspec", "share/jupyter/kernels/kli"),
        ("kernel/kernelspec-sandboxed", "share/jupyter/kernels/kli-sandboxed"),
        ("labextension/kli_kernel_labextension", "share/jupyter/labextensions/kli-kernel"),
        # kli.kernel.ai.agent_processes: Jupyter AI's ACP agents stop with the server
        ("kernel/jupyter-config", "etc/jupyter"),
    ]
    out: list[tuple[str, list[str]]] = []
    for src, dest in trees:
        base = os.path.join(HERE, src)
        for dirpath, _dirnames, filenames in os.walk(base):
            files = [os.path.relpath(os.path.join(dirpath, f), HERE) for f in sorted(filenames)]
            if files:
                rel = os.path.relpath(dirpath, base)
                out.append((dest if rel == "." else f"{dest}/{rel}", files))
    return out


setup(
    package_dir=dict(SOURCES),
    packages=_packages(),
    package_data={"": ["*.json", "*.md", "py.typed", "*.svg"], "kli.tools.file": ["native/kli-scan"],
                  "kli.tools.image": ["_namediff.pyi"]},
    ext_modules=[Extension("kli.tools.image._namediff", ["tools/image/_namediff.c"], optional=True)],
    data_files=_data_files(),
    cmdclass={"build_py": BuildPyWithLabextension},
)
