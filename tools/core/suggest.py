""""Did you mean …?" for a misspelt name: the one home of that guess (tools, skills, magics).

Candidates are difflib's close matches, ordered by the optimal-string-alignment distance (an
adjacent transposition counts as one edit, as typing slips do) and then by difflib's ratio, so
``raed`` suggests ``read`` before ``redo``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def typo_distance(a: str, b: str) -> int:
    """Edits (insert, delete, substitute, swap two neighbours) that turn ``a`` into ``b``."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[len(b)]


def close_names(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` names of ``known`` close to ``name``, likeliest first."""
    pool = list(known)
    found = difflib.get_close_matches(name, pool, n=max(n, 6))
    ranked = sorted(found, key=lambda k: (typo_distance(name, k),
                                          -difflib.SequenceMatcher(None, name, k).ratio()))
    return ranked[:n]
