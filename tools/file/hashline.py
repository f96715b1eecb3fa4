"""The hashline patch grammar: patch text → sections of ops. Pure; nothing here reads a file.

Grammar (spec kli-tools.txt, ``edit``), one construct per patch line::

    @@ PATH          section header; one or more sections per patch
    + LINE:HH        insert the following payload after the anchored line
    +                insert the payload at the end of the file (bare +)
    < LINE:HH        insert the following payload before the anchored line
    <                insert the payload at the beginning of the file (bare <)
    - A:HH..B:HH     delete the inclusive line range
    = A:HH..B:HH     replace the range with the payload; no payload deletes the range
    ~content         a payload line: everything after ``~`` is verbatim

Decisions where the spec is silent (each has a fixture under tests/fixtures/hashline/):

- A single-line range may be written ``A:HH`` alone: ``- 5:ab`` means ``- 5:ab..5:ab`` (the
  form is unambiguous, and models write it).
- The space after a marker is optional (``+5:ab`` = ``+ 5:ab``); hex digits may be upper case.
- The patch's own line endings are not content: one trailing ``\\r`` is dropped from every patch
  line. The target file's line-ending style decides how payload lines are written.
- Blank lines between ops and sections are ignored. A blank line *inside* a payload (between
  two ``~`` lines of one op) is an error, since an empty payload line is written ``~``.
- Markers must start in column 1. An indented marker or payload line is an error that says so.
- ``+`` and ``<`` need at least one payload line; ``-`` takes none.
- Two sections naming the same file are one file's ops (the planner merges them).

Errors are ``PatchSyntaxError``: the message names the patch line and what was expected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Op kinds. Inserts name a gap between lines; ranges name inclusive line spans.
INSERT_AFTER = "insert_after"  # + LINE:HH
APPEND = "append"  # bare +
INSERT_BEFORE = "insert_before"  # < LINE:HH
PREPEND = "prepend"  # bare <
DELETE = "delete"  # - A:HH..B:HH
REPLACE = "replace"  # = A:HH..B:HH

RANGE_KINDS = (DELETE, REPLACE)
INSERT_KINDS = (INSERT_AFTER, APPEND, INSERT_BEFORE, PREPEND)

_ANCHOR = re.compile(r"([0-9]+):([0-9A-Fa-f]{2})")
_MARKERS = "+<-="
_EXAMPLE = {"+": "+ 12:3f", "<": "< 12:3f", "-": "- 12:3f..14:a0", "=": "= 12:3f..14:a0"}


class PatchSyntaxError(ValueError):
    """The patch text does not follow the grammar. ``line`` is the 1-based patch line."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"patch line {line}: {message}")
        self.line = line


@dataclass(frozen=True)
class Anchor:
    line: int
    hash: str

    def __str__(self) -> str:
        return f"{self.line}:{self.hash}"


@dataclass(frozen=True)
class Op:
    """One op of a section. ``start``/``end`` are the anchors (equal for single-anchor ops,
    both None for bare ``+``/``<``). ``patch_line`` is where the op's marker stands."""

    kind: str
    start: Anchor | None
    end: Anchor | None
    payload: tuple[str, ...]
    patch_line: int

    @property
    def marker(self) -> str:
        """The op as the model wrote it (normalised), e.g. ``= 5:ab..7:cd``."""
        sign = {
            INSERT_AFTER: "+",
            APPEND: "+",
            INSERT_BEFORE: "<",
            PREPEND: "<",
            DELETE: "-",
            REPLACE: "=",
        }[self.kind]
        if self.start is None:
            return sign
        if self.kind in RANGE_KINDS:
            return f"{sign} {self.start}..{self.end}"
        return f"{sign} {self.start}"


@dataclass
class Section:
    path: str
    patch_line: int
    ops: list[Op] = field(default_factory=list)


@dataclass(frozen=True)
class Patch:
    sections: tuple[Section, ...]


def _anchor(text: str, line: int, marker: str) -> Anchor:
    m = _ANCHOR.fullmatch(text)
    if m:
        number = int(m.group(1))
        if number < 1:
            raise PatchSyntaxError(line, f"anchor '{text}' names line 0; lines count from 1.")
        return Anchor(number, m.group(2).lower())
    if re.fullmatch(r"[0-9]+", text):
        raise PatchSyntaxError(
            line,
            f"anchor '{text}' has no hash; write LINE:HH exactly as read shows it "
            f"(e.g. '{text}:3f'), expected like '{_EXAMPLE[marker]}'.",
        )
    if "|" in text:
        raise PatchSyntaxError(
            line,
            f"anchor '{text}' includes line content; write only LINE:HH (the part before '|'), "
            f"expected like '{_EXAMPLE[marker]}'.",
        )
    raise PatchSyntaxError(
        line,
        f"expected an anchor LINE:HH (two hex digits), got '{text}'; "
        f"expected like '{_EXAMPLE[marker]}'.",
    )


