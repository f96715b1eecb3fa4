"""The namespace jupyter-server-mcp loads kli's tools from (``kli.kernel.ai.mcp_tools:read``
and so on, as ``kli.kernel.ai.mcp_route.tool_specs`` lists them): each name is the generated
function of that registry tool (``kli.kernel.ai.mcp_route.tool``). A module of its own, with
no other names, so no tool name meets a module global."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    from kli.kernel.ai.mcp_route import tool

    return tool(name)
