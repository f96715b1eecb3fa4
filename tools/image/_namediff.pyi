"""The names a call changed in a namespace, in C (``kli.tools.image.record``)."""

from typing import Any, TypeVar

_K = TypeVar("_K")

def changed(before: dict[_K, Any], after: dict[_K, Any], /) -> list[_K]:
    """The keys bound, rebound (another value object, by identity) or deleted from ``before``
    to ``after``: those of ``after`` in its order, then the deleted ones in ``before``'s order.
    Any hashable keys; an exception from a key's ``__eq__`` or ``__hash__`` propagates.
    ``TypeError`` when an argument is not a dict."""