def _op(marker: str, rest: str, line: int) -> Op:
    if marker in "+<":
        if rest == "":
            return Op(APPEND if marker == "+" else PREPEND, None, None, (), line)
        if ".." in rest:
            raise PatchSyntaxError(
                line,
                f"'{marker}' takes one anchor, not a range; expected like '{_EXAMPLE[marker]}' "
                f"(use '=' to replace a range).",
            )
        a = _anchor(rest, line, marker)
        return Op(INSERT_AFTER if marker == "+" else INSERT_BEFORE, a, a, (), line)
    if rest == "":
        raise PatchSyntaxError(
            line,
            f"'{marker}' needs a line range; expected like '{_EXAMPLE[marker]}' "
            f"(or '{marker} 12:3f' for one line).",
        )
    if ".." in rest:
        left, _, right = rest.partition("..")
        a = _anchor(left.strip(), line, marker)
        b = _anchor(right.strip(), line, marker)
        if b.line < a.line:
            raise PatchSyntaxError(
                line, f"range {a}..{b} ends before it starts; write the lower line first."
            )
    else:
        a = b = _anchor(rest, line, marker)
    return Op(DELETE if marker == "-" else REPLACE, a, b, (), line)


def parse(text: str) -> Patch:
    """Parse patch ``text`` into sections. Raises ``PatchSyntaxError`` at the first problem."""
    sections: list[Section] = []
    current: Section | None = None
    op: Op | None = None  # the op whose payload is being collected
    payload: list[str] = []
    blank_after_payload: int | None = None

    def close_op() -> None:
        nonlocal op, payload
        if op is None:
            return
        if op.kind in INSERT_KINDS and not payload:
            raise PatchSyntaxError(
                op.patch_line,
                f"'{op.marker}' inserts nothing; follow it with payload lines like '~text'.",
            )
        assert current is not None
        current.ops.append(Op(op.kind, op.start, op.end, tuple(payload), op.patch_line))
        op, payload = None, []

    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, raw in enumerate(lines, 1):
        line = raw[:-1] if raw.endswith("\r") else raw
        if line.startswith("~"):
            if op is None:
                raise PatchSyntaxError(
                    number,
                    "payload line '~…' with no op before it; expected an op "
                    "('+ LINE:HH', '< LINE:HH', '= A:HH..B:HH', bare '+' or '<') first.",
                )
            if op.kind == DELETE:
                raise PatchSyntaxError(
                    number,
                    f"'{op.marker}' deletes and takes no payload; "
                    "use '=' to replace the range with payload lines.",
                )
            if blank_after_payload is not None:
                raise PatchSyntaxError(
                    blank_after_payload,
                    "blank line inside a payload; write an empty payload "
                    "line as '~' (every payload line starts with ~).",
                )
            payload.append(line[1:])
            continue
        if line.strip() == "":
            if op is not None and payload:
                blank_after_payload = number
            continue
        blank_after_payload = None
        stripped = line.lstrip()
        if stripped != line and (stripped[0] in _MARKERS + "~" or stripped.startswith("@@")):
            what = "payload line" if stripped[0] == "~" else "marker"
            raise PatchSyntaxError(
                number,
                f"{what} indented by mistake; '{stripped[:20]}' must start in column 1 "
                "(indentation of code goes after the ~, e.g. '~    return x').",
            )
        if line.startswith("@@"):
            close_op()
            path = line[2:].strip()
            if path.endswith("@@"):
                path = path[:-2].strip()
            if not path:
                raise PatchSyntaxError(number, "section header without a path; expected '@@ PATH'.")
            if current is not None and not current.ops:
                raise PatchSyntaxError(
                    current.patch_line,
                    f"section '@@ {current.path}' has no ops; expected "
                    "an op such as '= 12:3f..14:a0' after the header.",
                )
            current = Section(path, number)
            sections.append(current)
            continue
        if line[0] in _MARKERS:
            close_op()
            if current is None:
                raise PatchSyntaxError(
                    number, f"op '{line[:20]}' before any section header; expected '@@ PATH' first."
                )
            marker, rest = line[0], line[1:].strip()
            if rest[:1] in _MARKERS and rest[:1] != "":
                raise PatchSyntaxError(
                    number,
                    f"unknown marker '{line[:2]}'; expected one of +, <, -, = "
                    "followed by an anchor.",
                )
            op = _op(marker, rest, number)
            continue
        if op is not None and op.kind != DELETE:
            raise PatchSyntaxError(
                number,
                f"payload line without '~': '{line[:40]}'; every payload line starts "
                f"with ~ (write '~{line[:40]}').",
            )
        raise PatchSyntaxError(
            number, f"expected '@@ PATH', an op (+ < - =) or a '~' payload line, got '{line[:40]}'."
        )
    close_op()
    if not sections:
        raise PatchSyntaxError(1, "empty patch; expected '@@ PATH' followed by ops.")
    if not sections[-1].ops:
        raise PatchSyntaxError(
            sections[-1].patch_line,
            f"section '@@ {sections[-1].path}' has no ops; expected an "
            "op such as '= 12:3f..14:a0' after the header.",
        )
    return Patch(tuple(sections))
