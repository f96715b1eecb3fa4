"""The MCP ``instructions`` of a ``kli mcp`` server: the rules that span a profile's tools."""

from __future__ import annotations

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
_SESSION = """\
- Every call shows in the notebook's activity panel under the session "mcp: <client name>".
- If a result says the kernel died, its state (variables, anchors, previews) is gone: follow \
the recovery the message gives, then read files again before editing."""


def instructions(profile: str) -> str:
    """The MCP ``instructions`` for a profile: the rules that span its tools. For slmcode, the
    edit contract's rules and worked example and repair (its turn rules are a harness's, which
    an MCP client's loop does not keep, so they are left out)."""
    from kli.tools.ws.contract import EDIT_RULES, WORKED

    parts = [_KERNEL + (" " + _EVAL if profile != "slmcode" else "")]
    if profile != "slmcode":
        parts.append(_KLI_EDITS)
    parts.append(_SESSION)
    text = "\n".join(parts)
    if profile != "kli":
        text += f"\n\n{EDIT_RULES}\n\n{WORKED}"
    return text
