"""Install the ``kli`` kernelspec (the wheel already ships it as shared-data; this is for
editable installs and for installing into another prefix)."""

from __future__ import annotations

import argparse
import os
import sys

from kli.kernel import KERNEL_NAME

SPEC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernelspec")


def install(*, user: bool = False, prefix: str | None = None) -> str:
    """Copy ``kernel/kernelspec`` as kernelspec ``kli``; returns the installed folder."""
    from jupyter_client.kernelspec import KernelSpecManager

    return KernelSpecManager().install_kernel_spec(
        SPEC_DIR, KERNEL_NAME, user=user, prefix=prefix, replace=None
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
