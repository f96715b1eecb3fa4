"""Edit robustness: how often a drifted edit lands exactly, is refused, or lands WRONG.

Edits are generated from real sources in five languages, each with its own indentation:
Python (the standard library and this environment's packages; 4 spaces), TypeScript (the
extension's node_modules ``src/*.ts``, or ``$KLI_BENCH_TS_ROOT``; 2 spaces), JSON (the packages' ``*.json``; 2 spaces),
Common Lisp (``/usr/share/common-lisp/source``, e.g. ``apt-get install cl-alexandria
cl-ppcre``; forms aligned under an open paren), Go (the Go tree's ``src``; tabs) and Markdown
(the packages' READMEs and change logs: lines that begin with ``-`` or ``+``, which a
forgotten context prefix turns into a change). A language
whose sources are not on this machine is skipped and named. Each case picks a region of a file
and an intended change (one line gets a trailing comment in the language's syntax — JSON
gets ``//`` too: syntax checks are off —, one comment line is inserted); the "model" then
emits that change with one kind of realistic drift:

  none              — what it read, exactly
  trailing_ws       — trailing blanks added to the lines it copied
  indent_shifted    — everything it emitted de-indented to column 0 (or indented by 4)
  indent_width      — everything it emitted re-indented at half the width (4 spaces → 2;
                      regions with an odd indentation are not drawn: halving it loses
                      which of two columns was meant, for any tool)
  blank_dropped     — blank lines dropped from the text it copied
  blank_edges       — (ws_edit) old_str without the region's edge blank lines, new_str the
                      region in full, re-emitting them (a loose quote of the region)
  gutter_pasted     — ws_read's ``%6d|`` gutter left on every copied line
  line_misremembered — one copied line that the edit does not change has one letter wrong
  line_offset       — (diff) hunk line numbers off by 1..20
  prefix_forgotten  — (diff) context lines' leading space missing
  prefix_some       — (diff) the leading space missing on a random half of the context lines
  fenced            — (diff) wrapped in a Markdown fence with a line of prose after it
  blank_past_end    — (ws_edit) a region ending at the file's last line (the file ending with
                      no line break, one, or blank lines), old_str and new_str both quoting more
                      blank lines after it than the file has
  tabs_after_spaces — (ws_edit) the file's lines of 8 or more columns indented with spaces then
                      tabs ("  \t  (form", as in some Lisp sources), the model's text shifted
                      as in indent_shifted
  tabs_expanded_blank_dropped — (ws_edit) the file's lines of 8 or more columns indented with
                      tabs then spaces (Emacs's indent-tabs-mode: a form's first lines in
                      spaces, its continuation lines in tabs), the model's text with the tabs
                      written as spaces and old_str without the region's blank lines

Formats: ws_edit (search/replace: old_str unique in the file, as the contract asks) and
ws_patch with a unified diff (difflib, 3 lines of context, a/ b/ headers). GNU ``patch -p1``
and ``git apply --recount -p1`` get the very same unified diffs, side by side.

Outcome per case: ``exact`` (the file equals the intended result), ``refused`` (the tool
said no and the file is unchanged), ``WRONG`` (anything else: a different change, a partial
one, or a claimed success with the wrong text). Syntax checking is disabled for ws_* so the
match alone is measured.

Run: ``python bench/bench_edit_robustness.py [--cases-per-kind 40] [--seed 7]
[--languages python,typescript,json,lisp,go,markdown]``
"""

from __future__ import annotations

import argparse
import difflib
import glob
import os
import random
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass

from kli.tools import Workspace

EDIT_DRIFTS = [
    "none",
    "trailing_ws",
    "indent_shifted",
    "indent_width",
    "blank_dropped",
    "blank_edges",
    "gutter_pasted",
    "line_misremembered",
]
# Drawn after the diff kinds, so the draws of the kinds above stay what they were.
EDGE_DRIFTS = ["blank_past_end", "tabs_after_spaces", "tabs_expanded_blank_dropped"]
DIFF_DRIFTS = [
    *(d for d in EDIT_DRIFTS if d != "blank_edges"),
    "line_offset",
    "prefix_forgotten",
    "prefix_some",
    "fenced",
]
MIN_FILE_LINES = 80
MAX_FILE_LINES = 3000
MAX_FILES = 400
HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass(frozen=True)
class Language:
    name: str
    suffix: str
    comment: str  # what starts a line comment (the edit's marker)
    tabs: bool = False  # sources indented with tabs (kept), not skipped


