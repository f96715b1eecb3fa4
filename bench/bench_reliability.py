"""Reliability figures of issue 18: how often a stale anchor is accepted, before and after the
exact check, how long counting an edit's changed lines takes on large files, and how often a
count from an edit's plan is above the whole-file minimum.

    .venv/bin/python bench/bench_reliability.py [--cases 2000] [--big-mb 20] [--seed 18]

Prints three Markdown tables (docs/reliability.md, "Stale means stale"; docs/benchmarks.md,
"Large files"; docs/reliability.md, "Bounded inputs, bounded time": the plan's counts).

Stale anchors, on real lines (the ``.py`` files of the standard library, read through a real
Workspace, changed on disk behind the session's back, then edited with the anchor the session
was shown):

- *before* is the rule the project had: an anchor validates when the line at its number has its
  two-hex-digit hash (the check ``plan_file`` still makes first, run here with ``view=None``);
- *after* is ``Workspace.call("edit", …)`` as it is now (the shown text, the version check).

Cases: a one-character in-place change of the anchored line; one to three lines inserted at the
top (the anchored line shifted down); an invented anchor on a line the session was never shown
(a read of the first lines, an anchor below them with a random hash).

Large files: a one-line ``ws_edit`` and ``edit`` of files of 20,000 and 50,000 lines, of 1 MB of
repeated lines and of ``--big-mb`` MB; the count of changed lines as ``ws_edit`` makes it now
(from its plan: ``count_replaced`` over the replaced span's lines), the bounded whole-file count
(``count_changes``, what a write of a whole new content still uses), and the previous count
(``difflib`` over the whole file, copied here as the peer) where it finishes.
"""

from __future__ import annotations

import argparse
import difflib
import os
import random
import re
import sysconfig
import tempfile
import time

from kli.tools import Workspace
from kli.tools.core.changes import count_changes, count_replaced, edited_lines
from kli.tools.file.anchors import line_hash


def real_files(limit: int = 400) -> list[list[str]]:
    stdlib = sysconfig.get_paths()["stdlib"]
    out: list[list[str]] = []
    for dirpath, _dirs, files in os.walk(stdlib):
        for name in sorted(files):
            if name.endswith(".py") and len(out) < limit:
                try:
                    with open(os.path.join(dirpath, name), encoding="utf-8") as fh:
                        lines = fh.read().split("\n")[:-1]
                except (OSError, UnicodeDecodeError):
                    continue
                if 30 <= len(lines) <= 3000:
                    out.append(lines)
    return out


def _edit(ws: Workspace, n: int, hh: str) -> bool:
    return ws.call("edit", {"input": f"@@ f.py\n= {n}:{hh}\n~REPLACED\n"}).ok


