"""Install the ``kli`` kernelspec and ``kli-sandboxed`` (the same kernel started in the box,
docs/sandbox.md) — the wheel already ships both as shared-data; this is for editable installs
and for installing into another prefix."""

from __future__ import annotations

import argparse
import os
import sys

from kli.kernel import KERNEL_NAME
from kli.kernel.protocol import SANDBOXED_KERNEL_NAME as SANDBOXED_NAME

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC_DIR = os.path.join(HERE, "kernelspec")
SANDBOXED_SPEC_DIR = os.path.join(HERE, "kernelspec-sandboxed")


def spec_source(name: str = KERNEL_NAME) -> str:
    """The kernelspec folder to copy: the source tree's (editable install), else the copy the
    wheel installed as shared-data (a wheel does not carry it inside the package)."""
    from jupyter_core.paths import jupyter_path

    here = SPEC_DIR if name == KERNEL_NAME else SANDBOXED_SPEC_DIR
    places = [here, os.path.join(sys.prefix, "share", "jupyter", "kernels", name)]
    places += jupyter_path("kernels", name)
    for place in places:
        if os.path.isfile(os.path.join(place, "kernel.json")):
            return place
    raise FileNotFoundError(f"no {name} kernelspec found in {', '.join(places)}")


def install(*, user: bool = False, prefix: str | None = None) -> str:
    """Install kernelspecs ``kli`` and ``kli-sandboxed``; returns the folder of ``kli``."""
    import shutil
    import tempfile

    from jupyter_client.kernelspec import KernelSpecManager

    dest = ""
    for name in (SANDBOXED_NAME, KERNEL_NAME):
        with tempfile.TemporaryDirectory() as tmp:
            # staged: the source may be the very folder being replaced
            staged = shutil.copytree(spec_source(name), os.path.join(tmp, name))
            dest = KernelSpecManager().install_kernel_spec(
                staged, name, user=user, prefix=prefix, replace=None
            )
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kli.kernel install", description="Install the kli kernelspecs (kli, kli-sandboxed)."
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="into the user's Jupyter data dir")
    where.add_argument("--sys-prefix", action="store_true", help=f"into {sys.prefix}")
    where.add_argument("--prefix", help="into PREFIX/share/jupyter/kernels")
    ns = parser.parse_args(argv)
    prefix = sys.prefix if ns.sys_prefix else ns.prefix
    dest = install(user=ns.user, prefix=prefix)
    print(f"Installed kernelspec {KERNEL_NAME} in {dest} and {SANDBOXED_NAME} in "
          f"{os.path.join(os.path.dirname(dest), SANDBOXED_NAME)}")
    return 0
