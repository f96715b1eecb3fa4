"""Common Lisp delimiter balance: parentheses, honouring the reader's syntax.

Skipped while counting: ``"strings"`` (with ``\\`` escapes), ``;`` line comments, nested
``#| … |#`` block comments, character literals (``#\\(`` is a character, not a paren),
``|multiple escape|`` symbols and single ``\\`` escapes. Brackets and braces are constituents in
Common Lisp, not delimiters. Top-level forms are counted as parenthesised forms at depth 0.
"""

from __future__ import annotations

import re

from kli.tools.file.repair.common import Fix, Layout, Opener, Scan, standard_fixes

EXTENSIONS = (".lisp", ".asd", ".cl", ".lsp")
NAME = "commonlisp"

_TOKEN = re.compile(r'#\||#\\|[()";|\\]')
_STRING_END = re.compile(r'(?:[^"\\]|\\.)*"', re.S)
_BAR_END = re.compile(r"(?:[^|\\]|\\.)*\|", re.S)
_BLOCK = re.compile(r"#\||\|#")


def scan(text: str) -> Scan:
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
                stack.pop()
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


def fixes(text: str, result: Scan) -> list[Fix] | None:
    return standard_fixes(text, result, _base)


def parse_error(text: str) -> str | None:
    """Why ``text`` would not read as balanced forms, or None."""
    from kli.tools.file.repair.common import describe

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
