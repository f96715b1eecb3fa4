"""A scripted ACP agent, standing in for Claude Code / Codex / Gemini CLI and their remote model
(the test says what is real). It speaks real ACP over stdio (the ``agent-client-protocol``
package Jupyter AI's ACP client uses), takes the MCP servers the client hands it at
``session/new`` exactly as a real agent does, and — instead of asking a model — follows the
one script its prompt names, calling MCP tools over streamable HTTP with the URL and headers it
was given. Each tool result is sent back to the chat as the agent's message.

Prompt (its last line): ``edit NOTEBOOK CELL OLD_LINE => NEW_LINE``: read the cell, find OLD_LINE's anchor, send
an edit replacing it. ``tools``: list the tool names it was given.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import Any

from acp import PROTOCOL_VERSION, Agent, run_agent, update_agent_message_text
from acp.schema import (
    AgentCapabilities,
    InitializeResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptResponse,
)

SERVER_NAME = os.environ.get("KLI_SCRIPTED_MCP_NAME", "kli-test")


class ScriptedAgent(Agent):
    def __init__(self) -> None:
        self.conn: Any = None
        self.servers: dict[str, Any] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None,
                         client_info: Any = None, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_capabilities=
                                  AgentCapabilities(mcp_capabilities=McpCapabilities(http=True)))

    async def new_session(self, cwd: str, additional_directories: Any = None,
                          mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        sid = uuid.uuid4().hex
        self.servers[sid] = next((s for s in mcp_servers or [] if s.name == SERVER_NAME), None)
        return NewSessionResponse(session_id=sid)

    async def load_session(self, *args: Any, **kwargs: Any) -> None:
        return None

    async def _say(self, sid: str, text: str) -> None:
        await self.conn.session_update(session_id=sid,
                                       update=update_agent_message_text(text + "\n"))

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        from fastmcp import Client
        from fastmcp.client.transports import StreamableHttpTransport

        # Jupyter AI puts its notes (the notebook-editing guidance) before the person's text:
        # the script is the prompt's last line.
        whole = "".join(getattr(b, "text", "") for b in prompt).strip()
        text = whole.splitlines()[-1].strip() if whole else ""
        server = self.servers.get(session_id)
        if server is None:
            await self._say(session_id, f"no MCP server named {SERVER_NAME} was given")
            return PromptResponse(stop_reason="end_turn")
        headers = {h.name: h.value for h in server.headers}
        await self._say(session_id, "headers: " + ", ".join(sorted(headers)))
        async with Client(StreamableHttpTransport(server.url, headers=headers),
                          timeout=120) as mcp:
            if text == "tools":
                names = sorted(t.name for t in await mcp.list_tools())
                await self._say(session_id, "tools: " + " ".join(names))
            elif text.startswith("edit "):
                nb, cell, change = text[5:].split(" ", 2)
                old, new = change.split(" => ")
                read = await mcp.call_tool("read", {"path": f"{nb}#{cell}"},
                                           raise_on_error=False)
                rows = read.content[0].text.splitlines()
                anchor = next((r.split("|")[0] for r in rows if r.endswith("|" + old)), None)
                if anchor is None:
                    await self._say(session_id, "read result: " + read.content[0].text)
                    return PromptResponse(stop_reason="end_turn")
                patch = f"@@ {nb}#{cell}\n= {anchor}\n~{new}\n"
                done = await mcp.call_tool("edit", {"input": patch}, raise_on_error=False)
                await self._say(session_id, "edit result: " + done.content[0].text)
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None


if __name__ == "__main__":
    asyncio.run(run_agent(ScriptedAgent()))
