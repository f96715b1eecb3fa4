"""Python ``re`` patterns written in the syntax of Rust's ``regex`` crate, which both engines
of the first pass read (kli-scan and rg: ``grep-regex``), with the same meaning or a known
superset. Below, "rg" stands for either engine.

Contract::

    translate(pattern, flags) -> Translation | None

``pattern`` is a pattern the tools already compiled with ``re`` (``kli.tools.core.rx``) and
``flags`` the ``re`` flags it was compiled with. The result is a pattern for ``rg`` (its Rust
``regex`` syntax, Unicode mode, line by line) and one of two kinds:

- ``exact``: on a file holding no NUL byte, the lines ``rg`` counts are exactly the lines the
  Python pattern matches the way ``search`` matches (each line on its own, ``^``/``$`` at its
  ends), whatever bytes the file holds. Then rg's per-file line counts are the answer.
- ``superset``: every line the Python pattern matches is a line rg matches (rg may match more).
  Then rg only picks the files worth reading; Python decides.

None when the pattern holds something this module does not read (the caller then searches
with Python alone, today's path).

The tools match with the ``regex`` package in ``re``'s syntax (``kli.tools.core.rx``), so
"the Python pattern" here means what ``regex`` (``VERSION0``) does with it.

Why not just hand the pattern to rg: the two dialects read the same text differently. The
tools' ``\\d \\w \\s`` are ``regex``'s Unicode tables (rg's are another version, and
another definition of a word character), ``(?i)`` folds by ``regex``'s table, ``.`` and
negated classes match an undecodable byte (a surrogate after ``surrogateescape``, which rg's
``.`` never matches), ``\\b`` follows Python's word characters, ``\\A``/``\\Z`` and look-arounds
see past the line, back-references and possessive repeats have no rg form. So every character
set is written out as explicit code-point ranges computed with ``regex`` itself (exact by
construction), and each construct rg cannot say with the same meaning is widened to a
superset: assertions become empty, a back-reference any run of bytes, ``.`` and negated sets
also any non-ASCII byte, possessive and atomic groups their plain forms.

Why ``exact`` holds on text without NUL: rg is given no ``\\n`` to match (sets leave it out),
so its matches stay inside one line, as Python's counted matches do; a positive set or literal
only holds valid characters, which are found in the raw bytes exactly where the decoded text
holds them (UTF-8 resynchronises after an undecodable byte, which Python turns into one
surrogate that no such set holds).
"""

from __future__ import annotations

import array
import functools
import re
import sys
from dataclasses import dataclass
from typing import Any

if sys.version_info >= (3, 11):
    from re import _constants as C  # type: ignore[attr-defined]
    from re import _parser as P  # type: ignore[attr-defined]
else:  # pragma: no cover - Python 3.10
    import sre_constants as C
    import sre_parse as P

import regex

try:
    from regex import _regex as _regex_c

    _all_cases = _regex_c.get_all_cases
except (ImportError, AttributeError):  # pragma: no cover - another build of regex
    _all_cases = None

# Flags that change what a set or literal accepts.
_CHAR_FLAGS = re.IGNORECASE | re.ASCII
# Any byte an undecodable byte can be (Python reads it as one surrogate, rg as one raw byte).
_RAW_HIGH = r"(?-u:[\x80-\xFF])"
_ANY_RUN = r"(?-u:[^\n]*)"
_MAX_SET_RANGES = 4000  # past this a set is too big to hand rg cheaply
_SEGMENTS = ((0, 9), (11, 0xD7FF), (0xE000, 0x10FFFF))  # no \n, no surrogates


@dataclass(frozen=True)
class Translation:
    """``pattern`` for rg and whether its line counts are Python's exactly (see module)."""

    pattern: str
    exact: bool
    why: str  # for a superset: the first construct that made it one, in words


class _Unsupported(Exception):
    pass


@functools.lru_cache(maxsize=1)
def _all_chars() -> tuple[str, ...]:
    # Decoded from UTF-32 rather than joined from a million one-character strings: those made
    # a first \d or \w search peak at ~120 MB (the bound is 150 MB); this is ~13 MB.
    return tuple(
        array.array("I", range(lo, hi + 1)).tobytes().decode(_UTF32) for lo, hi in _SEGMENTS
    )


