"""Common Lisp delimiter balance: parentheses, honouring the reader's syntax.

Skipped while counting: ``"strings"`` (with ``\\`` escapes), ``;`` line comments, nested
``#| … |#`` block comments, character literals (``#\\(`` is a character, not a paren),
``|multiple escape|`` symbols and single ``\\`` escapes. Brackets and braces are constituents in
Common Lisp, not delimiters. Top-level forms are counted as parenthesised forms at depth 0.

Repair: ``common.standard_fixes`` (missing closers by indentation), except that an unmatched
``)`` is traced back to a ``)`` that closed a form early (see ``_premature``).
"""

from __future__ import annotations

import re

from kli.tools.file.repair.common import Fix, Layout, Opener, Scan, describe, standard_fixes

EXTENSIONS: tuple[str, ...] = (".lisp", ".asd", ".cl", ".lsp")
NAME = "commonlisp"

_TOKEN = re.compile(r'#\||#\\|[()";|\\]')
_STRING_END = re.compile(r'(?:[^"\\]|\\.)*"', re.S)
_BAR_END = re.compile(r"(?:[^|\\]|\\.)*\|", re.S)
_BLOCK = re.compile(r"#\||\|#")


def scan(text: str, *, pairs: list[tuple[int, int]] | None = None) -> Scan:
    """Scan ``text``; when ``pairs`` is a list, append ``(closer, opener)`` offsets to it."""
    stack: list[Opener] = []
    stray: list[int] = []
    spans: list[tuple[int, int]] = []
    comments: list[int] = []
    forms = 0
    unterminated: tuple[int, str] | None = None
    i = 0
    n = len(text)
    while i < n:
        m = _TOKEN.search(text, i)
        if m is None:
            break
        tok, at = m.group(), m.start()
        i = m.end()
        if tok == "(":
            if not stack:
                forms += 1
            stack.append(Opener(at, "(", ")"))
        elif tok == ")":
            if stack:
                opener = stack.pop()
                if pairs is not None:
                    pairs.append((at, opener.offset))
            else:
                stray.append(at)
        elif tok == ";":
            comments.append(at)
            nl = text.find("\n", i)
            i = n if nl == -1 else nl
        elif tok == '"' or tok == "|":
            end = (_STRING_END if tok == '"' else _BAR_END).match(text, i)
            if end is None:
                unterminated = (at, "string" if tok == '"' else "|symbol|")
                break
            i = end.end()
            if "\n" in text[at:i]:
                spans.append((at, i))
        elif tok == "#|":
            depth = 1
            while depth:
                b = _BLOCK.search(text, i)
                if b is None:
                    break
                depth += 1 if b.group() == "#|" else -1
                i = b.end()
            if depth:
                unterminated = (at, "#| block comment")
                break
            spans.append((at, i))
        elif tok == "#\\":
            i = min(i + 1, n)  # the character itself, whatever it is
        else:  # a single escape: the next character is a constituent
            i = min(i + 1, n)
    return Scan(
        unclosed=tuple(stack),
        stray=tuple(stray),
        unterminated=unterminated,
        spans=tuple(spans),
        comments=tuple(comments),
        forms=forms,
    )


def _base(layout: Layout, opener: Opener) -> int:
    # A Lisp form's body is indented past its opening paren's column.
    return opener.offset - layout.index.start(layout.index.line_of(opener.offset))


def _premature(text: str, result: Scan) -> list[Fix]:
    """For each unmatched ')', the ')' that more likely is the extra one: an earlier ')' ending
    its line and closing a form that the next code line is still indented inside — the form
    was closed early and the unmatched ')' at the end is the one it was meant to be."""
    pairs: list[tuple[int, int]] = []
    scan(text, pairs=pairs)
    layout = Layout(text, result)
    index = layout.index
    used: set[int] = set()
    out: list[Fix] = []
    for seq, stray in enumerate(result.stray):
        chosen = stray
        stray_line = index.line_of(stray)
        for closer, opener in reversed(pairs):
            if closer > stray or closer in used:
                continue
            line = index.line_of(closer)
            if layout.code_end(line) != closer + 1:
                continue
            nxt = next((n for n in range(line + 1, stray_line + 1) if layout.starts_code(n)), None)
            column = opener - index.start(index.line_of(opener))
            if nxt is not None and layout.indent(nxt) > column:
                chosen = closer
                break
        used.add(chosen)
        note = (
            "removed unmatched ')'"
            if chosen == stray
            else f"removed ')' that closed the '(' at {describe(text, pairs_opener(pairs, chosen))} "
            "early (the next line is indented inside it)"
        )
        out.append(Fix(chosen, seq, remove=1, note=note))
    return out


def pairs_opener(pairs: list[tuple[int, int]], closer: int) -> int:
    return next(o for c, o in pairs if c == closer)


def fixes(text: str, result: Scan) -> list[Fix] | None:
    if result.unterminated is not None:
        return None
    if not result.stray:
        return standard_fixes(text, result, _base)
    removals = _premature(text, result)
    rest = standard_fixes(
        text, Scan(unclosed=result.unclosed, spans=result.spans, comments=result.comments), _base
    )
    return removals + [
        Fix(f.offset, f.seq + len(removals), f.insert, f.remove, f.note) for f in rest or []
    ]


def parse_error(text: str) -> str | None:
    """Why ``text`` would not read as balanced forms, or None."""
    result = scan(text)
    if result.unterminated is not None:
        at, kind = result.unterminated
        return f"unterminated {kind} starting at {describe(text, at)}"
    if result.stray:
        return f"unmatched ')' at {describe(text, result.stray[0])}"
    if result.unclosed:
        return f"'(' at {describe(text, result.unclosed[-1].offset)} is never closed"
    return None


def form_count(text: str) -> int | None:
    result = scan(text)
    return result.forms if result.balanced else None
