"""The bounded, jailed glob walk shared by ``find`` and ``search`` (and reusable by ws_glob /
ws_grep).

Contract::

    walk(jail, pattern, *, max_entries=None, max_seconds=None) -> WalkResult

``pattern`` is a wcmatch glob relative to the jail's root (an absolute pattern inside the root is
accepted): ``*`` spans a run of characters within one path segment, a bare ``**`` segment spans
any depth including zero, ``?`` one character, ``[...]`` a class, ``{a,b}`` alternatives. ``*``
and ``**`` also match names that begin with a dot. Only files are matched (symlinks to files
included); directories themselves are never results. Symlinked directories are not descended,
not even by a plain ``*`` segment (where wcmatch's own glob would enter them); a symlink to a
file is matched only when its target stays inside the root (the jail's rule). Otherwise the
results equal ``wcmatch.glob.glob(pattern, flags=GLOB_FLAGS | NODIR)`` (tested).
Temporary files of interrupted writes (``.NAME.*.kli-tmp``, ``kli.tools.core.atomic``) are
never results. Version-control metadata folders (``VCS_DIRS``: ``.git``, ``.hg``, ``.svn``, ``.bzr``,
``_darcs``) are skipped unless the pattern names one literally (``.git/**``).

The walk visits at most ``max_entries`` directory entries and runs at most ``max_seconds``; when
either bound is hit it stops and returns what it found so far, with ``stopped`` naming the
bound. Both default to the module constants ``MAX_ENTRIES`` / ``MAX_SECONDS``, read at call time
(tests shrink them with monkeypatch).

Errors (a pattern with a ``..`` segment, an absolute pattern outside the root, a literal prefix
that resolves out of the root) raise ``ToolError`` with a message saying how to retry.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import bracex
from wcmatch import fnmatch as wc_fnmatch
from wcmatch import glob as wc_glob

from kli.tools.core.atomic import TMP_SUFFIX
from kli.tools.core.jail import Jail
from kli.tools.core.result import ToolError

# The spec's walk bounds (kli-tools.txt, find): 100000 entries or 10 seconds.
MAX_ENTRIES = 100_000
MAX_SECONDS = 10.0
VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs"})

GLOB_FLAGS = wc_glob.GLOBSTAR | wc_glob.DOTGLOB | wc_glob.BRACE | wc_glob.FORCEUNIX
_NAME_FLAGS = wc_fnmatch.DOTMATCH | wc_fnmatch.FORCEUNIX
_BRACE_LIMIT = 1000


@dataclass(frozen=True)
class WalkResult:
    """What a walk found.

    ``paths``: root-relative POSIX paths of every matching file, sorted (callers cap them).
    ``visited``: directory entries looked at. ``stopped``: None when the walk finished, else
    ``"entries"`` or ``"time"``. ``deadline``: the ``time.monotonic()`` value at which the time
    bound ends, so a caller doing more work per path (search) can keep to the same budget.
    ``newline_names``: whether the name of any entry below the walk's folder (files, folders,
    skipped temporary files) holds a newline; None when the walk did not visit every entry
    below one folder (several literal prefixes, a depth limit, a bound hit). rg's line-based
    log (``firstpass.rg``) is trusted only when this is False: no name can forge a line of it.
    """

    paths: list[str]
    visited: int
    stopped: str | None
    max_entries: int
    max_seconds: float
    deadline: float
    newline_names: bool | None = None

    def stop_note(self) -> str:
        """A sentence for the model when the walk stopped early, else ""."""
        if self.stopped == "entries":
            return (
                f"Walk stopped after visiting {self.visited} entries (limit {self.max_entries}); "
                "results are partial. Narrow the pattern with a directory prefix (e.g. src/**/*.py)."
            )
        if self.stopped == "time":
            return (
                f"Walk stopped after {self.max_seconds:g} s (time limit) having visited "
                f"{self.visited} entries; results are partial. Narrow the pattern with a "
                "directory prefix (e.g. src/**/*.py)."
            )
        return ""


@dataclass(frozen=True)
class Listing:
    """Every entry below one folder, from a native walk (``firstpass``'s kli-scan): its regular
    files and its symlinks (not followed), root-relative, in no order, and how many entries it
    met (every kind). Folders named in ``VCS_DIRS`` below ``top`` were not entered; with a
    file-name glob (``top``'s), only files and symlinks whose name matches it are listed."""

    top: str  # root-relative, "" for the root
    files: list[str]
    symlinks: list[str]
    visited: int


@dataclass(frozen=True)
class _Plan:
    """One brace-expanded pattern: where to start walking and how to match below it."""

    prefix: str  # literal leading directories, "" for the root, POSIX, no trailing slash
    rest: str  # the pattern below the prefix
    max_depth: int | None  # segments below the prefix a match can have; None with **


def normalise_pattern(jail: Jail, pattern: str) -> str:
    """The pattern relative to the root, or ``ToolError`` for one that leaves the jail."""
    if not isinstance(pattern, str) or pattern.strip() == "":
        raise ToolError("pattern is empty; give a glob such as **/*.py or src/*.txt.")
    if "\x00" in pattern:
        raise ToolError("pattern contains a NUL character; give a plain glob.")
    pat = pattern
    if os.path.isabs(pat):
        root = jail.root.rstrip("/") + "/"
        if pat.rstrip("/") == jail.root:
            pat = "**"
        elif pat.startswith(root):
            pat = pat[len(root) :]
        else:
            raise ToolError(
                f"pattern {pattern!r} is outside the workspace root {jail.root}; "
                "use a pattern relative to the root, e.g. src/**/*.py."
            )
    while pat.startswith("./"):
        pat = pat[2:]
    pat = re.sub("/+", "/", pat)
    if any(seg == ".." for seg in pat.split("/")):
        raise ToolError(
            f"pattern {pattern!r} has a '..' segment; patterns are jailed to the workspace "
            "root — use a pattern inside it."
        )
    return pat or "**"


def _plans(pattern: str) -> list[_Plan]:
    try:
        expanded = bracex.expand(pattern, keep_escapes=True, limit=_BRACE_LIMIT)
    except Exception as exc:  # bracex raises its own error types for runaway expansions
        raise ToolError(
            f"pattern {pattern!r} expands too far ({exc}); simplify the braces."
        ) from exc
    plans: list[_Plan] = []
    for pat in dict.fromkeys(expanded):
        segs = [s for s in pat.split("/") if s not in ("", ".")]
        if any(s == ".." for s in segs):
            raise ToolError(
                f"pattern {pattern!r} has a '..' segment; patterns are jailed to the root."
            )
        literal: list[str] = []
        # The last segment is the file name: keep at least one segment in ``rest``.
        while len(literal) < len(segs) - 1 and not wc_glob.is_magic(
            segs[len(literal)], flags=GLOB_FLAGS
        ):
            literal.append(segs[len(literal)])
        rest = segs[len(literal) :]
        depth = None if "**" in rest else len(rest)
        plans.append(_Plan("/".join(literal), "/".join(rest) or "**", depth))
    return plans


def _match_all(rel: str, name: str) -> bool:
    return True


class _Matcher:
    """Matches a path relative to a plan's prefix: ``match(rel, name) -> bool``. ``**/NAME``
    patterns test the file name alone (the common case, and far cheaper than the full-path
    regex); a pattern of only ``**`` matches everything."""

    def __init__(self, rest: str) -> None:
        segs = rest.split("/")
        self.match: Callable[[str, str], bool]
        if all(s == "**" for s in segs):
            self.match = _match_all
        elif len(segs) >= 2 and all(s == "**" for s in segs[:-1]) and "**" not in segs[-1]:
            by_name = re.compile(wc_fnmatch.translate(segs[-1], flags=_NAME_FLAGS)[0][0]).match
            self.match = lambda rel, name: by_name(name) is not None
        else:
            by_path = re.compile(wc_glob.translate(rest, flags=GLOB_FLAGS)[0][0]).match
            self.match = lambda rel, name: by_path(rel) is not None


def top(jail: Jail, pattern: str) -> tuple[str, str | None]:
    """The folder (root-relative, "" for the root) under which every file ``pattern`` can match
    lies, and a file-name glob every such file's name matches when there is a simple one (a
    last segment of letters, digits, ``.``, ``_``, ``-``, ``*`` and ``?`` below ``**``), else
    None. For a first pass by another tool (``firstpass``) that must read a superset of the walk."""
    plans = _plans(normalise_pattern(jail, pattern))
    prefixes = [p.prefix.split("/") if p.prefix else [] for p in plans]
    common: list[str] = []
    for parts in zip(*prefixes, strict=False):
        if len(set(parts)) != 1:
            break
        common.append(parts[0])
    names = {p.rest.split("/")[-1] for p in plans}
    name = names.pop() if len(names) == 1 else None
    if name is not None and (name == "**" or not re.fullmatch(r"[A-Za-z0-9._*?-]+", name)):
        name = None
    return "/".join(common), name


def whole_folder(jail: Jail, pattern: str) -> str | None:
    """The folder (root-relative, "" for the root) that a walk of ``pattern`` visits whole —
    one literal prefix, no depth limit, a real folder reached through no symlink — so that a
    ``Listing`` of it can stand in for the walk (``walk(listed=)``); else None."""
    plans = _plans(normalise_pattern(jail, pattern))
    if len({p.prefix for p in plans}) != 1 or any(p.max_depth is not None for p in plans):
        return None
    prefix = plans[0].prefix
    if not prefix:
        return ""
    start = os.path.join(jail.root, prefix)
    return prefix if os.path.realpath(start) == start and os.path.isdir(start) else None


def _from_listing(jail: Jail, pat: str, listed: Listing, limit: int, seconds: float,
                  deadline: float) -> WalkResult:
    """``walk``'s answer from a ``Listing`` of the folder it would visit whole: the same files
    (the matchers, the temporary-file rule, a symlink only to a file inside the root)."""
    plans = _plans(pat)
    matchers = [_Matcher(p.rest) for p in plans]
    cut = len(listed.top) + 1 if listed.top else 0
    found: list[str] = []
    add = found.append
    single = matchers[0].match if len(matchers) == 1 else None
    root = jail.root.rstrip("/") + "/"
    for group, linked in ((listed.files, False), (listed.symlinks, True)):
        for path in group:
            rel = path[cut:]
            if not _wanted(single, matchers, rel, rel[rel.rfind("/") + 1:]):
                continue
            if linked and not (os.path.isfile(root + path)
                               and _inside(jail, os.path.realpath(root + path))):
                continue
            add(path)
    found.sort()
    return WalkResult(paths=found, visited=listed.visited, stopped=None, max_entries=limit,
                      max_seconds=seconds, deadline=deadline, newline_names=None)


def _wanted(single: Callable[[str, str], bool] | None, matchers: list[_Matcher], rel: str,
            name: str) -> bool:
    """Whether a file at ``rel`` (below the walk's prefix) named ``name`` is a result: the
    pattern matches it (``single``: the one matcher's test, if one) and it is no killed
    writer's leftover (``atomic.is_temporary``, inline: this runs once per file of the tree)."""
    if single is not None:
        if single is not _match_all and not single(rel, name):
            return False
    elif not any(m.match(rel, name) for m in matchers):
        return False
    return not (name[:1] == "." and name.endswith(TMP_SUFFIX))


def _inside(jail: Jail, real: str) -> bool:
    return real == jail.root or real.startswith(jail.root + os.sep)


def walk(
    jail: Jail,
    pattern: str,
    *,
    max_entries: int | None = None,
    max_seconds: float | None = None,
    listed: Listing | None = None,
    started: float | None = None,
) -> WalkResult:
    """Every file under ``jail.root`` matching ``pattern``, within the walk bounds (see module
    docstring). Raises ``ToolError`` for a pattern that leaves the jail. ``listed``: a native
    walk's ``Listing``, which stands in for the walk where it covers the folder the walk
    visits whole (``whole_folder``) within the entry bound; else the folder is walked here.
    ``started``: when the time bound began (``time.monotonic()``; now by default) — a caller
    that waited for the listing counts that wait in the bound."""
    limit = MAX_ENTRIES if max_entries is None else max_entries
    seconds = MAX_SECONDS if max_seconds is None else max_seconds
    started = time.monotonic() if started is None else started
    deadline = started + seconds
    pat = normalise_pattern(jail, pattern)
    if (listed is not None and listed.visited <= limit
            and whole_folder(jail, pat) == listed.top):
        return _from_listing(jail, pat, listed, limit, seconds, deadline)
    # A list while one folder is walked (each file is met once: no symlinked folder is
    # entered); several prefixes may overlap, so their union is deduplicated at the end.
    found: list[str] = []
    add = found.append
    visited = 0
    stopped: str | None = None
    newline = False
    whole = True  # every entry below one folder visited (no depth limit, one prefix)
    # Group plans by prefix so each folder is walked once however many braces expanded.
    by_prefix: dict[str, list[_Plan]] = {}
    for plan in _plans(pat):
        by_prefix.setdefault(plan.prefix, []).append(plan)
    for prefix in sorted(by_prefix):
        plans = by_prefix[prefix]
        if prefix:
            top = jail.resolve(prefix)  # refuses a literal prefix that symlinks out of the root
            if not os.path.isdir(top.real):
                continue
            start = os.path.join(jail.root, prefix)
        else:
            start = jail.root
        matchers = [_Matcher(p.rest) for p in plans]
        depths = [p.max_depth for p in plans]
        max_depth = (
            None if any(d is None for d in depths) else max(d for d in depths if d is not None)
        )
        whole = whole and max_depth is None and len(by_prefix) == 1
        base = prefix + "/" if prefix else ""
        single = matchers[0].match if len(matchers) == 1 else None  # the usual case, no generator
        # Depth-first with an explicit stack: (absolute dir, rel-below-prefix dir, depth).
        stack: list[tuple[str, str, int]] = [(start, "", 1)]
        while stack and stopped is None:
            directory, rel_dir, depth = stack.pop()
            try:
                it = os.scandir(directory)
            except OSError:
                continue
            with it:
                for entry in it:
                    visited += 1
                    if visited > limit:
                        visited = limit
                        stopped = "entries"
                        break
                    if not visited & 255 and time.monotonic() > deadline:
                        stopped = "time"
                        break
                    name = entry.name
                    if "\n" in name:
                        newline = True
                    rel = rel_dir + name
                    try:
                        # Most entries are regular files: one d_type test settles them (and
                        # that they are no symlink) before the rarer cases.
                        regular = entry.is_file(follow_symlinks=False)
                        if not regular:
                            if entry.is_dir(follow_symlinks=False):
                                if name in VCS_DIRS:
                                    continue
                                if max_depth is None or depth < max_depth:
                                    stack.append((entry.path, rel + "/", depth + 1))
                                continue
                            if not entry.is_file():  # symlinked dirs, sockets, dangling links
                                continue
                    except OSError:
                        continue
                    if not _wanted(single, matchers, rel, name):
                        continue
                    if not regular and not _inside(jail, os.path.realpath(entry.path)):
                        continue
                    add(base + rel)
            if stopped is None and time.monotonic() > deadline:
                stopped = "time"
        if stopped is not None:
            break
    return WalkResult(
        paths=sorted(set(found) if len(by_prefix) > 1 else found),
        visited=visited,
        stopped=stopped,
        max_entries=limit,
        max_seconds=seconds,
        deadline=deadline,
        newline_names=newline if whole and stopped is None else None,
    )
