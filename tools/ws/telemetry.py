"""Drift telemetry: which ladder rung and which patch path each edit used, per session.

Counts go into ``call.session.telemetry`` (a ``Counter`` the host can read at any time, one per
session) under dotted keys, and the keys a call counted are also returned in that call's
``details["telemetry"]``. A later policy learns an edit format from these.

Keys:
- ``ws_edit.calls``, ``ws_edit.rung.<rung>`` (exact, trailing-whitespace-insensitive, …),
  ``ws_edit.replace_all``, ``ws_edit.gutter_stripped``, ``ws_edit.refused.<reason>``;
- ``ws_patch.calls``, ``ws_patch.format.<format>`` (unified, search_replace,
  search_replace_headers, search_replace_bare, minus_plus), ``ws_patch.hunk.<rung>`` per
  applied hunk (plus ``pure_insertion``), ``ws_patch.repair.<kind>`` (fence_dropped,
  prose_dropped, forgotten_prefix, gutter_stripped, off_anchor — the hunk landed away from its
  @@ line), ``ws_patch.refused.<reason>``;
- ``syntax.<status>`` (ok, skipped, still_broken, reverted, broken_new_file).
"""

from __future__ import annotations

from collections import Counter

from kli.tools.core.session import Session


def record(session: Session, keys: list[str]) -> list[str]:
    """Count ``keys`` in the session; returns them (for ``details["telemetry"]``)."""
    session.telemetry.update(keys)
    return keys


def snapshot(session: Session, prefix: str = "") -> dict[str, int]:
    """The session's counts whose key starts with ``prefix``, as a plain dict."""
    counts: Counter[str] = session.telemetry
    return {k: v for k, v in sorted(counts.items()) if k.startswith(prefix)}
