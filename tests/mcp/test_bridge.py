"""The bridge of ``kli mcp`` on its own: a failure to attach that is no ``KernelError`` (as
jupyter_client's "This event loop is already running" once was) still gives tool specs and
an error result, never an exception an MCP server turns into "Internal server error"."""

from __future__ import annotations

from kli.kernel.client import AgentClient
from kli.kernel.mcp.bridge import Bridge
from kli.kernel.mcp.targets import Target


class Unattachable(Target):
    """A target whose every connection attempt raises what no case of the bridge names."""

    description = "a kernel that cannot be attached"

    def connect(self, label: str) -> AgentClient:
        raise RuntimeError("This event loop is already running")

    def advice(self) -> str:
        return "retry the call."


def test_specs_and_calls_survive_an_attach_that_raises_an_unnamed_exception() -> None:
    from kli.tools.registry import REGISTRY

    bridge = Bridge(Unattachable())
    specs = bridge.specs("k", "mcp: probe")
    assert [s["name"] for s in specs] == REGISTRY.names("kli")
    result = bridge.call("k", "mcp: probe", "eval", {"code": "1"})
    assert not result.ok and result.details.get("error") == "kernel_unreachable"
    assert "RuntimeError: This event loop is already running" in result.text
    assert "retry the call." in result.text
