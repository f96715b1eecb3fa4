"""``python -m kli.kernel [-f CONNECTION_FILE]`` runs the kernel;
``python -m kli.kernel install [--user|--sys-prefix|--prefix P]`` installs its kernelspec."""

import sys

if len(sys.argv) > 1 and sys.argv[1] == "install":
    from kli.kernel.install import main

    sys.exit(main(sys.argv[2:]))
else:
    from ipykernel.kernelapp import IPKernelApp

    from kli.kernel.kernel import KliKernel

    IPKernelApp.launch_instance(kernel_class=KliKernel)