_UTF32 = "utf-32-le" if sys.byteorder == "little" else "utf-32-be"


@functools.lru_cache(maxsize=256)
def _class_ranges(source: str, flags: int) -> tuple[tuple[int, int], ...]:
    """Code-point ranges (no ``\\n``, no surrogates) that the one-character pattern ``source``
    matches under ``flags``: the tools' own matcher (``regex``, ``VERSION0``, as
    ``kli.tools.core.rx`` runs it) decides, over every character."""
    rx = regex.compile(f"(?:{source})+", (flags & _CHAR_FLAGS) | regex.VERSION0)
    out: list[tuple[int, int]] = []
    for (lo, _hi), chars in zip(_SEGMENTS, _all_chars(), strict=True):
        for m in rx.finditer(chars):
            out.append((lo + m.start(), lo + m.end() - 1))
    return tuple(out)


@functools.lru_cache(maxsize=1024)
def _literal_ranges(cp: int, flags: int) -> tuple[tuple[int, int], ...]:
    """The characters a literal matches: itself, or under ``(?i)`` each character the matcher
    folds to it (``regex``'s own case table gives the candidates, each confirmed by a match)."""
    if cp == 10:
        return ()
    if not flags & re.IGNORECASE:
        return ((cp, cp),)
    if _all_cases is None:  # pragma: no cover
        return _class_ranges(_py_char(cp), flags)
    one = regex.compile(_py_char(cp), (flags & _CHAR_FLAGS) | regex.VERSION0)
    cands = set(_all_cases((flags & _CHAR_FLAGS) | regex.VERSION0, cp)) | {cp}
    hits = sorted(c for c in cands if c != 10 and not 0xD800 <= c < 0xE000
                  and one.fullmatch(chr(c)))
    return tuple((c, c) for c in hits)


def _py_char(cp: int) -> str:
    return f"\\U{cp:08x}"


_CATEGORY_SOURCE = {
    C.CATEGORY_DIGIT: r"\d",
    C.CATEGORY_NOT_DIGIT: r"\D",
    C.CATEGORY_SPACE: r"\s",
    C.CATEGORY_NOT_SPACE: r"\S",
    C.CATEGORY_WORD: r"\w",
    C.CATEGORY_NOT_WORD: r"\W",
}
_NEGATED_CATEGORIES = {C.CATEGORY_NOT_DIGIT, C.CATEGORY_NOT_SPACE, C.CATEGORY_NOT_WORD}


def _set_source(items: list[tuple[Any, Any]]) -> tuple[str, bool]:
    """A Python class for ``items`` (an ``IN`` node) and whether it can match an undecodable
    byte (it is negated, or holds a negated category)."""
    negate = False
    parts: list[str] = []
    for op, av in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            parts.append(_py_char(av))
        elif op is C.RANGE:
            parts.append(f"{_py_char(av[0])}-{_py_char(av[1])}")
        elif op is C.CATEGORY and av in _CATEGORY_SOURCE:
            parts.append(_CATEGORY_SOURCE[av])
            negate = negate or av in _NEGATED_CATEGORIES
        else:
            raise _Unsupported(f"set item {op}")
    body = "".join(parts)
    return ("[^" if items and items[0][0] is C.NEGATE else "[") + body + "]", negate


def _rg_set(ranges: tuple[tuple[int, int], ...]) -> str:
    if not ranges:
        raise _Unsupported("a set that matches no character")
    if len(ranges) > _MAX_SET_RANGES:
        raise _Unsupported("a set too large")
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return _rg_char(ranges[0][0])
    body = "".join(
        _rg_char(lo, in_set=True) if lo == hi
        else f"{_rg_char(lo, in_set=True)}-{_rg_char(hi, in_set=True)}"
        for lo, hi in ranges
    )
    return f"[{body}]"


def _rg_char(cp: int, in_set: bool = False) -> str:
    ch = chr(cp)
    if ch.isascii() and ch.isalnum():
        return ch
    return f"\\x{{{cp:X}}}"


