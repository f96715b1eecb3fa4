"""The live notebook: the kernel's side of the notebook surface (docs/notebook.md).

The tools load and change notebooks through a ``NotebookStore`` (``kli.tools.roles``); the
kernel host puts ``live.LiveNotebooks`` there, which sends each notebook to one of three paths,
decided in one place (``live.LiveNotebooks.route``):

- the server's shared Y document (jupyter-collaboration), joined as a Y client of the room
  (``room``), for a notebook open on the Jupyter server that started this kernel
  (``server``: JPY_PARENT_PID, jpserver-PID.json, JPY_SESSION_NAME);
- without a room, the open model of a browser's JupyterLab tab that has the notebook open,
  through the extension (``openmodel``);
- the file on disk (``kli.tools.notebook.disk``) for every other notebook.

Both live paths plan a change the same way, cell by cell (``plan``). ``runner`` runs a
notebook's cells in the kernel's image as cells (the ``run_cells`` tool's host side). Nothing
under ``kli.tools`` imports this package.
"""

from __future__ import annotations

from typing import Any


def attach(kernel: Any) -> None:
    """Give the kernel's Workspace the live notebook store and the cell runner."""
    from kli.kernel.notebook.live import LiveNotebooks
    from kli.kernel.notebook.runner import ShellRunner

    ws = kernel.workspace
    ws.notebooks = LiveNotebooks(ws.jail)
    ws.cell_runner = ShellRunner(kernel)
