"""Regular expressions that cannot hang a tool call.

Python's ``re`` cannot be interrupted: a pattern that backtracks catastrophically — ``(a|aa)+b``
on a long line of ``a`` — runs for minutes inside one C call, past any walk deadline. ``search``
and ``ws_grep`` therefore match with the ``regex`` package (``re``-compatible syntax,
``VERSION0``), passing ``timeout=`` on every match call: a call that runs out raises
``TimeoutError`` and the tool stops with a partial result that says so (``timeout_note``).

``regex`` counts the timeout in CPU seconds of the matching thread, so on a loaded machine the
wall time can exceed it; it is still bounded. See docs/reliability.md.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import regex

Pattern = Any  # regex.Pattern[str]; the package ships no precise stubs
error = re.error
IGNORECASE = re.IGNORECASE
MULTILINE = re.MULTILINE
_RE_FLAGS = re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE | re.ASCII | re.UNICODE
# Never pass a timeout below this: a call that is given ~0 s fails before it starts.
MIN_TIMEOUT = 0.05


def compile(pattern: str, flags: int = 0) -> Pattern:
    """Compile ``pattern`` with ``re`` semantics; raises ``rx.error`` (``re.error``: ``.msg``,
    ``.pos``). The syntax is ``re``'s — ``re`` checks it first, so its error messages are the
    ones the model sees — and ``regex`` (``VERSION0``) runs it."""
    with warnings.catch_warnings():  # re's FutureWarnings (nested sets) are noise here
        warnings.simplefilter("ignore", FutureWarning)
        try:
            re.compile(pattern, flags & _RE_FLAGS)
        except ValueError as exc:  # "(?a)(?u)": re's flag check raises ValueError, not re.error
            raise re.error(str(exc), pattern) from None
    try:
        return regex.compile(pattern, flags | regex.VERSION0)
    except regex.error as exc:  # re accepts it but regex does not (rare)
        raise re.error(exc.msg, pattern, exc.pos) from None


def escape(text: str) -> str:
    return regex.escape(text)


def budget(deadline: float, now: float) -> float:
    """Seconds to give one match call so the tool keeps to ``deadline``."""
    return max(deadline - now, MIN_TIMEOUT)


def timeout_note(seconds: float, where: str) -> str:
    """What the model is told when a pattern ran out of time (how to retry included)."""
    return (
        f"[The pattern ran past the {seconds:g} s time limit while matching {where} and the "
        "search stopped there; results are partial. Patterns with nested or adjacent repeats "
        "such as (a+)+, (a|aa)+ or .*.*x backtrack catastrophically on long lines. Retry with "
        "a simpler pattern (a literal word, a+ instead of (a+)+, [^,]* instead of .*) or a "
        "narrower path.]"
    )
