"""Resolving a dotted name in the live image: ``df``, ``np.linalg.norm``, ``mymod.Cls.method``.

The first segment is looked up in the eval namespace (``__main__``: the notebook's names);
failing that, the longest dotted prefix that is an imported module (``Workspace.modules``).
Each further segment is an attribute. Attribute access may run a property's code; nothing is
imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kli.tools.core.registry import Call
from kli.tools.core.result import ToolError

_MISSING = object()


@dataclass
class Found:
    """``obj`` found at ``dotted``; ``owner`` holds it as attribute (or key) ``attr``."""

    dotted: str
    obj: Any
    owner: Any  # a module, class, object — or the namespace dict for a top-level name
    attr: str

    @property
    def in_namespace(self) -> bool:
        return isinstance(self.owner, dict)


def resolve(call: Call, dotted: str) -> Found:
    """Find ``dotted`` or raise a ToolError saying which segment is missing and how to look."""
    parts = dotted.strip().split(".")
    if not dotted.strip() or not all(p.isidentifier() for p in parts):
        raise ToolError(
            f"{dotted!r} is not a dotted Python name (e.g. df, np.linalg.norm, mod.Cls.method).",
            error="bad_name",
        )
    namespace = call.ws.namespace
    modules = call.ws.modules()
    start = 1
    if parts[0] in namespace:
        owner: Any = namespace
        obj = namespace[parts[0]]
    else:
        for cut in range(len(parts), 0, -1):
            name = ".".join(parts[:cut])
            if modules.get(name) is not None:
                owner, obj, start = None, modules[name], cut
                break
        else:
            raise ToolError(
                f"{parts[0]!r} is not defined in the notebook's namespace and no module "
                f"{dotted!r} (or a prefix of it) is imported. List the names with "
                "image_summary, or import the module first (eval 'import NAME').",
                error="not_found",
                name=dotted,
            )
    attr = parts[start - 1]
    for i in range(start, len(parts)):
        try:
            nxt = getattr(obj, parts[i], _MISSING)
        except Exception as exc:
            raise ToolError(
                f"getting {'.'.join(parts[: i + 1])!r} raised {type(exc).__name__}: {exc}.",
                error="attribute_error",
                name=dotted,
            ) from None
        if nxt is _MISSING:
            raise ToolError(
                f"{'.'.join(parts[:i])!r} has no attribute {parts[i]!r}; inspect "
                f"{'.'.join(parts[:i])!r} to see its attributes.",
                error="not_found",
                name=dotted,
            )
        owner, obj, attr = obj, nxt, parts[i]
    if owner is None:  # a module found whole: its owner is its parent package, if imported
        parent = ".".join(parts[: start - 1])
        owner = modules.get(parent) if parent else None
    return Found(dotted=dotted, obj=obj, owner=owner, attr=attr)
