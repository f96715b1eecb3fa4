"""kli.kernel — the Jupyter adapter: an IPython kernel whose namespace is the tools' image.

The kernel class (``kli.kernel.kernel.KliKernel``) wires the one tool registry to three faces:
comm targets for agents and for the JupyterLab extension (``comms``), the ``%kli`` magics
(``magics``) and rich display of results (``display``). The wire constants come from ``protocol`` (the one definition of the protocol).
Nothing heavy is imported here, so
``python -m kli.kernel`` starts as fast as the stock kernel.
"""

from kli.kernel.protocol import AGENT_TARGET, EDIT_MIME, KERNEL_NAME, PROTOCOL_VERSION, UI_TARGET

__all__ = ["AGENT_TARGET", "EDIT_MIME", "KERNEL_NAME", "PROTOCOL_VERSION", "UI_TARGET"]
