"""Maps the repository's top-level folders onto the ``kli`` import namespace.

The design card keeps ``tools/`` and ``kernel/`` at the top of the repository, while the
installed import names are ``kli.tools`` and ``kli.kernel`` (``kli`` itself is a namespace
package, so nothing called ``tools`` or ``kernel`` is installed at top level). ``client/`` is
the public name ``kli.client`` of the agent client implemented in ``kli.kernel.client``. Data files —
the kernelspec and the prebuilt JupyterLab extension — are installed under
``share/jupyter`` so ``jupyter kernelspec list`` and ``jupyter labextension list`` see them.
"""

from __future__ import annotations

import os

from setuptools import setup

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


def _data_files() -> list[tuple[str, list[str]]]:
    """Kernelspec and prebuilt labextension files, each under its share/jupyter target."""
    trees = [
        ("kernel/kernelspec", "share/jupyter/kernels/kli"),
        ("labextension/kli_kernel_labextension", "share/jupyter/labextensions/kli-kernel"),
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
    package_data={"": ["*.json", "*.md", "py.typed"]},
    data_files=_data_files(),
)
