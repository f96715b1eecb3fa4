"""A Jupyter server as ``scripts/run`` starts it for the keyless chat (issue 36): Jupyter AI 3.2
with kli's persona as the default persona (``PersonaManager.default_persona_id``, which
binder/default_kernel.py writes for scripts/run and Binder) and NO model set up — none of the
variables that set one up (kli.tools.agentmodels.models_set_up) reaches it — so the persona's
model is the keyless demo, ``kli/demo``. Nothing is scripted: no model endpoint is started.
Used by test_keyless_demo.py (headless and websocket) and test_keyless_browser.py (Chromium).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from tests.ai.harness import (
    PERSONA_ID,
    START_TIMEOUT,
    AiServer,
    Script,
    kli_labextension,
    lab_page_settings,
)
from tests.jupyter_server import folders, jupyter_dirs, kli_kernelspec, launch, serve
from tests.ports import free_port

TOUR = Path(__file__).resolve().parents[2] / "binder" / "chat_agent.ipynb"
TASK = "fix mean in chat_agent.ipynb"  # the task the tour's notebook has the person type
BUGGY = "    return sum(xs) / (len(xs) - 1)"
FIXED = "    return sum(xs) / len(xs)"
MODEL_VARS = ("KLI_AGENT_MODEL", "KLI_AGENT_MODELS", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
              "GEMINI_API_KEY", "OPENAI_BASE_URL")


@contextlib.contextmanager
def start_keyless_server(base: Path, env_extra: dict[str, str] | None = None
                         ) -> Iterator[AiServer]:
    """The server; ``env_extra`` adds variables (a provider's key: then a model IS set up)."""
    root, runtime, share = folders(base)
    kli_kernelspec(share)
    kli_labextension(share)
    lab_page_settings(base)
    env = {k: v for k, v in os.environ.items() if k not in MODEL_VARS}
    env.update(jupyter_dirs(base, runtime), JUPYTER_PATH=str(share),
               XDG_CONFIG_HOME=str(base / "xdg"), JUPYTERLAB_SETTINGS_DIR=str(base / "settings"),
               KLI_AGENT_REVIEW_WAIT="120")
    env.update(env_extra or {})
    port = free_port()
    log = base / "server.log"
    proc = launch(
        "jupyter_server", port, root,
        "--ServerApp.jpserver_extensions=jupyter_server_ydoc=False",
        "--MCPExtensionApp.mcp_port=0",  # two servers on one machine would share 3001
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp, for the Chromium test
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        f"--PersonaManager.default_persona_id={PERSONA_ID}",  # as binder/default_kernel.py
        env=env, log=log)
    server = AiServer(f"http://127.0.0.1:{port}", root, proc, log, runtime, Script())
    with serve(server, START_TIMEOUT):
        yield server