class _Writer:
    def __init__(self) -> None:
        self.why = ""

    def widen(self, why: str) -> None:
        if not self.why:
            self.why = why

    def seq(self, nodes: Any, flags: int) -> str:
        return "".join(self.node(op, av, flags) for op, av in nodes)

    def node(self, op: Any, av: Any, flags: int) -> str:
        if op is C.LITERAL:
            return _rg_set(_literal_ranges(av, flags)) if av != 10 else self._never()
        if op is C.IN:
            source, raw = _set_source(av)
            ranges = _class_ranges(source, flags)
            if raw:
                self.widen("a negated character set (it also matches an undecodable byte)")
                return f"(?:{_rg_set(ranges)}|{_RAW_HIGH})" if ranges else _RAW_HIGH
            return _rg_set(ranges)
        if op is C.NOT_LITERAL:
            self.widen("a negated character set (it also matches an undecodable byte)")
            ranges = _class_ranges(f"[^{_py_char(av)}]", flags)
            return f"(?:{_rg_set(ranges)}|{_RAW_HIGH})"
        if op is C.ANY:
            self.widen("'.' (it also matches an undecodable byte)")
            return rf"(?:[^\n]|{_RAW_HIGH})"
        if op is C.AT:
            if av in (C.AT_BEGINNING, C.AT_BEGINNING_LINE):
                return "^"
            if av in (C.AT_END, C.AT_END_LINE):
                return "$"
            names = {
                C.AT_BEGINNING_STRING: r"\A (the file's start)",
                C.AT_END_STRING: r"\Z (the file's end)",
                C.AT_BOUNDARY: r"\b (Python's word characters)",
                C.AT_NON_BOUNDARY: r"\B (Python's word characters)",
            }
            self.widen(names.get(av, str(av)))
            return ""
        if op is C.BRANCH:
            return "(?:" + "|".join(self.seq(alt, flags) for alt in av[1]) + ")"
        if op is C.SUBPATTERN:
            _group, add, delete, sub = av
            inner = (flags | add) & ~delete
            return "(?:" + self.seq(sub, inner) + ")"
        if op in (C.MAX_REPEAT, C.MIN_REPEAT) or op is getattr(C, "POSSESSIVE_REPEAT", None):
            lo, hi, sub = av
            if op is not C.MAX_REPEAT and op is not C.MIN_REPEAT:
                self.widen("a possessive repeat")
            body = self.seq(sub, flags)
            if hi is C.MAXREPEAT:
                return f"(?:{body}){{{lo},}}"
            return f"(?:{body}){{{lo},{hi}}}"
        if op is getattr(C, "ATOMIC_GROUP", None):
            self.widen("an atomic group")
            return "(?:" + self.seq(av, flags) + ")"
        if op in (C.ASSERT, C.ASSERT_NOT):
            self.widen("a look-around")
            return ""
        if op is C.GROUPREF:
            self.widen("a back-reference")
            return _ANY_RUN
        if op is C.GROUPREF_EXISTS:
            self.widen("a conditional group")
            _group, yes, no = av
            return "(?:" + self.seq(yes, flags) + "|" + (self.seq(no, flags) if no else "") + ")"
        raise _Unsupported(str(op))

    def _never(self) -> str:
        # A newline is never inside one line: the Python pattern cannot count a line with it.
        raise _Unsupported("a newline in the pattern")


def translate(pattern: str, flags: int = 0) -> Translation | None:
    """See the module docstring."""
    if any(0xD800 <= ord(ch) < 0xE000 for ch in pattern):
        return None  # a surrogate stands for an undecodable byte: leave it to Python
    try:
        parsed = P.parse(pattern, flags & ~re.MULTILINE)
    except (re.error, RecursionError):
        return None
    if parsed.state.flags & getattr(re, "LOCALE", 0):
        return None
    writer = _Writer()
    try:
        body = writer.seq(parsed, parsed.state.flags | flags)
    except (_Unsupported, RecursionError):
        return None
    return Translation(pattern=body, exact=not writer.why, why=writer.why)
