"""Which engine runs the first pass, where its binary is, and whether it may be trusted.

Contract::

    locate(jail) -> (path of kli-scan or rg, why any before it did not serve) | (None, why not)
    scan_built() -> (path of kli-scan | None, why not)        (cached)
    rg_installed() -> (path of rg | None, why not)             (cached)

Two engines serve, the first one there: **kli-scan** (``native/kli-scan``, built by
``native/build.sh`` from Debian's packaged crates of ripgrep and installed with this package as
``kli/tools/file/native/kli-scan``) and **rg** (the ``ripgrep`` wheel's binary).
``OFF_ENV`` set to anything but "" or "0" switches both off (the Python-only path:
benchmarks, a suspected difference); ``ENGINE_ENV`` set to "rg" passes kli-scan by (the rg
path's tests, benchmarks).

The rg binary is the one the ``ripgrep`` wheel installed into this interpreter's own
environment (its ``RECORD``, found in this interpreter's site-packages, never through
``sys.path``, which holds the workspace root in a kernel, nor ``PATH``); kli-scan is the one
in this package. Either one that resolves under the workspace root is refused, since an agent
can write there — unless it lies in the kernel's own Python installation there (a project's
``.venv/``), which is control state no tool writes (``Jail.interpreter_control``), and whose
modules the tools import too.
"""

from __future__ import annotations

import functools
import os
import stat
import sysconfig
from importlib import metadata

from kli.tools.core.jail import Jail

# Set in the environment (to anything but "" or "0"), search and ws_grep run without a first pass.
OFF_ENV = "KLI_SEARCH_NO_RG"
# Set to "rg", search and ws_grep take rg even where kli-scan was built.
ENGINE_ENV = "KLI_SEARCH_ENGINE"
SCAN = "kli-scan"
RG = "rg"
# kli-scan's place in the installed package (native/build.sh, setup.py's package_data).
SCAN_PATH = os.path.join(
    os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "native", SCAN
)


@functools.lru_cache(maxsize=1)
def rg_installed() -> tuple[str | None, str]:
    """The ``ripgrep`` wheel's rg in this interpreter's environment, or (None, why not)."""
    where = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    dists = list(metadata.distributions(name="ripgrep", path=sorted(where)))
    if not dists:
        return None, "the ripgrep package is not installed in this environment"
    dist = dists[0]
    for entry in dist.files or ():
        if entry.name in ("rg", "rg.exe") and entry.parent.name in ("bin", "Scripts"):
            path = os.path.realpath(str(dist.locate_file(entry)))
            try:
                st = os.stat(path)
            except OSError:
                return None, f"the ripgrep package's rg ({path}) is missing"
            if not stat.S_ISREG(st.st_mode) or not os.access(path, os.X_OK):
                return None, f"the ripgrep package's rg ({path}) is not an executable file"
            return path, ""
    return None, "the ripgrep package lists no rg binary"


@functools.lru_cache(maxsize=1)
def scan_built() -> tuple[str | None, str]:
    """kli-scan as built into this package (``SCAN_PATH``), or (None, why not)."""
    if not os.path.isfile(SCAN_PATH) or not os.access(SCAN_PATH, os.X_OK):
        return None, (f"{SCAN} was not built with this installation (it needs cargo and "
                      "Debian's ripgrep crates: native/build.sh)")
    return SCAN_PATH, ""


def locate(jail: Jail) -> tuple[str | None, str]:
    """The first pass to run for ``jail`` and why any before it did not serve: kli-scan, else
    rg, else (None, why not); see the module docstring for the switches and the trust rule."""
    if os.environ.get(OFF_ENV, "") not in ("", "0"):
        return None, f"rg switched off ({OFF_ENV} is set)"
    whys = []
    # Looked up at each call (not bound at import): tests replace a finder.
    for engine, find in ((SCAN, scan_built), (RG, rg_installed)):
        if engine == SCAN and os.environ.get(ENGINE_ENV, "") == RG:
            whys.append(f"{SCAN} passed by ({ENGINE_ENV}=rg)")
            continue
        path, why = find()
        if path is None:
            whys.append(why)
            continue
        inside = path == jail.root or path.startswith(jail.root.rstrip("/") + "/")
        if inside and jail.interpreter_control(path) is None:
            whys.append(f"{os.path.basename(path)} lies under the workspace root, where tools "
                        "can write; not used")
            continue
        return path, "; ".join(whys)
    return None, "; ".join(whys)
