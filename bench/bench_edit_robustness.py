"""Edit robustness: how often a drifted edit lands exactly, is refused, or lands WRONG.

Edits are generated from real Python sources (the standard library and the packages installed
in this interpreter's environment). Each case picks a region of a file and an intended change
(one line gets a trailing comment, one comment line is inserted); the "model" then emits that
change with one kind of realistic drift:

  none              — what it read, exactly
  trailing_ws       — trailing blanks added to the lines it copied
  indent_shifted    — everything it emitted de-indented to column 0 (or indented by 4)
  indent_width      — everything it emitted re-indented at half the width (4 spaces → 2)
  blank_dropped     — blank lines dropped from the text it copied
  gutter_pasted     — ws_read's ``%6d|`` gutter left on every copied line
  line_misremembered — one copied line that the edit does not change has one letter wrong
  line_offset       — (diff) hunk line numbers off by 1..20
  prefix_forgotten  — (diff) context lines' leading space missing
  fenced            — (diff) wrapped in a Markdown fence with a line of prose after it

Formats: ws_edit (search/replace: old_str unique in the file, as the contract asks) and
ws_patch with a unified diff (difflib, 3 lines of context, a/ b/ headers). GNU ``patch -p1``
and ``git apply --recount -p1`` get the very same unified diffs, side by side.

Outcome per case: ``exact`` (the file equals the intended result), ``refused`` (the tool
said no and the file is unchanged), ``WRONG`` (anything else: a different change, a partial
one, or a claimed success with the wrong text). Syntax checking is disabled for ws_* so the
match alone is measured.

Run: ``python bench/bench_edit_robustness.py [--cases-per-kind 40] [--seed 7]``
"""

from __future__ import annotations

import argparse
import difflib
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
    "gutter_pasted",
    "line_misremembered",
]
DIFF_DRIFTS = [*EDIT_DRIFTS, "line_offset", "prefix_forgotten", "fenced"]
MIN_FILE_LINES = 80
MAX_FILE_LINES = 3000
MAX_FILES = 400
REL = "pkg/mod.py"


@dataclass
class Case:
    source: str
    text: str
    first: int  # 0-based first line of the region
    last: int  # 0-based last line, inclusive
    expected: str
    new_region: list[str]


def source_files(rng: random.Random) -> list[str]:
    roots = [sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"]]
    found = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in ("test", "tests", "__pycache__"))
            found += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".py")]
    rng.shuffle(found)
    out = []
    for path in found:
        try:
            with open(path, encoding="utf-8", newline="") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError):
            continue
        n = text.count("\n")
        if MIN_FILE_LINES <= n <= MAX_FILE_LINES and "\r" not in text and "\t" not in text:
            out.append(path)
        if len(out) >= MAX_FILES:
            break
    return out


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def make_case(rng: random.Random, path: str, drift: str) -> Case | None:
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    for _attempt in range(30):
        size = rng.randint(3, 8)
        first = rng.randrange(0, max(1, len(lines) - size))
        last = first + size - 1
        region = lines[first : last + 1]
        if not region[0].strip() or not region[-1].strip():
            continue
        if any(ln.rstrip().endswith("\\") or '"""' in ln or "'''" in ln for ln in region):
            continue
        if drift == "blank_dropped" and not any(not ln.strip() for ln in region):
            continue
        # Make old_str unique as the contract asks: grow context until it is (or give up).
        while text.count("\n".join(lines[first : last + 1])) > 1 and last - first < 14:
            first, last = max(0, first - 1), min(len(lines) - 1, last + 1)
        if text.count("\n".join(lines[first : last + 1])) != 1:
            continue
        region = lines[first : last + 1]
        changed = [i for i, ln in enumerate(region) if ln.strip()]
        k = rng.choice(changed)
        new_region = list(region)
        new_region[k] = region[k] + f"  # edited-{rng.randrange(10**6)}"
        j = rng.choice(changed)
        new_region.insert(j, _indent(region[j]) + f"# inserted-{rng.randrange(10**6)}")
        new_lines = lines[:first] + new_region + lines[last + 1 :]
        expected = "\n".join(new_lines) + ("\n" if text.endswith("\n") else "")
        return Case(path, text, first, last, expected, new_region)
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
    elif drift == "indent_shifted":
        old, new = shift(old, region), shift(new, region)
    elif drift == "indent_width":
        old, new = [halve_indent(ln) for ln in old], [halve_indent(ln) for ln in new]
    elif drift == "blank_dropped":
        old = [ln for ln in old if ln.strip()]
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
    elif drift == "gutter_pasted":
        numbered = {ln: case.first + 1 + i for i, ln in enumerate(region)}
        old = [f"{case.first + 1 + i:6d}|{ln}" for i, ln in enumerate(old)]
        new = [f"{numbered[ln]:6d}|{ln}" if ln in numbered else ln for ln in new]
    return {
        "path": REL,
        "old_str": "\n".join(old),
        "new_str": "\n".join(new),
        "disable_syntax_check": True,
    }


