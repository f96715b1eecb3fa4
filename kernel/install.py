"""Install the ``kli`` kernelspec (the wheel already ships it as shared-data; this is for
editable installs and for installing into another prefix)."""

from __future__ import annotations

import argparse
import os
import sys

from kli.kernel import KERNEL_NAME

SPEC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernelspec")


def spec_source() -> str:
    """The kernelspec folder to copy: the source tree's (editable install), else the copy the
    wheel installed as shared-data (a wheel does not carry it inside the package)."""
    from jupyter_core.paths import jupyter_path

    places = [SPEC_DIR, os.path.join(sys.prefix, "share", "jupyter", "kernels", KERNEL_NAME)]
    places += jupyter_path("kernels", KERNEL_NAME)
    for place in places:
        if os.path.isfile(os.path.join(place, "kernel.json")):
            return place
    raise FileNotFoundError(f"no {KERNEL_NAME} kernelspec found in {', '.join(places)}")


def install(*, user: bool = False, prefix: str | None = None) -> str:
    """Install kernelspec ``kli``; returns the installed folder."""
    import shutil
    import tempfile

    from jupyter_client.kernelspec import KernelSpecManager

    with tempfile.TemporaryDirectory() as tmp:
        # staged: the source may be the very folder being replaced
        staged = shutil.copytree(spec_source(), os.path.join(tmp, KERNEL_NAME))
        return KernelSpecManager().install_kernel_spec(
            staged, KERNEL_NAME, user=user, prefix=prefix, replace=None
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kli.kernel install", description="Install the kli kernelspec."
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="into the user's Jupyter data dir")
    where.add_argument("--sys-prefix", action="store_true", help=f"into {sys.prefix}")
    where.add_argument("--prefix", help="into PREFIX/share/jupyter/kernels")
    ns = parser.parse_args(argv)
    prefix = sys.prefix if ns.sys_prefix else ns.prefix
    dest = install(user=ns.user, prefix=prefix)
    print(f"Installed kernelspec {KERNEL_NAME} in {dest}")
    return 0
