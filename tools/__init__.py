"""kli.tools — the agent–computer interface, pure Python.

One registry of tools (``kli.tools.registry``) and one core (``kli.tools.core``). Every face —
Python API, CLI, magics, comm, JSON schemas — is generated from the registry. Nothing here
imports Jupyter.

Core imports no tool: importing ``kli.tools`` hands core the registry (built on first use,
so importing stays cheap), and every ``Workspace`` finds its tools there.
"""

from kli.tools.core import registry as _core_registry
from kli.tools.core.result import ToolResult
from kli.tools.core.session import Session
from kli.tools.core.workspace import Workspace


def _registry() -> _core_registry.Registry:
    from kli.tools.registry import REGISTRY

    return REGISTRY


_core_registry.provide(_registry)

__version__ = "0.1.0"
__all__ = ["Session", "ToolResult", "Workspace", "__version__"]
