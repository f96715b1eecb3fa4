"""Make ``kli`` the default kernel of the Jupyter server of this environment: new notebooks and
consoles start on it; and kli's persona the one a new Jupyter AI chat picks, so a message typed
in a new chat goes to it (binder/postBuild and scripts/run both run this — the settings' one home).

Merges ``{"MultiKernelManager": {"default_kernel_name": "kli"}, "PersonaManager":
{"default_persona_id": "jupyter-ai-personas::kli::KliPersona"}}`` into
``{sys.prefix}/etc/jupyter/jupyter_server_config.json``, keeping what the file already holds,
and writes it atomically. Jupyter AI's persona manager hands that id to the chat's persona
picker as its pre-selection (``jupyter_ai_default_persona`` in the page config) and routes a
message that names no persona to it; without Jupyter AI the section is unused. (A file in ``jupyter_server_config.d/`` would not do: the server reads
those only for its extension list.)
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

KERNEL = "kli"
PERSONA = "jupyter-ai-personas::kli::KliPersona"  # entry point group :: name :: class


def main() -> int:
    folder = os.path.join(sys.prefix, "etc", "jupyter")
    path = os.path.join(folder, "jupyter_server_config.json")
    os.makedirs(folder, exist_ok=True)
    config = {}
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as fh:
            config = json.load(fh)
    config.setdefault("MultiKernelManager", {})["default_kernel_name"] = KERNEL
    config.setdefault("PersonaManager", {})["default_persona_id"] = PERSONA
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".jupyter_server_config.")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(config, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, path)
    print(f"default kernel: {KERNEL}, default chat persona: kli ({path})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
