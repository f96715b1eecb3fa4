"""Post-edit syntax checking for ws_write, ws_edit and ws_patch (slmcode spec, "Post-edit
syntax checking").

After a successful write, edit or patch the file's new text gets a file-local parse check:

| extension             | checker                                                      |
|-----------------------|--------------------------------------------------------------|
| .py .pyi              | ``compile()`` in process (the spec's ``python3 -c compile``)  |
| .json                 | ``json.loads`` in process (the spec's ``json.load``)          |
| .js .mjs .cjs         | ``node --check`` on a temporary copy                          |
| .go                   | ``gofmt -e -l`` on a temporary copy                           |
| .ts .tsx .mts .cts    | tree-sitter's TypeScript grammar (beyond the spec: no tsc)    |

A missing runtime is skipped, never read as broken; a timed-out check is skipped too, and so is
a check whose module would be a file of the workspace (``kli.tools.core.imports``: a
``tree_sitter.py`` in the root is never imported; the note says so). External
checkers run on a copy in a temporary folder, so the checked text never touches the workspace
before it is accepted; their programs are found on a ``PATH`` without the workspace's folders
(``programs.trusted_which``: a ``node_modules/.bin/node`` the agent wrote never runs).

Outcomes (``SyntaxOutcome.status``):
- ``ok`` — parses; ``skipped`` — no checker, checker missing, timed out, or disabled;
- ``still_broken`` — did not parse before, does not parse now: written, error appended in-band;
- ``reverted`` — parsed before, does not parse now: NOT written, the EDIT REVERTED message;
- ``broken_new_file`` — a new file that does not parse: written, error appended in-band.

``apply_with_syntax_check`` is the entry a one-file writing tool uses (ws_edit, ws_write): it
decides, writes (or not) under the workspace's file lock, and returns the in-band note.
ws_patch, which writes every file of a patch or none, decides each file with ``check_file``
first and then writes them together (``atomic.write_many``); the messages are the same
(``reverted_message``, ``outcome_note``).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from kli.tools.core import imports
from kli.tools.core.atomic import ANY, write_atomic
from kli.tools.core.programs import trusted_path, trusted_which
from kli.tools.core.pysyntax import compile_error
from kli.tools.core.textfile import encode

if TYPE_CHECKING:
    from kli.tools.core.jail import Resolved
    from kli.tools.core.workspace import Workspace

# Seconds one external check may take before it is skipped (spec: timed out → skipped).
SYNTAX_TIMEOUT = 10.0
TIMED_OUT = "timed out"
NOT_IMPORTED = "its checker was not imported"  # the workspace's file of that name was refused
# Characters of a checker's error message carried into a result.
MAX_ERROR_CHARS = 600

Status = Literal["ok", "skipped", "still_broken", "reverted", "broken_new_file"]


@dataclass(frozen=True)
class SyntaxOutcome:
    """What the post-edit check decided. ``checker`` names the parser used (None when there
    was none); ``message`` is the parser's error, or why the check was skipped."""

    status: Status
    checker: str | None
    message: str

    @property
    def wrote(self) -> bool:
        return self.status != "reverted"


@dataclass(frozen=True)
class Parse:
    """One parse of one text: ``ok`` None means the check could not run (skipped)."""

    ok: bool | None
    checker: str | None
    error: str = ""


class SyntaxChecker(Protocol):
    """The post-edit parse of one text as the contents of ``path`` (slmcode); a program it
    runs is found outside the workspace ``root`` (``programs.trusted_which``). A role
    (``kli.tools.roles``), defined here beside ``Parse``."""

    def __call__(self, path: str, text: str, timeout: float, root: str | None, /) -> Parse: ...


# -- checkers ---------------------------------------------------------------------------------


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + " …"


def _check_python(path: str, text: str, timeout: float, root: str | None) -> Parse:
    error = compile_error(text, os.path.basename(path))
    if error is None:
        return Parse(True, "python compile")
    if not error.syntax:  # ValueError, MemoryError, RecursionError: no position
        return Parse(False, "python compile", _clip(error.msg))
    where = f"line {error.lineno}" + (f", column {error.offset}" if error.offset else "")
    shown = f": {error.line.strip()}" if error.line.strip() else ""
    return Parse(False, "python compile", _clip(f"{error.msg} ({where}){shown}"))


def _check_json(path: str, text: str, timeout: float, root: str | None) -> Parse:
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return Parse(
            False, "json.load", _clip(f"{exc.msg} (line {exc.lineno}, column {exc.colno})")
        )
    except (ValueError, RecursionError) as exc:
        return Parse(False, "json.load", _clip(f"{type(exc).__name__}: {exc}"))
    return Parse(True, "json.load")


