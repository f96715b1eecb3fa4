"""kli.tools — the agent–computer interface, pure Python.

One registry of tools (``kli.tools.registry``) and one core (``kli.tools.core``). Every face —
Python API, CLI, magics, comm, JSON schemas — is generated from the registry. Nothing here
imports Jupyter.
"""

from kli.tools.core.result import ToolResult
from kli.tools.core.session import Session
from kli.tools.core.workspace import Workspace

__version__ = "0.1.0"
__all__ = ["Session", "ToolResult", "Workspace", "__version__"]