LANGUAGES = {
    "python": Language("Python", ".py", "#"),
    "typescript": Language("TypeScript", ".ts", "//"),
    "json": Language("JSON", ".json", "//"),
    "lisp": Language("Lisp", ".lisp", ";"),
    "go": Language("Go", ".go", "//", tabs=True),
    "markdown": Language("Markdown", ".md", "<!--"),
}


def roots(lang: str) -> list[str]:
    """Where the sources of ``lang`` are on this machine."""
    purelib = sysconfig.get_paths()["purelib"]
    if lang == "python":
        return [sysconfig.get_paths()["stdlib"], purelib]
    if lang == "typescript":
        return [
            os.environ.get("KLI_BENCH_TS_ROOT")
            or os.path.join(HERE, "..", "labextension", "node_modules")
        ]
    if lang == "json":
        return [purelib]
    if lang == "lisp":
        return ["/usr/share/common-lisp/source"]
    if lang == "markdown":  # READMEs and change logs: lists of "- " and "+ " at column 0
        return [os.path.join(HERE, "..", "labextension", "node_modules"), purelib]
    goroot = ""
    if shutil.which("go"):
        out = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True)
        goroot = out.stdout.strip()
    found = sorted(glob.glob("/usr/share/go*/src") + glob.glob("/usr/lib/go*/src"))
    return [os.path.join(goroot, "src")] if goroot else found[-1:]


@dataclass
class Case:
    source: str
    text: str
    first: int  # 0-based first line of the region
    last: int  # 0-based last line, inclusive
    expected: str
    new_region: list[str]
    core: tuple[int, int] = (0, -1)  # blank_edges: the region without its edge blank lines
    rel: str = "pkg/mod.py"  # where the case's file is written (the language's suffix)


def source_files(rng: random.Random, lang: str) -> list[str]:
    spec = LANGUAGES[lang]
    skip = {"test", "tests", "__pycache__", "testdata", "vendor"}
    found = []
    for root in roots(lang):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in skip)
            if lang == "typescript" and os.sep + "src" not in dirpath:
                continue  # packages' own sources, not their compiled .d.ts
            found += [
                os.path.join(dirpath, f)
                for f in sorted(filenames)
                if f.endswith(spec.suffix) and not f.endswith((".d.ts", "_test.go"))
            ]
    rng.shuffle(found)
    out = []
    for path in found:
        try:
            with open(path, encoding="utf-8", newline="") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError):
            continue
        n = text.count("\n")
        tabs_ok = spec.tabs or "\t" not in text
        if MIN_FILE_LINES <= n <= MAX_FILE_LINES and "\r" not in text and tabs_ok:
            out.append(path)
        if len(out) >= MAX_FILES:
            break
    return out


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _blank_edges(lines: list[str], first: int, last: int) -> tuple[int, int]:
    """The region widened over the blank lines right around it."""
    while first > 0 and not lines[first - 1].strip():
        first -= 1
    while last + 1 < len(lines) and not lines[last + 1].strip():
        last += 1
    return first, last