def _run_on_copy(
    checker: str, argv: list[str], name: str, text: str, timeout: float, root: str | None
) -> tuple[int | None, str]:
    """Write ``text`` to ``name`` in a temporary folder and run ``argv + [file]``, the program
    found outside the workspace ``root`` (``trusted_which``).

    Returns ``(returncode, output)``; returncode None when the check could not run (missing
    binary or timeout), with the reason as output.
    """
    exe = trusted_which(argv[0], root)
    if exe is None:
        return None, f"{argv[0]} not found"
    with tempfile.TemporaryDirectory(prefix="kli-syntax-") as tmp:
        target = os.path.join(tmp, name)
        with open(target, "wb") as fh:
            fh.write(encode(text))
        try:
            proc = subprocess.run(
                [exe, *argv[1:], target],
                capture_output=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
                cwd=tmp,
                env={**os.environ, "PATH": trusted_path(root)},
                start_new_session=True,
            )
        except subprocess.TimeoutExpired:
            return None, f"{TIMED_OUT} ({checker}, {timeout:g}s)"
        except OSError as exc:
            return None, f"{checker} could not run: {exc.strerror}"
        out = (proc.stdout + proc.stderr).decode("utf-8", "replace").replace(target, name)
        return proc.returncode, out


def _node_error(out: str) -> str:
    # node prints "file:LINE\n<source line>\n   ^^^\n\nSyntaxError: msg\n    at …"; keep the
    # location and the SyntaxError line.
    lines = [ln for ln in out.splitlines() if ln.strip()]
    loc = lines[0] if lines else ""
    err = next((ln for ln in lines if "Error" in ln and not ln.lstrip().startswith("at ")), "")
    return _clip(f"{err} ({loc})" if err and loc else out)


_ESM_HINTS = ("Cannot use import statement outside a module", "Unexpected token 'export'")


def _check_node(path: str, text: str, timeout: float, root: str | None) -> Parse:
    name = os.path.basename(path) or "file.js"
    code, out = _run_on_copy("node --check", ["node", "--check"], name, text, timeout, root)
    if code is None:
        return Parse(None, "node --check", out)
    if code != 0 and name.endswith(".js") and any(h in out for h in _ESM_HINTS):
        # A .js file may be an ES module (package.json "type": "module"); the copy has no
        # package.json, so check it as one rather than misreading module syntax as broken.
        code, out = _run_on_copy(
            "node --check", ["node", "--check"], name[:-3] + ".mjs", text, timeout, root
        )
        if code is None:
            return Parse(None, "node --check", out)
    if code == 0:
        return Parse(True, "node --check")
    return Parse(False, "node --check", _node_error(out))


def _check_go(path: str, text: str, timeout: float, root: str | None) -> Parse:
    code, out = _run_on_copy(
        "gofmt", ["gofmt", "-e", "-l"], os.path.basename(path) or "f.go", text, timeout, root
    )
    if code is None:
        return Parse(None, "gofmt", out)
    # gofmt -l prints the file name when formatting differs; only a non-zero exit is a parse error.
    if code == 0:
        return Parse(True, "gofmt")
    return Parse(False, "gofmt", _clip(out))


def _tree_sitter_error(root: object) -> str:
    """Line and column of the first ERROR or MISSING node under ``root``."""
    stack = [root]
    while stack:
        node = stack.pop()
        if getattr(node, "is_missing", False) or getattr(node, "type", "") == "ERROR":
            row, col = node.start_point  # type: ignore[attr-defined]
            what = f"missing {node.type}" if node.is_missing else "syntax error"  # type: ignore[attr-defined]
            return f"{what} (line {row + 1}, column {col + 1})"
        if getattr(node, "has_error", False):
            stack.extend(reversed(node.children))  # type: ignore[attr-defined]
    return "syntax error"


def _check_typescript(path: str, text: str, timeout: float, root: str | None) -> Parse:
    try:
        import tree_sitter
        import tree_sitter_typescript
    except imports.Refused as exc:  # a tree_sitter.py of the workspace's (kli.tools.core.imports)
        return Parse(None, "tree-sitter typescript", f"{NOT_IMPORTED}: {exc}")
    except ImportError:
        return Parse(None, "tree-sitter typescript", "tree-sitter-typescript is not installed")
    tsx = path.lower().endswith(".tsx")
    grammar = (
        tree_sitter_typescript.language_tsx()
        if tsx
        else tree_sitter_typescript.language_typescript()
    )
    parser = tree_sitter.Parser(tree_sitter.Language(grammar))
    tree = parser.parse(encode(text))
    if not tree.root_node.has_error:
        return Parse(True, "tree-sitter typescript")
    return Parse(False, "tree-sitter typescript", _tree_sitter_error(tree.root_node))


CHECKERS: dict[str, SyntaxChecker] = {
    ".py": _check_python,
    ".pyi": _check_python,
    ".json": _check_json,
    ".js": _check_node,
    ".mjs": _check_node,
    ".cjs": _check_node,
    ".go": _check_go,
    ".ts": _check_typescript,
    ".tsx": _check_typescript,
    ".mts": _check_typescript,
    ".cts": _check_typescript,
}


