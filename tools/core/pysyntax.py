"""The Python parse check, once: compile a text to bytecode (nothing is executed) and say where
it fails. Used by the slmcode post-edit syntax check (``ws/syntax.py``) and by ``edit``'s
delimiter repair (``file/repair/python.py``), each wording the error its own way.

``compile`` rather than ``ast.parse``: it is about 2.5× faster on large files (no Python AST
objects are built) and also catches errors a module would raise on import (``'return'
outside function``). Warnings (an invalid escape sequence …) are not errors and are not
printed.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass


@dataclass(frozen=True)
class PyError:
    """Why a text is not valid Python: the compiler's message, its line and column when it
    gave them, and the offending source line ("" when none). ``syntax`` is False for a
    ``ValueError`` (a NUL byte), ``MemoryError`` or ``RecursionError``, whose message is
    ``"Type: text"`` and which has no position."""

    msg: str
    lineno: int | None = None
    offset: int | None = None
    line: str = ""
    syntax: bool = True


def compile_error(text: str, filename: str = "<edit>") -> PyError | None:
    """None when ``text`` compiles as a Python module, else where and why it does not."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return PyError(exc.msg, exc.lineno, exc.offset, (exc.text or "").rstrip("\n"))
    except (ValueError, MemoryError, RecursionError) as exc:
        return PyError(f"{type(exc).__name__}: {exc}", syntax=False)
    return None
