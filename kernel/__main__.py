"""``python -m kli.kernel [-f CONNECTION_FILE]`` runs the kernel;
``python -m kli.kernel install [--user|--sys-prefix|--prefix P]`` installs its kernelspec."""

import os
import sys

# ``python -m`` puts the kernel's folder (the workspace root) first on sys.path: a file there
# named like a module the kernel loads (traitlets.py, zmq.py, json.py, a kli/ folder) would run
# at every start. The kernelspec sets PYTHONSAFEPATH (Python 3.11+), so the folder is never on
# the path while Python and the kernel load; the variable is dropped at once so the kernel's
# children (a bash command's python) start as usual, and KliKernelApp puts '' back after the
# standard library for the person's cells, as IPython does without it. Elsewhere (Python 3.10,
# an older kernelspec) the folder is taken off here: only runpy's own imports came before.
os.environ.pop("PYTHONSAFEPATH", None)
if sys.path and sys.path[0] and os.path.realpath(sys.path[0]) == os.path.realpath(os.getcwd()):
    del sys.path[0]

if len(sys.argv) > 1 and sys.argv[1] == "install":
    from kli.kernel.install import main

    sys.exit(main(sys.argv[2:]))
else:
    from kli.kernel.kernel import KliKernel, KliKernelApp

    KliKernelApp.launch_instance(kernel_class=KliKernel)