def checker_for(path: str) -> SyntaxChecker | None:
    return CHECKERS.get(os.path.splitext(path)[1].lower())


def parse(
    path: str, text: str, *, timeout: float = SYNTAX_TIMEOUT, root: str | None = None
) -> Parse:
    """Parse ``text`` as the contents of ``path`` (the extension picks the checker); a checker
    program is never one under ``root``, the workspace (None: only relative ``PATH`` entries
    are left out)."""
    check = checker_for(path)
    if check is None:
        return Parse(None, None, "no checker for this file type")
    return check(path, text, timeout, root)


# -- the decision -----------------------------------------------------------------------------


def check_file(
    path: str,
    before_text: str | None,
    after_text: str,
    *,
    disabled: bool = False,
    timeout: float = SYNTAX_TIMEOUT,
    root: str | None = None,
) -> SyntaxOutcome:
    """Decide what a change from ``before_text`` (None: a new file) to ``after_text`` means.

    Touches no workspace file. The text before is parsed only when the text after fails.
    ``root`` is the workspace, whose folders no checker program is taken from (``parse``).
    """
    if disabled:
        return SyntaxOutcome("skipped", None, "disabled by disable_syntax_check")
    after = parse(path, after_text, timeout=timeout, root=root)
    if after.ok is None:
        return SyntaxOutcome("skipped", after.checker, after.error)
    if after.ok:
        return SyntaxOutcome("ok", after.checker, "")
    if before_text is None:
        return SyntaxOutcome("broken_new_file", after.checker, after.error)
    before = parse(path, before_text, timeout=timeout, root=root)
    if before.ok is None:
        # Cannot tell whether this change broke it: keep the change, report the error.
        return SyntaxOutcome("still_broken", after.checker, after.error)
    if before.ok:
        return SyntaxOutcome("reverted", after.checker, after.error)
    return SyntaxOutcome("still_broken", after.checker, after.error)


def reverted_message(path: str, outcome: SyntaxOutcome) -> str:
    """The spec's EDIT REVERTED message, with the checker's name and error."""
    return (
        f"EDIT REVERTED — {path} parsed correctly before your change and does NOT parse after "
        f"it ({outcome.checker}): {outcome.message}\n"
        "The file is unchanged on disk. Fix the syntax in your replacement text and retry:\n"
        "• check brackets/parens/quotes are balanced in new_str\n"
        "• check indentation matches the surrounding block\n"
        "Do NOT retry the identical edit — it will be reverted again."
    )


def outcome_note(path: str, outcome: SyntaxOutcome) -> str:
    """The in-band note a written change carries ("" when there is nothing to say)."""
    if outcome.status == "still_broken":
        return (
            f"[syntax: {path} still does not parse ({outcome.checker}): {outcome.message} — it "
            "did not parse before this change either; fix it next]"
        )
    if outcome.status == "broken_new_file":
        return (
            f"[syntax: {path} does not parse ({outcome.checker}): {outcome.message} — fix it next]"
        )
    if outcome.status == "skipped" and outcome.message.startswith((TIMED_OUT, NOT_IMPORTED)):
        # A missing runtime says nothing (the model cannot act on it); a timeout is worth a
        # word, and so is a workspace file that stands where the checker's module should be.
        return f"[syntax check skipped: {outcome.message}]"
    return ""


def apply_with_syntax_check(
    ws: Workspace,
    resolved: Resolved,
    before_text: str | None,
    after_text: str,
    *,
    disabled: bool = False,
    timeout: float = SYNTAX_TIMEOUT,
    before_write: Callable[[], None] | None = None,
    tool: str = "ws_edit",
    expected: object = ANY,
) -> tuple[bool, str, SyntaxOutcome]:
    """Check ``after_text`` as the new contents of ``resolved`` and write it unless the change
    broke a file that parsed before.

    Returns ``(wrote, note, outcome)``: ``note`` is the in-band syntax note to append to a
    success ("" when none), or — when ``wrote`` is False — the EDIT REVERTED message to return
    as the error text. ``before_write`` runs just before the write (ws_write's checkpoint).
    The write is atomic, under the workspace's write locks (``Workspace.writing``, for
    ``tool``), and checks the file still holds ``expected`` (``atomic.write_atomic``:
    ``atomic.Stale`` otherwise, nothing written); on a revert the file is not touched at all.
    ``OSError`` from the write propagates.
    """
    outcome = check_file(
        resolved.rel, before_text, after_text, disabled=disabled, timeout=timeout, root=ws.root
    )
    if outcome.status == "reverted":
        return False, reverted_message(resolved.rel, outcome), outcome
    with ws.writing([resolved.real], tool=tool, rel=resolved.rel):
        if before_write is not None:
            before_write()
        write_atomic(resolved.real, encode(after_text), expected)
    return True, outcome_note(resolved.rel, outcome), outcome
