"""kli.kernel — the Jupyter adapter: an IPython kernel whose namespace is the tools' image.

The kernel class (``kli.kernel.kernel.KliKernel``) wires the one tool registry to three faces:
comm targets for agents and for the JupyterLab extension (``comms``), the ``%kli`` magics
(``magics``) and rich display of results (``display``). Nothing heavy is imported here, so
``python -m kli.kernel`` starts as fast as the stock kernel.
"""

KERNEL_NAME = "kli"
AGENT_TARGET = "kli.agent"
UI_TARGET = "kli.ui"
EDIT_MIME = "application/vnd.kli.edit+json"
PROTOCOL_VERSION = 1

__all__ = ["AGENT_TARGET", "EDIT_MIME", "KERNEL_NAME", "PROTOCOL_VERSION", "UI_TARGET"]