def unified(case: Case) -> str:
    a = case.text.splitlines(keepends=True)
    b = case.expected.splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, f"a/{REL}", f"b/{REL}", n=3))


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
    path = os.path.join(tmp, REL)
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
    ap.add_argument("--show-wrong", action="store_true", help="print each WRONG ws_* case")
    opts = ap.parse_args()
    global SHOW_WRONG
    SHOW_WRONG = opts.show_wrong
    rng = random.Random(opts.seed)
    files = source_files(rng)
    peers = {"GNU patch": shutil.which("patch"), "git apply": shutil.which("git")}
    started = time.perf_counter()
    tallies: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    rows = [("ws_edit", d) for d in EDIT_DRIFTS] + [("unified", d) for d in DIFF_DRIFTS]
    fi = 0
    for fmt, drift in rows:
        made = 0
        while made < opts.cases_per_kind:
            path = files[fi % len(files)]
            fi += 1
            case = make_case(rng, path, drift)
            if case is None:
                continue
            made += 1
            if fmt == "ws_edit":
                tallies[("ws_edit", drift)][
                    run_ws("ws_edit", case, edit_call(case, drift, rng))
                ] += 1
                continue
            diff = drift_diff(unified(case), drift, case, rng)
            args = {"path": REL, "patch": diff, "disable_syntax_check": True}
            tallies[("ws_patch", drift)][run_ws("ws_patch", case, args)] += 1
            if peers["GNU patch"]:
                tallies[("GNU patch", drift)][run_peer(GNU_PATCH, case, diff)] += 1
            if peers["git apply"]:
                tallies[("git apply", drift)][run_peer(GIT_APPLY, case, diff)] += 1
    elapsed = time.perf_counter() - started

    def cell(c: Counter[str]) -> str:
        n = sum(c.values())
        return (
            " / ".join(f"{100 * c[k] / n:.0f}" for k in ("exact", "refused", "WRONG")) if n else "—"
        )

    n_cases = sum(sum(c.values()) for (tool, _d), c in tallies.items() if tool.startswith("ws_"))
    print(
        f"{n_cases} ws_* cases from {len({f for f in files[:fi]})} source files "
        f"(Python {sys.version.split()[0]}, seed {opts.seed}), {elapsed:.1f} s in all\n"
    )
    print("Cells: % applied exactly / % refused / % applied WRONG.\n")
    print(
        "| drift | ws_edit (search/replace) | ws_patch (unified) | GNU patch -p1 | git apply --recount |"
    )
    print("|---|---|---|---|---|")
    for drift in DIFF_DRIFTS:
        edit = cell(tallies[("ws_edit", drift)]) if drift in EDIT_DRIFTS else "n/a"
        print(
            f"| {drift} | {edit} | {cell(tallies[('ws_patch', drift)])} | "
            f"{cell(tallies[('GNU patch', drift)])} | {cell(tallies[('git apply', drift)])} |"
        )
    totals: dict[str, Counter[str]] = defaultdict(Counter)
    for (tool, _drift), c in tallies.items():
        totals[tool].update(c)
    print(
        f"| **all** | {cell(totals['ws_edit'])} | {cell(totals['ws_patch'])} | "
        f"{cell(totals['GNU patch'])} | {cell(totals['git apply'])} |"
    )
    wrong = {tool: c["WRONG"] for tool, c in totals.items()}
    print(f"\nWRONG counts: {dict(sorted(wrong.items()))}")


if __name__ == "__main__":
    main()
