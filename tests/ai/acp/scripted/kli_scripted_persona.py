"""An ACP persona of Jupyter AI whose agent is tests/ai/acp/scripted/scripted_acp_agent.py: the
same ``BaseAcpPersona`` (Jupyter AI's ACP client) the Claude Code, Codex and Gemini CLI personas
are, with only the agent command changed. Registered through a ``jupyter_ai.personas`` entry
point the test writes beside it."""

from __future__ import annotations

import os
import sys

from jupyter_ai_acp_client.base_acp_persona import BaseAcpPersona
from jupyter_ai_persona_manager import PersonaDefaults

AGENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripted_acp_agent.py")
NAME = "ScriptedAgent"


class ScriptedAcpPersona(BaseAcpPersona):
    def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(*args, executable=[sys.executable, AGENT], **kwargs)

    @property
    def defaults(self) -> PersonaDefaults:
        import jupyter_ai_acp_client

        avatar = os.path.join(os.path.dirname(jupyter_ai_acp_client.__file__), "static",
                              "claude.svg")
        return PersonaDefaults(name=NAME, description="A scripted ACP agent (tests).",
                               avatar_path=avatar, system_prompt="unused")
