"""image_summary — the notebook's user names, one bounded row each (kli profile, gate
image/inspect; kli's context-summary / list-objects).

Names of the eval namespace (``__main__``: the notebook's), without the host's own
(``Workspace.hidden_names``: IPython's ``In``, ``Out``, ``get_ipython``…) and without names
starting with ``_``. Modules are listed on one line. Each other name gets a row: type, shape and
dtype for arrays and data frames, length for containers, size (data bytes for arrays, else the
shallow ``sys.getsizeof``), a preview of scalars and a signature of functions and classes. At
most ``MAX_NAMES`` rows of at most ``ROW_CHARS`` characters, sorted by name; ``pattern`` (a
glob) narrows them.
"""

from __future__ import annotations

import fnmatch
import types

from kli.tools.core.registry import GATE_INSPECT, Call, Tool
from kli.tools.core.result import ToolResult
from kli.tools.image.describe import facts, row

MAX_NAMES = 200
ROW_CHARS = 160
MAX_MODULE_NAMES = 60

DESCRIPTION = f"""\
Summarise the live image: the notebook's user names (one row each: type; shape and dtype for \
arrays and data frames; length for containers; size; a preview of scalars; the signature of \
functions and classes) and the imported module names. Read-only. Parameter: pattern (a glob \
over names, e.g. df*; default all). At most {MAX_NAMES} rows; look closer with inspect."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Glob over names; default every name."},
    },
    "additionalProperties": False,
}


def _run(call: Call) -> ToolResult:
    pattern = call.args.get("pattern") or "*"
    hidden = call.ws.hidden_names()
    items = sorted(
        (k, v) for k, v in list(call.ws.namespace.items())
        if isinstance(k, str) and not k.startswith("_") and k not in hidden
        and fnmatch.fnmatchcase(k, pattern)
    )
    modules = [k for k, v in items if isinstance(v, types.ModuleType)]
    others = [(k, v) for k, v in items if not isinstance(v, types.ModuleType)]
    rows = [row(k, v, ROW_CHARS) for k, v in others[:MAX_NAMES]]
    lines = [f"{len(others)} names" + (f" matching {pattern!r}" if pattern != "*" else "")
             + f", {len(modules)} modules in __main__:"]
    lines += rows
    if len(others) > MAX_NAMES:
        lines.append(f"… {len(others) - MAX_NAMES} more names not shown; narrow with pattern.")
    if modules:
        shown = modules[:MAX_MODULE_NAMES]
        more = f" … (+{len(modules) - len(shown)})" if len(modules) > len(shown) else ""
        lines.append("modules: " + ", ".join(shown) + more)
    if not items:
        lines = ["no user names" + (f" match {pattern!r}" if pattern != "*" else "")
                 + " in __main__ (the notebook's namespace)."]
    return ToolResult.success(
        "\n".join(lines),
        names=[{"name": k, **facts(v)} for k, v in others[:MAX_NAMES]],
        modules=modules,
        total=len(others),
    )


TOOL = Tool(
    name="image_summary",
    profile="kli",
    gate=GATE_INSPECT,
    description=DESCRIPTION,
    parameters=PARAMETERS,
    run=_run,
    main_arg="pattern",
)
