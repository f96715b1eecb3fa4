"""Python delimiter balance: ``()[]{}`` outside strings and comments, then a compile check.

Strings: any prefix (``r b u f`` and pairs), single and triple quotes, backslash escapes; in
f-strings the ``{…}`` replacement fields are scanned as code (so nested quotes and brackets of
Python 3.12 count correctly) and ``{{``/``}}`` are literal braces. ``#`` comments run to the end
of the line. An unterminated single-quoted string ends at its line (and makes the text
unrepairable: no repair guesses where a string was meant to end).
"""

from __future__ import annotations

import ast
import re
import warnings

from kli.tools.core.pysyntax import compile_error
from kli.tools.file.repair.common import Fix, Layout, Opener, Scan, standard_fixes

EXTENSIONS: tuple[str, ...] = (".py",)
NAME = "python"

_CLOSER = {"(": ")", "[": "]", "{": "}"}
_OPENER = {v: k for k, v in _CLOSER.items()}
# One character class: the regex engine skips plain code at C speed; string prefixes are
# checked by looking back from the quote (a lookbehind in the pattern made every position a
# match attempt, ~4× slower).
_TOKEN = re.compile(r"""[()\[\]{}#'"]""")
_PREFIX_CHARS = "rRbBuUfF"
_END = {
    "'": re.compile(r"(?:[^'\\\n]|\\(?:.|\n))*'"),
    '"': re.compile(r'(?:[^"\\\n]|\\(?:.|\n))*"'),
    "'''": re.compile(r"(?:[^\\]|\\.)*?'''", re.S),
    '"""': re.compile(r'(?:[^\\]|\\.)*?"""', re.S),
}
_LINE_REST = {
    "'": re.compile(r"(?:[^'\\\n]|\\(?:.|\n))*"),
    '"': re.compile(r'(?:[^"\\\n]|\\(?:.|\n))*'),
}
_F_MARK = "f{"


def _fbody(text: str, i: int, quote: str) -> tuple[int, str]:
    """Scan an f-string body from ``i``: ``(offset, event)`` where event is ``end`` (offset is
    after the closing quote), ``expr`` (offset is after a replacement field's ``{``) or
    ``unterminated``."""
    n = len(text)
    triple = len(quote) == 3
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
        elif c == "{":
            if text.startswith("{{", i):
                i += 2
            else:
                return i + 1, "expr"
        elif c == "}":
            i += 2 if text.startswith("}}", i) else 1
        elif text.startswith(quote, i):
            return i + len(quote), "end"
        elif c == "\n" and not triple:
            return i, "unterminated"
        else:
            i += 1
    return n, "unterminated"


def scan(text: str) -> Scan:
    # stack entries: an Opener, or an f-string field marker Opener(offset, "f{", quote)
    stack: list[Opener] = []
    stray: list[int] = []
    early: list[tuple[int, Opener]] = []
    spans: list[tuple[int, int]] = []
    comments: list[int] = []
    unterminated: tuple[int, str] | None = None
    n = len(text)
    i = 0

    def string_done(start: int, end: int) -> None:
        if "\n" in text[start:end]:
            spans.append((start, end))

    while i < n:
        m = _TOKEN.search(text, i)
        if m is None:
            break
        at = m.start()
        i = m.end()
        c = m.group()
        kind = (
            "open" if c in "([{" else "close" if c in ")]}" else "comment" if c == "#" else "quote"
        )
        if kind == "open":
            stack.append(Opener(at, c, _CLOSER[c]))
        elif kind == "close":
            if stack and stack[-1].char == _F_MARK:
                if c == "}":
                    field = stack.pop()
                    end, event = _fbody(text, i, field.closer)
                    if event == "expr":
                        stack.append(Opener(end - 1, _F_MARK, field.closer))
                    elif event == "unterminated":
                        unterminated = (field.offset, "f-string")
                        if len(field.closer) == 3:
                            break
                    i = end
                else:
                    stray.append(at)
                continue
            if stack and stack[-1].char == _OPENER[c]:
                stack.pop()
                continue
            depth = None
            for k in range(len(stack) - 1, -1, -1):
                if stack[k].char == _F_MARK:
                    break
                if stack[k].char == _OPENER[c]:
                    depth = k
                    break
            if depth is None:
                stray.append(at)
            else:
                for opener in reversed(stack[depth + 1 :]):
                    early.append((at, opener))
                del stack[depth:]
        elif kind == "comment":
            comments.append(at)
            nl = text.find("\n", i)
            i = n if nl == -1 else nl
        else:
            quote = c * 3 if text.startswith(c * 3, at) else c
            i = at + len(quote)
            j = at
            while j > 0 and at - j < 2 and text[j - 1] in _PREFIX_CHARS:
                j -= 1
            if j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_"):
                j = at  # letters ending an identifier, not a string prefix
            prefix = text[j:at].lower()
            start = j
            if "f" in prefix:
                end, event = _fbody(text, i, quote)
                if event == "expr":
                    stack.append(Opener(end - 1, _F_MARK, quote))
                elif event == "unterminated":
                    unterminated = unterminated or (start, "string")
                    if len(quote) == 3:
                        break
                else:
                    string_done(start, end)
                i = end
                continue
            found = _END[quote].match(text, i)
            if found is None:
                unterminated = unterminated or (start, "string")
                if len(quote) == 3:
                    break
                rest = _LINE_REST[quote].match(text, i)
                i = rest.end() if rest else n
                continue
            i = found.end()
            string_done(start, i)
    unclosed = [o for o in stack if o.char != _F_MARK]
    if any(o.char == _F_MARK for o in stack) and unterminated is None:
        first = next(o for o in stack if o.char == _F_MARK)
        unterminated = (first.offset, "f-string replacement field")
    return Scan(
        unclosed=tuple(unclosed),
        stray=tuple(stray),
        early=tuple(early),
        unterminated=unterminated,
        spans=tuple(spans),
        comments=tuple(comments),
    )


def _base(layout: Layout, opener: Opener) -> int:
    # A bracketed expression ends before the next line indented no deeper than its statement.
    return layout.indent(layout.index.line_of(opener.offset))


# A compound statement's header: a bracket left open on it closes before its final colon.
_HEADER = re.compile(
    r"[ \t]*(?:async[ \t]+)?(?:def|class|if|elif|while|for|with|except|match|case)\b"
)


def _on_header(layout: Layout, opener: Opener) -> int | None:
    """``def f(x:`` / ``if g(y:`` — the closer goes before the header's colon."""
    line = layout.index.line_of(opener.offset)
    if not _HEADER.match(layout.text, layout.index.start(line)):
        return None
    end = layout.code_end(line)
    if end is not None and end - 1 > opener.offset and layout.text[end - 1] == ":":
        return end - 1
    return None


def fixes(text: str, result: Scan) -> list[Fix] | None:
    return standard_fixes(text, result, _base, place=_on_header)


def _parse(text: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


def parse_error(text: str) -> str | None:
    """The compiler's message (with line and column) when ``text`` is not valid Python, or None
    (the shared check, ``core.pysyntax.compile_error``)."""
    error = compile_error(text)
    if error is None:
        return None
    if not error.syntax:
        return error.msg
    where = f"line {error.lineno}, column {error.offset}" if error.lineno else "unknown position"
    return f"{error.msg} ({where})"


def form_count(text: str) -> int | None:
    """Top-level statements, or None when ``text`` does not parse."""
    try:
        return len(_parse(text).body)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