def tabs_after_spaces(text: str) -> str:
    """Lines indented 8 or more columns written with two spaces, then tabs, then spaces."""
    out = []
    for line in text.split("\n"):
        body = line.lstrip(" ")
        col = len(line) - len(body)
        if col >= 8 and body:
            line = "  " + "\t" * ((col - 2) // 8) + " " * ((col - 2) % 8) + body
        out.append(line)
    return "\n".join(out)


def emacs_tabs(text: str) -> str:
    """Lines indented 8 or more columns written with tabs, then spaces (tabs of 8 columns)."""
    out = []
    for line in text.split("\n"):
        body = line.lstrip(" \t")
        col = len(line[: len(line) - len(body)].expandtabs(8))
        if col >= 8 and body:
            line = "\t" * (col // 8) + " " * (col % 8) + body
        out.append(line)
    return "\n".join(out)


def make_case(rng: random.Random, path: str, drift: str, lang: str = "python") -> Case | None:
    comment = LANGUAGES[lang].comment
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if drift == "tabs_after_spaces":
        text = tabs_after_spaces(text)
    if drift == "tabs_expanded_blank_dropped":
        text = emacs_tabs(text)
    if drift == "blank_past_end":
        text = text.rstrip("\n") + rng.choice(["", "\n", "\n", "\n\n"])
    lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    for _attempt in range(30):
        size = rng.randint(3, 8)
        first = rng.randrange(0, max(1, len(lines) - size))
        last = first + size - 1
        if drift == "blank_past_end":  # the region ends at the file's last non-blank line
            last = len(lines) - 1
            while last > 0 and not lines[last].strip():
                last -= 1
            first = max(0, last - size + 1)
        region = lines[first : last + 1]
        if not region[0].strip() or not region[-1].strip():
            continue
        if any(ln.rstrip().endswith("\\") or '"""' in ln or "'''" in ln for ln in region):
            continue
        if drift in ("blank_dropped", "tabs_expanded_blank_dropped") and all(
                ln.strip() for ln in region):
            continue
        if drift == "indent_width" and any(len(_indent(ln)) % 2 for ln in region):
            continue  # halving an odd column loses which of two columns was meant
        # Make old_str unique as the contract asks: grow context until it is (or give up).
        while text.count("\n".join(lines[first : last + 1])) > 1 and last - first < 14:
            first, last = max(0, first - 1), min(len(lines) - 1, last + 1)
        if text.count("\n".join(lines[first : last + 1])) != 1:
            continue
        core = (first, last)
        if drift == "blank_edges":
            first, last = _blank_edges(lines, first, last)
            if (first, last) == core:
                continue
        region = lines[first : last + 1]
        changed = [i for i, ln in enumerate(region) if ln.strip()]
        k = rng.choice(changed)
        new_region = list(region)
        new_region[k] = region[k] + f"  {comment} edited-{rng.randrange(10**6)}"
        j = rng.choice(changed)
        new_region.insert(j, _indent(region[j]) + f"{comment} inserted-{rng.randrange(10**6)}")
        new_lines = lines[:first] + new_region + lines[last + 1 :]
        expected = "\n".join(new_lines) + ("\n" if text.endswith("\n") else "")
        rel = "pkg/mod" + LANGUAGES[lang].suffix
        return Case(path, text, first, last, expected, new_region, core, rel)
    return None


# -- drift ------------------------------------------------------------------------------------


def shift(lines: list[str], region: list[str]) -> list[str]:
    """De-indent to column 0 when the region is indented, else indent by four."""
    common = min((len(_indent(ln)) for ln in region if ln.strip()), default=0)
    if common:
        return [ln[common:] if ln.strip() else ln for ln in lines]
    return ["    " + ln if ln.strip() else ln for ln in lines]


def misremember(line: str, rng: random.Random) -> str:
    """``line`` with one letter changed."""
    spots = [i for i, ch in enumerate(line) if ch.isalpha()]
    if not spots:
        return line + "x"
    i = rng.choice(spots)
    return line[:i] + ("q" if line[i] != "q" else "z") + line[i + 1 :]


def halve_indent(line: str) -> str:
    body = line.lstrip(" ")
    return " " * ((len(line) - len(body)) // 2) + body


def edit_call(case: Case, drift: str, rng: random.Random) -> dict[str, object]:
    region = case.text.split("\n")[case.first : case.last + 1]
    old, new = list(region), list(case.new_region)
    if drift == "trailing_ws":
        old = [ln + "  " if ln.strip() and rng.random() < 0.6 else ln for ln in old]
        if old == region:
            old[0] += " "
    elif drift in ("indent_shifted", "tabs_after_spaces"):
        old, new = shift(old, region), shift(new, region)
    elif drift == "indent_width":
        old, new = [halve_indent(ln) for ln in old], [halve_indent(ln) for ln in new]
    elif drift == "blank_dropped":
        old = [ln for ln in old if ln.strip()]
    elif drift == "blank_edges":
        old = case.text.split("\n")[case.core[0] : case.core[1] + 1]
    elif drift == "line_misremembered":
        # an unchanged line: as many copies in new_str as in old_str
        same = [i for i, ln in enumerate(old) if ln.strip() and old.count(ln) == new.count(ln)]
        if same:
            i = rng.choice(same)
            wrong = misremember(old[i], rng)
            nth = old[:i].count(old[i])  # the same occurrence in new_str (order is kept)
            at = [k for k, ln in enumerate(new) if ln == old[i]][nth]
            new[at] = wrong
            old[i] = wrong
    elif drift == "tabs_expanded_blank_dropped":
        old = [ln.expandtabs(8) for ln in old if ln.strip()]
        new = [ln.expandtabs(8) for ln in new]
    elif drift == "blank_past_end":
        after = case.text.split("\n")[case.last + 1 :]
        quoted = len(after) - (1 if case.text.endswith("\n") else 0) + rng.randint(1, 2)
        old, new = old + [""] * quoted, new + [""] * quoted
        old.append("")  # the final line break, as copied
        new.append("")
    elif drift == "gutter_pasted":
        numbered = {ln: case.first + 1 + i for i, ln in enumerate(region)}
        old = [f"{case.first + 1 + i:6d}|{ln}" for i, ln in enumerate(old)]
        new = [f"{numbered[ln]:6d}|{ln}" if ln in numbered else ln for ln in new]
    return {
        "path": case.rel,
        "old_str": "\n".join(old),
        "new_str": "\n".join(new),
        "disable_syntax_check": True,
    }


def unified(case: Case) -> str:
    a = case.text.splitlines(keepends=True)
    b = case.expected.splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, f"a/{case.rel}", f"b/{case.rel}", n=3))


HEADER = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def drift_diff(diff: str, drift: str, case: Case, rng: random.Random) -> str:
    lines = diff.split("\n")
    if drift == "line_misremembered":
        ctx = [i for i, ln in enumerate(lines) if ln.startswith(" ") and ln.strip()]
        if ctx:
            i = rng.choice(ctx)
            lines[i] = " " + misremember(lines[i][1:], rng)
    # The model shifts everything it emits by the same amount: base it on all hunk lines.
    bodies = [ln[1:] for ln in lines if ln[:1] in " -+" and not ln.startswith(("---", "+++"))]
    out = []
    old_no = 0
    for line in lines:
        m = HEADER.match(line)
        if m:
            old_no = int(m.group(1))
            if drift == "line_offset":
                off = rng.choice([-1, 1]) * rng.randint(1, 20)
                a = max(1, int(m.group(1)) + off)
                c = max(1, int(m.group(3)) + off)
                line = f"@@ -{a}{m.group(2) or ''} +{c}{m.group(4) or ''} @@"
            out.append(line)
            continue
        if line.startswith(("---", "+++")) or not line:
            out.append(line)
            continue
        tag, body = line[0], line[1:]
        if drift == "trailing_ws" and tag in " -" and body.strip() and rng.random() < 0.6:
            body += "  "
        elif drift == "indent_shifted":
            body = shift([body], bodies)[0]
        elif drift == "indent_width":
            body = halve_indent(body)
        elif drift == "blank_dropped" and tag == " " and not body.strip():
            if tag in " -":
                old_no += 1
            continue
        elif drift == "gutter_pasted" and tag in " -":
            body = f"{old_no:6d}|{body}"
        elif drift == "prefix_forgotten" and tag == " ":
            tag = ""
        elif drift == "prefix_some" and tag == " " and rng.random() < 0.5:
            tag = ""
        if tag in " -":
            old_no += 1
        out.append(tag + body)
    text = "\n".join(out)
    if drift == "fenced":
        text = "```diff\n" + text + "```\nThis adds a comment and a marker line.\n"
    return text


# -- runners ----------------------------------------------------------------------------------


def outcome(before: str, expected: str, after: str | None) -> str:
    if after is None or after == before:
        return "refused" if after == before or after is None else "WRONG"
    return "exact" if after == expected else "WRONG"


def setup(tmp: str, case: Case) -> str:
    path = os.path.join(tmp, case.rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(case.text)
    return path


def read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return fh.read()
    except OSError:
        return None


SHOW_WRONG = False


def run_ws(tool: str, case: Case, args: dict[str, object]) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = setup(tmp, case)
        result = Workspace(tmp).call(tool, args)
        after = read(path)
        got = outcome(case.text, case.expected, after)
        if (got == "exact" and not result.ok) or (got == "refused" and result.ok):
            got = "WRONG"
        if got == "WRONG" and SHOW_WRONG:
            print(f"--- WRONG: {tool} on {case.source}\n{args}\n{result.text}", file=sys.stderr)
            diff = difflib.unified_diff(
                case.expected.splitlines(True), (after or "").splitlines(True), "expected", "got"
            )
            print("".join(diff), file=sys.stderr)
        return got


def run_peer(argv: list[str], case: Case, diff: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = setup(tmp, case)
        with open(os.path.join(tmp, "change.diff"), "w", encoding="utf-8") as fh:
            fh.write(diff if diff.endswith("\n") else diff + "\n")
        subprocess.run(
            [*argv, "change.diff"],
            cwd=tmp,
            capture_output=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
        return outcome(case.text, case.expected, read(path))


GNU_PATCH = [
    "patch",
    "-p1",
    "--batch",
    "--forward",
    "--no-backup-if-mismatch",
    "-r",
    "-",
    "-s",
    "-i",
]
GIT_APPLY = ["git", "apply", "--recount", "-p1"]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--cases-per-kind", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--languages", default=",".join(LANGUAGES))
    ap.add_argument("--show-wrong", action="store_true", help="print each WRONG ws_* case")
    opts = ap.parse_args()
    global SHOW_WRONG
    SHOW_WRONG = opts.show_wrong
    rng = random.Random(opts.seed)
    peers = {"GNU patch": shutil.which("patch"), "git apply": shutil.which("git")}
    started = time.perf_counter()
    tallies: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    by_lang: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    rows = [("ws_edit", d) for d in EDIT_DRIFTS] + [("unified", d) for d in DIFF_DRIFTS]
    rows += [("ws_edit", d) for d in EDGE_DRIFTS]
    used: dict[str, int] = {}
    missing = []
    for lang in opts.languages.split(","):
        files = source_files(rng, lang)
        if not files:
            missing.append(LANGUAGES[lang].name)
            continue
        fi = 0
        for fmt, drift in rows:
            made = tries = 0
            while made < opts.cases_per_kind and tries < 50 * opts.cases_per_kind:
                path = files[fi % len(files)]
                fi += 1
                tries += 1
                case = make_case(rng, path, drift, lang)
                if case is None:
                    continue
                made += 1
                if fmt == "ws_edit":
                    got = run_ws("ws_edit", case, edit_call(case, drift, rng))
                    tallies[("ws_edit", drift)][got] += 1
                    by_lang[("ws_edit", lang)][got] += 1
                    continue
                diff = drift_diff(unified(case), drift, case, rng)
                args = {"path": case.rel, "patch": diff, "disable_syntax_check": True}
                got = run_ws("ws_patch", case, args)
                tallies[("ws_patch", drift)][got] += 1
                by_lang[("ws_patch", lang)][got] += 1
                for peer, argv in (("GNU patch", GNU_PATCH), ("git apply", GIT_APPLY)):
                    if peers[peer]:
                        got = run_peer(argv, case, diff)
                        tallies[(peer, drift)][got] += 1
                        by_lang[(peer, lang)][got] += 1
        used[LANGUAGES[lang].name] = len(set(files[:fi]))
    elapsed = time.perf_counter() - started

    def cell(c: Counter[str]) -> str:
        n = sum(c.values())
        return (
            " / ".join(f"{100 * c[k] / n:.0f}" for k in ("exact", "refused", "WRONG")) if n else "—"
        )

    n_cases = sum(sum(c.values()) for (tool, _d), c in tallies.items() if tool.startswith("ws_"))
    sources = ", ".join(f"{name} {n}" for name, n in used.items())
    print(
        f"{n_cases} ws_* cases from source files ({sources}; Python {sys.version.split()[0]}, "
        f"seed {opts.seed}), {elapsed:.1f} s in all"
        + (f"; no sources here for {', '.join(missing)}" if missing else "")
        + "\n"
    )
    print("Cells: % applied exactly / % refused / % applied WRONG.\n")
    head = "| {} | ws_edit (search/replace) | ws_patch (unified) | GNU patch -p1 | git apply --recount |"
    print(head.format("drift"))
    print("|---|---|---|---|---|")
    edit_drifts = [*EDIT_DRIFTS, *EDGE_DRIFTS]
    for drift in [*EDIT_DRIFTS, *(d for d in DIFF_DRIFTS if d not in EDIT_DRIFTS), *EDGE_DRIFTS]:
        edit = cell(tallies[("ws_edit", drift)]) if drift in edit_drifts else "n/a"
        patch = cell(tallies[("ws_patch", drift)]) if drift in DIFF_DRIFTS else "n/a"
        print(
            f"| {drift} | {edit} | {patch} | "
            f"{cell(tallies[('GNU patch', drift)])} | {cell(tallies[('git apply', drift)])} |"
        )
    totals: dict[str, Counter[str]] = defaultdict(Counter)
    for (tool, _drift), c in tallies.items():
        totals[tool].update(c)
    print(
        f"| **all** | {cell(totals['ws_edit'])} | {cell(totals['ws_patch'])} | "
        f"{cell(totals['GNU patch'])} | {cell(totals['git apply'])} |"
    )
    print()
    print(head.format("language"))
    print("|---|---|---|---|---|")
    for lang in opts.languages.split(","):
        if LANGUAGES[lang].name in missing:
            continue
        print(
            f"| {LANGUAGES[lang].name} | "
            + " | ".join(
                cell(by_lang[(t, lang)]) for t in ("ws_edit", "ws_patch", "GNU patch", "git apply")
            )
            + " |"
        )
    wrong = {tool: c["WRONG"] for tool, c in totals.items()}
    print(f"\nWRONG counts: {dict(sorted(wrong.items()))}")
    for tool in ("ws_edit", "ws_patch"):
        c = totals[tool]
        print(f"{tool}: {c['exact']} exact, {c['refused']} refused, {c['WRONG']} WRONG")


if __name__ == "__main__":
    main()
