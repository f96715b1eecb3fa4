"""Make ``kli`` the default kernel of the Jupyter server of this environment: new notebooks and
consoles start on it (binder/postBuild and scripts/run both run this — the setting's one home).

Merges ``{"MultiKernelManager": {"default_kernel_name": "kli"}}`` into
``{sys.prefix}/etc/jupyter/jupyter_server_config.json``, keeping what the file already holds,
and writes it atomically. (A file in ``jupyter_server_config.d/`` would not do: the server reads
those only for its extension list.)
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

KERNEL = "kli"


def main() -> int:
    folder = os.path.join(sys.prefix, "etc", "jupyter")
    path = os.path.join(folder, "jupyter_server_config.json")
    os.makedirs(folder, exist_ok=True)
    config = {}
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as fh:
            config = json.load(fh)
    config.setdefault("MultiKernelManager", {})["default_kernel_name"] = KERNEL
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".jupyter_server_config.")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(config, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, path)
    print(f"default kernel: {KERNEL} ({path})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
