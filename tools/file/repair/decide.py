"""The repair decision: given the original text, the patched text and the lines the patch
edited, what to do — a plain value with a named reason, decided before anything touches disk.

Reasons (``RepairDecision.reason``; the safety classification is ``classification``):

- ``balanced``              the patched text balances (and, for Python, parses): write it.
- ``repaired_local_stable`` repaired; every changed line lies inside the edited range and the
                            top-level form / statement count equals the original's: safe.
- ``repair_outside_edit``   the repair changes a line outside the edited range: unsafe.
- ``form_count_changed``    the repaired text has a different number of top-level forms /
                            statements than the original: unsafe.
- ``original_unparsed``     the original did not balance / parse. When the lines the patch took
                            out and put in balance by themselves, or no repair works, the
                            patched text is written as is (the patch did not break a parsing
                            file, and no repair touches lines nobody asked to change);
                            otherwise stability is unknown: unsafe (a preview).
- ``unrepairable``          no delimiter repair makes the text balance / parse (an unterminated
                            string, or a Python syntax error brackets do not explain): refused.
- ``policy_reject``         ``repair="reject"`` and the patched text is unbalanced: refused.
- ``policy_preview``        ``repair="preview"``: the repaired candidate is returned, unwritten.

Actions: ``write`` (the text is written), ``preview`` (a candidate, nothing written),
``reject`` (an error, nothing written). Under ``safe`` an unsafe repair becomes a preview.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from kli.tools.file.repair import lisp, python
from kli.tools.file.repair.common import RepairLanguage

POLICIES = ("safe", "preview", "reject")

WRITE, PREVIEW, REJECT = "write", "preview", "reject"

BALANCED = "balanced"
LOCAL_STABLE = "repaired_local_stable"
OUTSIDE_EDIT = "repair_outside_edit"
FORM_COUNT = "form_count_changed"
ORIGINAL_UNPARSED = "original_unparsed"
UNREPAIRABLE = "unrepairable"
POLICY_REJECT = "policy_reject"
POLICY_PREVIEW = "policy_preview"

_LANGUAGES: tuple[RepairLanguage, ...] = (lisp, python)


def language_for(path: str) -> RepairLanguage | None:
    """The repair language module for ``path`` by extension, or None (no check)."""
    ext = os.path.splitext(path)[1].lower()
    for module in _LANGUAGES:
        if ext in module.EXTENSIONS:
            return module
    return None


@dataclass(frozen=True)
class RepairDecision:
    action: str
    reason: str
    text: str  # what would be written: the patched text, or the repaired candidate
    classification: str | None = None
    marks: tuple[dict[str, Any], ...] = ()
    changed_lines: tuple[int, ...] = ()
    message: str = ""
    language: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def repaired(self) -> bool:
        return bool(self.marks)


def _problem(language: RepairLanguage, text: str) -> str:
    return str(language.parse_error(text) or "unbalanced delimiters")


def decide(
    language: RepairLanguage | None,
    original: str,
    patched: str,
    edited: set[int],
    policy: str = "safe",
) -> RepairDecision:
    """Decide what happens to ``patched`` (the patch applied to ``original``).

    ``edited`` holds the 1-based lines of ``patched`` the patch wrote or bordered (see
    ``plan.FilePlan.edited_lines``). ``language`` is a module from ``language_for`` (None: no
    check, always ``write`` with reason ``balanced``).
    """
    if policy not in POLICIES:
        raise ValueError(f"unknown repair policy {policy!r}")
    if language is None:
        return RepairDecision(WRITE, BALANCED, patched)
    name = language.NAME
    is_python = language is python
    scan = language.scan(patched)
    if scan.balanced:
        error = python.parse_error(patched) if is_python else None
        if error is not None and python.parse_error(original) is None:
            return RepairDecision(
                REJECT,
                UNREPAIRABLE,
                patched,
                language=name,
                message=f"the patched file does not parse: {error}; delimiters balance, so "
                "no repair applies",
            )
        return RepairDecision(WRITE, BALANCED, patched, language=name)
    problem = _problem(language, patched)
    if policy == "reject":
        return RepairDecision(
            REJECT,
            POLICY_REJECT,
            patched,
            language=name,
            message=f"the patched file is unbalanced: {problem}; repair='reject' writes nothing",
        )
    original_count = language.form_count(original)
    if original_count is None and _edit_balances_alone(language, original, patched):
        # The file was broken before the patch, and the lines the patch took out and put in
        # balance by themselves: the problem is the file's own (a person half-way through a
        # bracket elsewhere), so the patch is written as it is, and no repair touches lines
        # nobody asked to change.
        return RepairDecision(
            WRITE,
            ORIGINAL_UNPARSED,
            patched,
            classification=ORIGINAL_UNPARSED,
            language=name,
            message=f"the file did not parse before this edit and still does not ({problem}), "
            "outside the lines you changed; written as patched, without repair",
        )
    planned = language.fixes(patched, scan)
    still = None
    if planned is not None:
        from kli.tools.file.repair.common import apply_fixes

        candidate, marks, lines = apply_fixes(patched, planned)
        still = language.parse_error(candidate)
    if planned is None or still is not None:
        if original_count is None:
            # The file was broken before the patch: the patch did not make a parsing file
            # unparseable, and refusing would block every edit to a broken file.
            return RepairDecision(
                WRITE,
                ORIGINAL_UNPARSED,
                patched,
                classification=ORIGINAL_UNPARSED,
                language=name,
                message=f"the file did not parse before this edit and still does not "
                f"({problem}); written as patched, without repair",
            )
        detail = (
            "cannot be repaired"
            if planned is None
            else f"the delimiter repair does not fix it: {still}"
        )
        return RepairDecision(
            REJECT,
            UNREPAIRABLE,
            patched,
            language=name,
            message=f"the patched file is unbalanced ({problem}) and {detail}",
        )
    if original_count is None:
        classification = ORIGINAL_UNPARSED
        why = "the original file did not parse, so the repair's effect cannot be judged"
    elif not lines <= edited:
        classification = OUTSIDE_EDIT
        outside = sorted(lines - edited)
        why = f"the repair changes line(s) {', '.join(map(str, outside))} outside your edit"
    elif language.form_count(candidate) != original_count:
        classification = FORM_COUNT
        why = (
            f"the repaired file has {language.form_count(candidate)} top-level "
            f"{'statements' if is_python else 'forms'}, the original {original_count}"
        )
    else:
        classification = LOCAL_STABLE
        why = "the repair is local to your edit and keeps the top-level form count"
    notes = "; ".join(f"line {m['line']}: {m['note']}" for m in marks)
    message = f"{problem}; repaired: {notes}; {why}"
    common: dict[str, Any] = {
        "classification": classification,
        "marks": tuple(marks),
        "changed_lines": tuple(sorted(lines)),
        "message": message,
        "language": name,
    }
    if policy == "preview":
        return RepairDecision(PREVIEW, POLICY_PREVIEW, candidate, **common)
    if classification == LOCAL_STABLE:
        return RepairDecision(WRITE, LOCAL_STABLE, candidate, **common)
    return RepairDecision(PREVIEW, classification, candidate, **common)


def _changed_lines(original: str, patched: str) -> tuple[str, str]:
    """The whole lines of ``original`` and of ``patched`` between their common first and
    last lines: what the patch took out and what it put in."""
    a, b = original.splitlines(keepends=True), patched.splitlines(keepends=True)
    head = 0
    while head < len(a) and head < len(b) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < len(a) - head and tail < len(b) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return "".join(a[head : len(a) - tail]), "".join(b[head : len(b) - tail])


def _edit_balances_alone(language: RepairLanguage, original: str, patched: str) -> bool:
    """Whether the lines the patch took out and those it put in each balance by themselves
    (no open bracket, stray closer or unterminated string inside them) — then the patch
    neither made nor mended the text's imbalance."""
    removed, added = _changed_lines(original, patched)
    if not removed.strip() and not added.strip():
        return True
    return language.scan(removed).balanced and language.scan(added).balanced


def still_valid(language: RepairLanguage | None, text: str) -> str | None:
    """Why a stored candidate no longer stands (unbalanced / unparsable), or None."""
    if language is None:
        return None
    return language.parse_error(text)
