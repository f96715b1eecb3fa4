"""``python -m kli.kernel [-f CONNECTION_FILE]`` runs the kernel;
``python -m kli.kernel install [--user|--sys-prefix|--prefix P]`` installs its kernelspec."""

import os
import sys

# ``python -m`` puts the kernel's folder (the workspace root) first on sys.path: a file there
# named like a module the kernel loads (traitlets.py, zmq.py, json.py) would run at every start.
# It is taken off while the kernel loads; IPython puts '' back after the standard library for
# the person's cells (InteractiveShellApp.init_path).
if sys.path and sys.path[0] and os.path.realpath(sys.path[0]) == os.path.realpath(os.getcwd()):
    del sys.path[0]

if len(sys.argv) > 1 and sys.argv[1] == "install":
    from kli.kernel.install import main

    sys.exit(main(sys.argv[2:]))
else:
    from ipykernel.kernelapp import IPKernelApp

    from kli.kernel.kernel import KliKernel

    IPKernelApp.launch_instance(kernel_class=KliKernel)
