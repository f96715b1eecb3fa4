"""The MCP ``instructions`` of a ``kli mcp`` server: the rules that span a profile's tools."""

from __future__ import annotations

from typing import Any

_KERNEL = """\
kli tools run inside a live Python kernel: the image of a Jupyter notebook."""
_EVAL = """\
Variables defined with eval persist between calls and are shared with the notebook's cells."""
_KLI_EDITS = """\
- read returns each line as LINE:HH|content; HH is the line's anchor. edit takes a hashline \
patch whose anchors come from a read or search made in this session; a stale anchor (the line \
changed since) rejects the whole patch and nothing is written: read the file again and resend.
- An edit whose delimiter repair is not safe to write returns a repair preview (a candidate id) \
and writes nothing. A person may Accept or Reject it in the notebook's kli activity panel, or \
you can write it with edit {"accept_repair": ID, "path": PATH}."""
_NOTEBOOKS = """\
- Notebooks (.ipynb): change them only through these tools. read nb.ipynb lists its cells \
(nb.ipynb#CELL_ID headers) with anchors; edit with an '@@ nb.ipynb#CELL_ID' section changes a \
cell's source; cells inserts, deletes, moves or retypes cells; run_cells runs cells in the \
live kernel, outputs where the person sees them. Never rewrite a .ipynb file whole (write, a \
shell command, a file-write tool, another server's cell tools such as edit_cell or \
insert_cell): that skips the stale-anchor check and the person's review, and can overwrite \
what they changed meanwhile."""
_SESSION = """\
- Every call shows in the notebook's activity panel under the session {session}.
- If a result says the kernel died, its state (variables, anchors, previews) is gone: follow \
the recovery the message gives, then read files again before editing."""


# Sentences added to a tool's description by the MCP faces (kli mcp, Jupyter AI's server), which
# an agent reads beside other servers' tools: they steer it off raw writes of notebooks.
_NOTES = {
    "write": "Not for notebooks (.ipynb): change their cells with edit ('@@ nb.ipynb#CELL_ID') "
             "and cells, which check anchors and keep outputs.",
    "bash": "Do not change notebooks (.ipynb) from the shell: use edit and cells.",
}


def describe(spec: dict[str, Any]) -> str:
    """A tool's MCP description: the registry's, with its MCP face's note (``_NOTES``)."""
    note = _NOTES.get(spec["name"])
    return f"{spec['description']} {note}" if note else str(spec["description"])


def instructions(profile: str, session: str = '"mcp: <client name>"') -> str:
    """The MCP ``instructions`` for a profile: the rules that span its tools (``session``: how
    the activity panel names the caller's session). For slmcode, the
    edit contract's rules and worked example and repair (its turn rules are a harness's, which
    an MCP client's loop does not keep, so they are left out)."""
    from kli.tools.ws.contract import EDIT_RULES, WORKED

    parts = [_KERNEL + (" " + _EVAL if profile != "slmcode" else "")]
    if profile != "slmcode":
        parts += [_KLI_EDITS, _NOTEBOOKS]
    parts.append(_SESSION.format(session=session))
    text = "\n".join(parts)
    if profile != "kli":
        text += f"\n\n{EDIT_RULES}\n\n{WORKED}"
    return text
