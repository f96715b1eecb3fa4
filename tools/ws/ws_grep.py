"""ws_grep — regular-expression search over file contents, line by line.

The spec's engine is RE2; ours is Python's ``re`` syntax standing in for it (RE2 syntax — classes,
``\\b``, ``(?i)``, alternation, anchors — means the same; ``re`` additionally accepts
look-around and back-references). Matching runs on the ``regex`` package with a time bound
(``kli.tools.core.rx``): RE2 never backtracks, ``re`` can for minutes, so a pattern that runs
out of time stops the search with a partial result saying how to retry. A pattern that does not compile is searched as a literal
substring and the result says so, rather than failing. ``glob=`` and ``path=`` narrow the
files; at most ``GREP_MAX_HITS`` (50) hits are returned and the cap is announced.

The native first pass (``kli.tools.file.firstpass``: kli-scan, else rg) runs alongside: once it has finished, files it read whole with
no candidate line are skipped unread; until then (and without rg) files are read as before, in
order, so a search that reaches the cap early never waits for rg. ``details.engine`` says
whether rg's pass was used ("rg+python") or not ("python", with ``engine_note`` saying why).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from typing import Any

from kli.tools.core import rx as rx_mod
from kli.tools.core.registry import GATE_READ, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.textfile import TooLarge, read_text
from kli.tools.file.firstpass import Answer, FirstPass
from kli.tools.file.firstpass.rust_regex import translate
from kli.tools.file.search import _FileHits, match_lines
from kli.tools.file.walk import top as walk_top
from kli.tools.file.walk import walk
from kli.tools.ws.common import compact_json
from kli.tools.ws.ws_glob import drop_skipped, join_pattern

GREP_MAX_HITS = 50
# A hit line longer than this is shown cut around the match.
HIT_LINE_CHARS = 240
# Files larger than this are skipped (and counted), so one log file cannot stall a search.
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_SECONDS = 10.0
# Files searched here while rg's pass runs, before waiting for it.
PRE_RG_FILES = 2000

DESCRIPTION = """Search file contents for a regular expression; returns `path:line: text` hits.
Parameters: pattern (Python `re` syntax, standing in for RE2: \\b, \\d, [a-z], a|b, ^, $ …),
path (a folder or one file; default the project root), glob (only files whose name matches,
e.g. "*.py", or a path glob like "src/**/*.ts"), ignore_case (default false).
If the pattern is not a valid regex it is searched as plain text and the result says so.
At most 50 hits are returned (the cap is announced: narrow with path= or glob=). Skips binary
files, .git and dependency/cache folders. Then ws_read {"path": …, "offset": line} to see a hit
in context."""


def _compile(pattern: str, ignore_case: bool) -> tuple[rx_mod.Pattern, str | None]:
    flags = rx_mod.IGNORECASE if ignore_case else 0
    try:
        return rx_mod.compile(pattern, flags), None
    except rx_mod.error as exc:
        return rx_mod.compile(rx_mod.escape(pattern), flags), str(exc)


def _matches_empty(regex: rx_mod.Pattern) -> bool:
    try:
        return regex.search("", timeout=1.0) is not None
    except TimeoutError:
        return True


def _clip(line: str, m: Any) -> str:
    line = line.rstrip("\r")
    if len(line) <= HIT_LINE_CHARS:
        return line
    start = max(0, m.start() - HIT_LINE_CHARS // 3)
    piece = line[start : start + HIT_LINE_CHARS]
    return ("…" if start else "") + piece + ("…" if start + HIT_LINE_CHARS < len(line) else "")


def _files(
    call: Call, base: str | None, glob: str | None, first: FirstPass
) -> tuple[list[str], list[str], str, bool]:
    """(root-relative files to search, notes, the pattern walked, whether rg's log can be
    trusted: ``WalkResult.newline_names`` False). ``first`` is started just before the walk
    (``walk.top``'s answer) and may list the folder for it (``FirstPass.listing``)."""
    jail = call.ws.jail
    if base:
        resolved = jail.resolve(base)
        if not os.path.exists(resolved.real):
            raise ToolError(
                f"ws_grep: path {resolved.rel} does not exist. Check it with ws_list, or leave "
                "path out to search the whole project.",
                error="not_found",
            )
        if os.path.isfile(resolved.real):
            return [resolved.rel], [], resolved.rel, False
        base = resolved.rel
    if glob:
        sub = glob if "/" in glob else "**/" + glob
    else:
        sub = "**"
    # A path glob already starting with path= is taken as root-relative ("src/**/*.py").
    full = sub if base and sub.startswith(base.rstrip("/") + "/") else join_pattern(base, sub)
    began = time.monotonic()
    first.start(*walk_top(jail, full))
    found = walk(jail, full, listed=first.listing(full, began), started=began)
    paths = drop_skipped(found.paths, full)
    notes = [f"[{found.stop_note()}]"] if found.stopped else []
    return paths, notes, full, found.newline_names is False


def _run(call: Call) -> ToolResult:
    pattern = call.args["pattern"]
    if pattern == "":
        raise ToolError(
            "ws_grep: pattern is empty; give the text or regex to search for, e.g. "
            '{"pattern": "def main"}.',
            error="bad_arguments",
        )
    ignore_case = call.args.get("ignore_case") is True
    regex, compile_error = _compile(pattern, ignore_case)
    # Whole-file prefilter: with MULTILINE every line match is also a match in the whole text
    # (^ and $ at line ends), so a file it rejects has no hit. \A and \Z mean line ends per
    # line but text ends here, so such patterns go line by line.
    prefilter = (
        None
        if "\\A" in regex.pattern or "\\Z" in regex.pattern
        else rx_mod.compile(regex.pattern, regex.flags | rx_mod.MULTILINE)
    )
    # Without the prefilter the lines are ``text.split("\n")``: an empty file, or a final
    # newline, gives one more, empty, line that rg never sees. When the pattern can match an
    # empty line, rg's count of 0 cannot rule such a file out.
    empty_line_hits = prefilter is None and _matches_empty(regex)
    # The first pass (firstpass): started before the walk, it tells which files can hold a hit
    # (its pattern matches every line this one does, maybe more), and which are text with none.
    first_pass = FirstPass(
        call.ws.jail,
        translate(regex.pattern, rx_mod.IGNORECASE if ignore_case else 0),
        MAX_FILE_BYTES,
    )
    try:
        paths, notes, walked, trust_log = _files(
            call, call.args.get("path"), call.args.get("glob"), first_pass
        )
    except BaseException:
        first_pass.cancel()
        raise
    first: Answer | None = None
    counts: dict[str, int] | None = None
    if notes:  # the walk hit its bound
        first_pass.walk_stopped()
    hits: list[str] = []
    more = False
    files_with_hits = 0
    skipped_large = 0
    deadline = time.monotonic() + MAX_SECONDS
    timed_out = False
    pattern_timeout: str | None = None
    clock = time.monotonic
    root = call.ws.root.rstrip("/") + "/"
    for index, rel in enumerate(paths):
        if clock() > deadline:
            timed_out = True
            break
        if index & 15 == 0 and first_pass.pending and (
            index >= PRE_RG_FILES or first_pass.done()
        ):
            # The first files are searched in order meanwhile, so a search that reaches the
            # hit cap early never waits for rg's whole pass; past them it waits for rg rather
            # than read every file twice.
            first = first_pass.finish(deadline, trust_log=trust_log)
            counts = first.counts.lines if first is not None else None
        real = root + rel
        if counts is not None:
            rg_count = counts.get(rel, -1)
            if rg_count == 0 and not empty_line_hits:  # text rg read whole: no line can hit
                continue
            if rg_count == -1:  # not read whole by rg: binary, too large, a symlink, …
                assert first is not None
                verdict = first.verdict(rel)
                if verdict == "binary":
                    continue
                if verdict == "large":
                    skipped_large += 1
                    continue
        try:
            text = read_text(real, call.ws.jail, limit=MAX_FILE_BYTES).text
        except TooLarge:
            skipped_large += 1
            continue
        except OSError:  # binary (NotText), not a regular file, unreadable
            continue
        before = len(hits)
        try:
            candidates: Iterable[int]
            if prefilter is not None:
                # The lines the MULTILINE pattern matches, found in one pass over the whole
                # text (a timed match call per line would cost ~10x); each is confirmed below.
                found = _FileHits()
                match_lines(prefilter, text, 0, found, GREP_MAX_HITS + 1, deadline,
                            count_all=False)
                if not found.count:
                    continue
                candidates = found.hits
            else:
                candidates = range(text.count("\n") + 1)
            lines = text.split("\n")
            for i in candidates:
                line = lines[i]
                m = regex.search(line, timeout=rx_mod.budget(deadline, clock()))
                if m is None:
                    continue
                if len(hits) >= GREP_MAX_HITS:
                    more = True
                    break
                hits.append(f"{rel}:{i + 1}: {_clip(line, m)}")
        except TimeoutError:
            pattern_timeout = rel
        files_with_hits += len(hits) > before
        if more or pattern_timeout is not None:
            break
    first_pass.close()  # the search may have ended before the first pass did
    why = first_pass.note
    program = first.counts.program if first is not None else None  # details.engine_pass
    head: list[str] = []
    if compile_error is not None:
        head.append(
            f"[pattern is not a valid regular expression ({compile_error}); searched for it as "
            "a literal string instead]"
        )
    if skipped_large:
        notes.append(
            f"[skipped {skipped_large} file(s) larger than {MAX_FILE_BYTES // (1024 * 1024)} MB]"
        )
    if pattern_timeout is not None:
        notes.append(rx_mod.timeout_note(MAX_SECONDS, pattern_timeout))
    elif timed_out:
        notes.append(
            f"[search stopped after {MAX_SECONDS:g}s; results are partial — narrow with path= or glob=]"
        )
    if not hits:
        where = call.args.get("path") or "the project"
        text = f"(no matches for {pattern!r} in {where}"
        text += f", files matching {call.args['glob']!r})" if call.args.get("glob") else ")"
        if compile_error is None and not call.args.get("ignore_case"):
            text += f" — try ignore_case, or a shorter pattern; ws_glob {compact_json({'pattern': walked})} lists the files searched"
        return ToolResult.success(
            "\n".join([*head, text, *notes]), count=0, literal=compile_error is not None,
            engine="rg+python" if counts is not None else "python", engine_note=why,
            engine_pass=program,
        )
    if more:
        notes.append(
            f"[{GREP_MAX_HITS}-hit cap reached: showing the first {GREP_MAX_HITS} hits; more matches exist — "
            "narrow with path=, glob= or a more specific pattern]"
        )
    return ToolResult.success(
        "\n".join([*head, *hits, *notes]),
        count=len(hits),
        capped=more,
        literal=compile_error is not None,
        files_with_hits=files_with_hits,
        engine="rg+python" if counts is not None else "python",
        engine_note=why,
        engine_pass=program,
    )


TOOL = Tool(
    name="ws_grep",
    profile="slmcode",
    gate=GATE_READ,
    description=DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression (Python re / RE2)."},
            "path": {"type": "string", "description": "Folder or file to search (default root)."},
            "glob": {"type": "string", "description": 'Only files matching, e.g. "*.py".'},
            "ignore_case": {"type": "boolean", "description": "Case-insensitive search."},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
    run=_run,
    main_arg="pattern",
    aliases={
        "regex": "pattern",
        "query": "pattern",
        "include": "glob",
        "dir": "path",
        "file": "path",
        "case_insensitive": "ignore_case",
        "i": "ignore_case",
    },
    touches_image=False,
)