def _write(path: str, lines: list[str]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("".join(x + "\n" for x in lines))


def stale_table(cases: int, rng: random.Random) -> str:
    files = real_files()
    alphabet = "abcdefghijklmnopqrstuvwxyz_()[]:=. 0123456789"
    rows = []
    with tempfile.TemporaryDirectory() as root:
        path = os.path.join(root, "f.py")
        counts = {k: [0, 0, 0] for k in ("inplace", "shifted", "invented")}  # cases, before, after
        lines_seen = 0
        for kind in counts:
            for _ in range(cases):
                lines = rng.choice(files)
                lines_seen += len(lines)
                n = rng.randrange(1, len(lines) + 1)
                old = lines[n - 1]
                hh = line_hash(old)
                ws = Workspace(root)
                _write(path, lines)
                if kind == "invented":
                    k = rng.randrange(1, len(lines))
                    ws.call("read", {"path": "f.py", "start": 1, "end": k})
                    n = rng.randrange(k + 1, len(lines) + 1)
                    hh = f"{rng.randrange(256):02x}"
                    new = lines
                elif kind == "inplace":
                    ws.call("read", {"path": "f.py"})
                    i = rng.randrange(len(old) + 1)
                    changed = old[:i] + rng.choice(alphabet) + old[i + 1 :]
                    if changed == old:
                        changed = old + "x"
                    new = [*lines[: n - 1], changed, *lines[n:]]
                else:
                    ws.call("read", {"path": "f.py"})
                    extra = [rng.choice(rng.choice(files)) for _ in range(rng.randint(1, 3))]
                    new = extra + lines
                _write(path, new)
                counts[kind][0] += 1
                before = n <= len(new) and line_hash(new[n - 1]) == hh
                if before:
                    counts[kind][1] += 1
                    # The hash check passes: only the exact check can refuse it.
                    if _edit(ws, n, hh):
                        counts[kind][2] += 1
        labels = {
            "inplace": "one-character in-place change of the anchored line",
            "shifted": "1-3 lines inserted above (the anchored line shifted)",
            "invented": "invented anchor on a line never shown",
        }
        for kind, (total, before, after) in counts.items():
            rows.append(
                f"| {labels[kind]} | {total} | {before} ({100 * before / total:.2f}%) | "
                f"{after} ({100 * after / total:.2f}%) |"
            )
    head = (
        "| stale anchor | cases | accepted before (hash only) | accepted now |\n"
        "|---|---:|---:|---:|"
    )
    return head + "\n" + "\n".join(rows)


def old_count(before: str, after: str) -> tuple[int, int]:
    """The previous count_changes: difflib over every line of both texts (the peer)."""
    a, b = before.splitlines(), after.splitlines()
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


OLD_COUNT_SECONDS = 30.0


def _old_count_time(before: str, after: str, limit: float) -> str:
    """Seconds the previous count takes, run in a forked child stopped after ``limit``."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    began = time.perf_counter()
    child = ctx.Process(target=old_count, args=(before, after))
    child.start()
    child.join(limit)
    if child.is_alive():
        child.terminate()
        child.join()
        return f"> {limit:g} (stopped)"
    return f"{time.perf_counter() - began:.3f}"


def large_table(big_mb: int) -> str:
    texts = {
        "20,000 lines": "".join(f"    value_{i} = compute({i})\n" for i in range(20_000)),
        "50,000 lines": "".join(f"    value_{i} = compute({i})\n" for i in range(50_000)),
        "1 MB of repeated lines": "x = 1\n" * (1024 * 1024 // 6),
        f"{big_mb} MB": "".join(
            f"row {i} of a big generated file\n" for i in range(big_mb * 1024 * 1024 // 34)
        ),
    }
    rows = []
    with tempfile.TemporaryDirectory() as root:
        for label, text in texts.items():
            lines = text.split("\n")[:-1]
            mid = len(lines) // 2
            target = lines[mid]
            after = text.replace(target + "\n", "CHANGED\n", 1)
            path = os.path.join(root, "big.txt")
            with open(path, "w") as fh:
                fh.write(text)
            ws = Workspace(root)
            if len(text) <= 2 * 1024 * 1024:
                ws.call("read", {"path": "big.txt", "start": mid + 1, "end": mid + 1})
            else:  # over read's limit: search shows the line (what read's refusal advises)
                ws.call("search", {"path": "big.txt", "pattern": f"^{re.escape(target)}$"})
            began = time.perf_counter()
            r = ws.call(
                "edit", {"input": f"@@ big.txt\n= {mid + 1}:{line_hash(target)}\n~CHANGED\n"}
            )
            t_edit = time.perf_counter() - began
            assert r.ok, (label, r.text)
            with open(path, "w") as fh:
                fh.write(text)
            ws.call("ws_read", {"path": "big.txt"})
            unique = f"UNIQUE-{label}"
            with open(path, "w") as fh:
                fh.write(text.replace(target + "\n", unique + "\n", 1))
            began = time.perf_counter()
            r = ws.call("ws_edit", {"path": "big.txt", "old_str": unique, "new_str": "CHANGED"})
            t_ws_edit = time.perf_counter() - began
            assert r.ok, (label, r.text)
            change = r.details["files"][0]
            assert (change["added"], change["removed"]) == (1, 1), (label, change)
            start = text.index(target + "\n")
            began = time.perf_counter()
            count_replaced(edited_lines(text, [(start, start + len(target), "CHANGED")]))
            t_plan = time.perf_counter() - began
            began = time.perf_counter()
            count_changes(text, after)
            t_count = time.perf_counter() - began
            t_old = _old_count_time(text, after, OLD_COUNT_SECONDS)
            rows.append(
                f"| {label} | {len(text) / 1e6:.1f} MB | {t_edit:.3f} | {t_ws_edit:.3f} | "
                f"{t_plan:.6f} | {t_count:.4f} | {t_old} |"
            )
    head = (
        "| file | size | edit, one line (s) | ws_edit, one line (s) | "
        "ws_edit's count, from its plan (s) | whole-file count, bounded (s) | "
        "count before: difflib over the file (s) |\n|---|---:|---:|---:|---:|---:|---:|"
    )
    return head + "\n" + "\n".join(rows)


def plan_count_table(trials: int, rng: random.Random) -> str:
    """How often a count from the plan differs from the whole-file minimum: random
    ``replace_all`` edits (each span counted alone) and random ``ws_patch`` patches (made by
    ``difflib.unified_diff``) on small files of few distinct lines, where spans interact most."""
    rows = []
    with tempfile.TemporaryDirectory() as root:
        ws = Workspace(root)
        path = os.path.join(root, "f.txt")
        edits = more = 0
        for _ in range(trials):
            lines = [rng.choice(["a", "b", "c", "ab", ""]) for _ in range(rng.randint(2, 12))]
            text = "\n".join(lines) + "\n"
            old = rng.choice(["a", "b", "a\nb", "b\n", "\na", "c"])
            new = "".join(rng.choice(["a", "b", "c", "\n"]) for _ in range(rng.randint(0, 5)))
            if text.count(old) < 2:
                continue
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            r = ws.call("ws_edit", {"path": "f.txt", "old_str": old, "new_str": new,
                                    "replace_all": True})
            if not r.ok:
                continue
            edits += 1
            with open(path, newline="") as fh:
                after = fh.read()
            change = r.details["files"][0]
            more += (change["added"], change["removed"]) != count_changes(text, after)
        rows.append(f"| ws_edit replace_all (2+ spans) | {edits} | {more} |")
        patches = differ = 0
        for _ in range(trials):
            lines = [rng.choice(["a", "b", "c", "ab", "", "}"]) for _ in range(rng.randint(2, 40))]
            edited = list(lines)
            for _ in range(rng.randint(1, 5)):
                at = rng.randint(0, len(edited))
                edited[at : at + rng.randint(0, 3)] = [
                    rng.choice(["a", "n", "", "}"]) for _ in range(rng.randint(0, 3))
                ]
            text = "\n".join(lines) + "\n"
            want = "\n".join(edited) + ("\n" if edited else "")
            patch = "".join(difflib.unified_diff(text.splitlines(True), want.splitlines(True),
                                                 "a/f.txt", "b/f.txt"))
            if not patch or not edited:
                continue
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            r = ws.call("ws_patch", {"patch": patch})
            if not r.ok:
                continue
            patches += 1
            with open(path, newline="") as fh:
                after = fh.read()
            change = r.details["files"][0]
            differ += (change["added"], change["removed"]) != count_changes(text, after)
        rows.append(f"| ws_patch (difflib hunks) | {patches} | {differ} |")
    head = "| edits | applied | counted above the whole-file minimum |\n|---|---:|---:|"
    return head + "\n" + "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--big-mb", type=int, default=20)
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--only", choices=["stale", "large", "counts"], default=None)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    if args.only in (None, "stale"):
        print(stale_table(args.cases, rng))
        print()
    if args.only in (None, "large"):
        print(large_table(args.big_mb))
        print()
    if args.only in (None, "counts"):
        print(plan_count_table(args.cases, rng))


if __name__ == "__main__":
    main()
