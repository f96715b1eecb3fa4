"""Issue 23, the registry-wide properties: an agent's calls change nothing and run nothing that
a person did not allow.

A small tree — a git repository (a commit, a tracked file, an index), a notebook with a code
cell, Python modules, a folder, an empty folder, a checkpoint and a recorded change — and random
sequences of agent calls (``source="agent"``, one session) drawn from the WHOLE registry with
plausible arguments: paths of the tree, patches built from the file as a read shows it,
commands, code.

1. Under full review (``approval: "review"`` for every kind), before any Accept: no byte, no
   folder and not git's index changes (every path under the root, ``.git/`` and ``.kli/``
   included), no process starts but the tools' own fixed programs (below), no Python runs in
   the image (the sentinel modules, the namespace), and no program git could be made to run.
2. Under narrowed capabilities, approval ``auto``: ``file/read`` only, and files only (no
   ``process/exec``, no ``image/eval``): no process starts but those programs, no Python runs,
   no program git could be made to run — whatever files the agent writes first (a module named
   like one a tool imports lazily, a ``.git/config``).

Sentinels: an audit hook (``sys.addaudithook``, installed once, switched on only while the
agent's calls run) records every process start (``subprocess.Popen``, ``os.system``,
``os.exec*``, ``os.posix_spawn``, ``os.fork``…) and every import of a sentinel module; the
sentinel modules (``tree_sitter.py``, ``tree_sitter_typescript.py``, ``kli_probe_sentinel.py``)
sit in the root, which is ``sys.path[0]`` during the calls, as in the kernel; the repository's
config points every program git can run (fsmonitor, hooks, external diff, textconv, a clean
filter, pager) at a script that leaves a mark outside the root.

The tools' own programs, allowed: ``git`` (rule 1 makes it run no repository program: the git
sentinel checks that), search's ``rg`` (the ripgrep wheel's own binary, by its full path) and
the syntax checkers (``node --check``, ``gofmt``), which run on a copy
in a temporary folder outside the root.

Variants (``VARIANTS``): ``own`` — the tree without the lazily-imported-module sentinels and
with a plain git config; ``root imports`` and ``git programs`` add those sentinels and begin
each sequence with the call that reaches them (``PROBES``): rule 1's sentinels (no tool
imports the root's files; git runs no repository program).

Case counts in CI (the ``ci`` profile, 60 examples scaled): property 1 ``own`` 30 sequences,
each other variant 10, and 5 tours of the whole registry (every tool once, in a random order); property 2 10 per capability set and variant; up to ``MAX_CALLS``
distinct tools and 2 repeats per sequence (and the reads an agent makes before it patches).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from kli.tools import Workspace
from kli.tools.file.anchors import line_hash
from kli.tools.file.firstpass import binaries
from kli.tools.registry import REGISTRY

from .conftest import examples

SCALE = 0.5  # cases per property: half the profile's count (ci: 30 sequences)
MAX_CALLS = 10  # distinct tools per sequence (and up to 2 repeated)
SENTINEL_MODULES = ("tree_sitter", "tree_sitter_typescript", "kli_probe_sentinel")
SENTINEL_SOURCE = 'import sys\nsys.audit("kli.test.python_ran", __name__)\ndef f():\n    return 1\n'
PROCESS_EVENTS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.fork",
                  "os.forkpty", "os.spawn", "os.startfile", "pty.spawn"}
TOOL_PROGRAMS = {"git"}  # run by the tools in the root, repository programs off (rule 1)
CHECKERS = {"node", "gofmt", "go"}  # syntax checks, on a copy outside the root
NOTEBOOK = {
    "cells": [
        {"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["import kli_probe_sentinel\n", "x = 1\n"]},
        {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": ["# notes\n"]},
    ],
    "metadata": {"kernelspec": {"name": "kli", "display_name": "kli", "language": "python"}},
    "nbformat": 4, "nbformat_minor": 5,
}


# -- the sentinels ------------------------------------------------------------------------------
class Watch:
    """What the audit hook saw while ``on``; ``root`` is the tree of the sequence running."""

    on = False
    root = ""
    processes: ClassVar[list[tuple[str, Any, Any]]] = []
    python: ClassVar[list[str]] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not Watch.on:
        return
    if event == "kli.test.python_ran":
        Watch.python.append(str(args[0]))
    elif event in PROCESS_EVENTS:
        argv = args[1] if event == "subprocess.Popen" else args
        cwd = args[2] if event == "subprocess.Popen" else None
        Watch.processes.append((event, argv, cwd))


_installed: list[bool] = []


def _install_hook() -> None:
    if not _installed:  # an audit hook cannot be removed: one per test process
        sys.addaudithook(_audit)
        _installed.append(True)


# search's first passes: the ripgrep wheel's own binary and the package's own kli-scan.
FIRST_PASSES = {p for p in (binaries.rg_installed()[0], binaries.scan_built()[0])
                if p is not None}


def _forbidden(processes: list[tuple[str, Any, Any]], root: str) -> list[Any]:
    """The process starts that are not the tools' own programs."""
    bad = []
    for event, argv, cwd in processes:
        if event == "subprocess.Popen" and isinstance(argv, (list, tuple)) and argv:
            name = os.path.basename(os.fsdecode(argv[0]))
            if name in TOOL_PROGRAMS:
                continue
            if os.fsdecode(argv[0]) in FIRST_PASSES:
                continue  # search's first pass: the installed ones, never another
            inside = cwd is not None and (os.fsdecode(cwd) + os.sep).startswith(root + os.sep)
            if name in CHECKERS and not inside:
                continue
        bad.append((event, argv, cwd))
    return bad


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=root,
                   check=True, capture_output=True)


def _make_template(base: Path) -> tuple[Path, Path, dict[str, list[str]]]:
    """The tree every sequence starts from (copied per sequence), the mark git's programs
    leave, and the ids of its checkpoint and recorded change."""
    root = base / "template"
    root.mkdir()
    _git(root, "init", "-q")
    (root / "t.py").write_text("def f():\n    return 1\n")
    (root / "mod.py").write_text("value = 1\n\n\ndef g():\n    return value\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("name = 'pkg'\n")
    (root / "dir").mkdir()
    (root / "dir" / "x.txt").write_text("one\ntwo\nthree\n")
    (root / "empty").mkdir()
    (root / "notes.md").write_text("# notes\n- one\n")
    (root / "nb.ipynb").write_text(json.dumps(NOTEBOOK, indent=1) + "\n")
    (root / "kli_probe_sentinel.py").write_text(SENTINEL_SOURCE)  # what drawn code imports
    _git(root, "add", "t.py", "mod.py", "pkg/__init__.py", "notes.md")
    _git(root, "commit", "-qm", "one")
    (root / "t.py").write_text("def f():\n    return 2\n")  # a change for git_diff to show
    # A checkpoint and a recorded change, made by the person (the API), before review is on.
    ws = Workspace(str(root))
    ws.call("ws_write", {"path": "notes.md", "content": "# notes\n- one\n- two\n",
                         "allow_shrink": True})
    ws.call("ws_delete", {"path": "dir/x.txt"})
    (root / "dir" / "x.txt").write_text("one\ntwo\nthree\n")
    ids = {"checkpoints": [c.id for c in _checkpoints(root)],
           "changes": [c["id"] for c in _changes(ws)]}
    # Every program git can be made to run leaves a mark outside the root.
    mark = base / "git-ran-a-program"
    script = base / "git-program.sh"
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >> '{mark}'\nexec cat\n")
    script.chmod(0o755)
    hooks = base / "hooks"
    hooks.mkdir()
    for hook in ("pre-commit", "post-checkout", "post-index-change", "reference-transaction",
                 "pre-auto-gc", "post-rewrite", "fsmonitor-watchman"):
        os.symlink(script, hooks / hook)
    armed = (root / ".git" / "config").read_text() + (
                 f"[core]\n\tfsmonitor = {script}\n\thooksPath = {hooks}\n\tpager = {script}\n"
                 f"[diff]\n\texternal = {script}\n[diff \"probe\"]\n\ttextconv = {script}\n"
                 f"[filter \"probe\"]\n\tclean = {script}\n\tsmudge = {script}\n"
                 f"\trequired = false\n")
    (root / ".git" / "config.armed").write_text(armed)  # the "git programs" variant's config
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".kli").mkdir(exist_ok=True)
    return root, mark, ids


def _checkpoints(root: Path) -> list[Any]:
    from kli.tools.core import checkpoints

    return checkpoints.list_all(str(root))


def _changes(ws: Workspace) -> list[dict[str, Any]]:
    r = ws.call("changes", {})
    return list(r.details.get("changes") or [])


def _tree(root: Path) -> dict[str, Any]:
    """Every path under ``root`` — ``.git/`` and ``.kli/`` included — with its bytes (a file),
    ``("dir",)`` or ``("link", target)``."""
    out: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if os.path.islink(path):
                out[rel] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                out[rel] = ("dir",)
            else:
                with open(path, "rb") as fh:
                    out[rel] = fh.read()
    return out


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, list[str]]]:
    return _make_template(tmp_path_factory.mktemp("held"))


@pytest.fixture(scope="module")
def _hook() -> None:
    _install_hook()


# -- plausible calls ----------------------------------------------------------------------------
PATHS = ["t.py", "mod.py", "pkg/__init__.py", "pkg", "dir", "dir/x.txt", "empty", "notes.md",
         "nb.ipynb", "nb.ipynb#c1", "tree_sitter.py", ".git/config", ".git/index", ".kli",
         "new/sub/f.py", "x.ts", "x.js"]
TEXT_FILES = ["t.py", "mod.py", "pkg/__init__.py", "dir/x.txt", "notes.md", "nb.ipynb#c1"]
CONTENTS = [
    "print('hi')\n", SENTINEL_SOURCE, "import kli_probe_sentinel\n", "let x: number = 1;\n",
    "console.log(1);\n", "[core]\n\tfsmonitor = touch fsmonitor-ran\n", "", "x = (\n",
]
COMMANDS = ["touch made.txt", "python3 -c 'import kli_probe_sentinel'", "git status",
            "echo hi > out.txt", "rm -rf dir"]
CODE = ["import kli_probe_sentinel", "x = 1", "open('made.txt', 'w').write('x')",
        "import os; os.system('touch made.txt')"]
DESTINATIONS = ["t2.py", "new/sub/t.py", "dir2", "new/x.txt", "empty2", "pkg/moved.py"]


def _lines(root: Path, path: str) -> list[str]:
    """The lines of ``path`` (a cell's source for ``nb.ipynb#ID``) as a read shows them."""
    try:
        if "#" not in path:
            return (root / path).read_text().splitlines()
        nb = json.loads((root / path.split("#")[0]).read_text())
        for cell in nb["cells"]:  # gone when an agent's earlier call (not held) deleted it
            if cell.get("id") == path.split("#")[1]:
                src = cell["source"]
                return ("".join(src) if isinstance(src, list) else src).splitlines()
        return []
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return []


@st.composite
def _call(draw: st.DrawFn, name: str, root: Path, ids: dict[str, list[str]],
          paths: list[str]) -> dict[str, Any]:
    """Plausible arguments for tool ``name`` in the tree at ``root`` as it is now."""
    path = draw(st.sampled_from(paths))
    text_file = draw(st.sampled_from(TEXT_FILES))
    lines = _lines(root, text_file) or [""]
    at = draw(st.integers(0, len(lines) - 1))
    new_line = draw(st.sampled_from(["x = 2", "import kli_probe_sentinel", "value = (", "- three"]))
    code = draw(st.sampled_from(CODE))
    some_id = draw(st.sampled_from(["p1", "c1", "p2", *ids["checkpoints"], *ids["changes"]]))
    if name in ("bash", "ws_shell"):
        return {"command": draw(st.sampled_from(COMMANDS))}
    if name in ("bash_output", "bash_kill"):
        return {"job_id": draw(st.sampled_from(["j1", "1"]))}
    if name == "eval":
        return {"code": code}
    if name == "eval_frame":
        return {"park": "k1", "code": code}
    if name in ("eval_continue", "eval_abort"):
        return {"park": "k1"}
    if name == "redefine":
        return draw(st.sampled_from([
            {"definition": "def f():\n    return 3\n", "target": "mod.f", "code": "f()"},
            {"reload": "mod", "code": "1"},
            {"definition": "import kli_probe_sentinel\n", "code": code},
        ]))
    if name in ("read", "ws_read", "ws_list", "git_status"):
        return {"path": path}
    if name in ("find", "ws_glob"):
        return {"pattern": draw(st.sampled_from(["*.py", "**/*", "*.ipynb"]))}
    if name == "search":
        return {"pattern": draw(st.sampled_from(["x", "def", "kli"])), "path": "**/*"}
    if name == "ws_grep":
        return {"pattern": draw(st.sampled_from(["x", "def", "kli"]))}
    if name in ("write", "ws_write"):  # read first: an existing file is written only then
        return {"path": path, "content": draw(st.sampled_from(CONTENTS)), "_read": path}
    if name == "edit":
        if draw(st.integers(0, 5)) == 0:
            return {draw(st.sampled_from(["accept_repair", "reject_repair"])): some_id}
        anchor = f"{at + 1}:{line_hash(lines[at])}"
        return {"input": f"@@ {text_file}\n= {anchor}\n~{new_line}\n", "_read": text_file}
    if name == "ws_edit":
        return {"path": text_file, "old_str": lines[at], "new_str": new_line,
                "_read": text_file}
    if name == "ws_patch":
        return {"patch": f"--- a/{text_file}\n+++ b/{text_file}\n@@ -{at + 1},1 +{at + 1},1 @@\n"
                         f"-{lines[at]}\n+{new_line}\n", "_read": text_file}
    if name == "cells":
        return {"_read": "nb.ipynb"} | draw(st.sampled_from([
            {"path": "nb.ipynb", "op": "insert", "where": "end", "source": code},
            {"path": "nb.ipynb", "op": "delete", "cell": "c1"},
            {"path": "nb.ipynb", "op": "move", "cell": "m1", "where": "start"},
            {"path": "nb.ipynb", "op": "set_type", "cell": "c1", "type": "markdown"},
            {"path": "nb.ipynb", "op": "clear_outputs", "cell": "c1"},
        ]))
    if name == "run_cells":
        return {"path": "nb.ipynb", "cell": "c1"}
    if name in ("image_summary", "bash_jobs", "trace_read", "changes", "ws_skill"):
        return {}
    if name == "inspect":
        return {"name": draw(st.sampled_from(["x", "kli_probe_sentinel", "mod"]))}
    if name == "look":  # a cell's images, an image file, a live figure, or every live figure
        return draw(st.sampled_from([{}, {"path": "nb.ipynb#c1"}, {"path": path},
                                     {"name": draw(st.sampled_from(["x", "mod"]))}]))
    if name in ("trace", "untrace"):  # names of the tree's modules only: never the test's own
        return {"function": draw(st.sampled_from(["f", "mod.g", "kli_probe_sentinel.f"]))}
    if name == "await_decision":
        return {"id": some_id, "timeout": 0}
    if name == "undo":
        return draw(st.sampled_from([{}, {"change": some_id}, {"change": some_id, "force": True}]))
    if name == "redo":
        return {"change": some_id}
    if name == "ws_mv":
        return {"src": path, "dst": draw(st.sampled_from(DESTINATIONS))}
    if name == "ws_delete":
        return {"path": path}
    if name == "ws_checkpoints":
        return draw(st.sampled_from([{"action": "list"}, {"action": "restore", "id": some_id},
                                     {"action": "restore", "id": some_id, "path": "dir/r.txt"}]))
    if name == "ws_todo":
        return {"items": ["[x] read", "edit"]}
    if name == "git_diff":
        return {"path": draw(st.sampled_from(["", "t.py"])), "cached": draw(st.booleans())}
    raise AssertionError(f"no plausible arguments for tool {name}: add them here")


TOOL_NAMES = sorted(REGISTRY.tools)


@st.composite
def _sequence(draw: st.DrawFn) -> list[str]:
    """Distinct tools first (a prefix of a permutation of the registry: over the CI cases every
    tool is drawn), then a few repeated ones (a second edit after a first)."""
    distinct = draw(st.permutations(TOOL_NAMES))[: draw(st.integers(1, MAX_CALLS))]
    again = draw(st.lists(st.sampled_from(distinct), max_size=2))
    return [*distinct, *again]


@pytest.fixture
def tree_copy(template: tuple[Path, Path, dict[str, list[str]]]) -> Iterator[Any]:
    """A fresh copy of the template per sequence (``make()``), removed afterwards."""
    made: list[str] = []

    def make(settings_json: dict[str, Any]) -> Path:
        where = tempfile.mkdtemp(prefix="kli-held-")
        made.append(where)
        root = Path(where) / "root"
        shutil.copytree(template[0], root, symlinks=True)
        (root / ".kli" / "settings.json").write_text(json.dumps(settings_json))
        return Path(os.path.realpath(root))

    yield make
    for where in made:
        shutil.rmtree(where, ignore_errors=True)


def _run_sequence(root: Path, names: list[str], data: st.DataObject, ids: dict[str, list[str]],
                  paths: list[str], probes: list[tuple[str, dict[str, Any]]] = ()
                  ) -> list[tuple[str, dict[str, Any], str]]:
    """Run the drawn agent calls in one session with the sentinels on; return what ran."""
    ws = Workspace(str(root))
    agent = ws.open_session("agent")
    ran: list[tuple[str, dict[str, Any], str]] = []
    saved = {m: sys.modules.pop(m) for m in SENTINEL_MODULES if m in sys.modules}
    sys.path.insert(0, str(root))
    Watch.processes, Watch.python, Watch.root, Watch.on = [], [], str(root), True
    namespace = set(ws.namespace)
    try:
        for name in [*(n for n, _a in probes), *names]:
            args = (dict(probes[len(ran)][1]) if len(ran) < len(probes) else
                    data.draw(_call(name, root, ids, paths), label=name))
            read = args.pop("_read", None)
            if read is not None:  # what an agent does first: read what it patches
                ws.call("read", {"path": read}, agent, source="agent")
                ws.call("ws_read", {"path": read}, agent, source="agent")
            r = ws.call(name, args, agent, source="agent")
            assert r.details.get("error") != "internal", (name, args, r.text)
            ran.append((name, args, r.text[:300]))
        if set(ws.namespace) != namespace:  # code ran in the image
            Watch.python.append(f"namespace: {sorted(set(ws.namespace) ^ namespace)}")
    finally:
        Watch.on = False
        sys.path.remove(str(root))
        for m in SENTINEL_MODULES:
            sys.modules.pop(m, None)
        sys.modules.update(saved)
    return ran


# -- the variants: what the tree holds, and whose rule each sentinel checks ------------------------
# ``own``: rule 2 (held means nothing changed); the tree has no module a tool imports and no
# repository program. ``root imports`` adds the sentinel modules named like the ones tools import
# lazily, ``git programs`` arms the repository's config (rule 1).
VARIANTS = [
    pytest.param("own", id="own"),
    pytest.param("root imports", id="root-imports"),
    pytest.param("git programs", id="git-programs"),
]


def _arm(root: Path, variant: str, mark: Path) -> list[str]:
    """Make the copy at ``root`` the ``variant``'s tree; return the paths calls may name."""
    paths = [p for p in PATHS if p not in ("tree_sitter.py", ".git/config")]
    if variant == "root imports":
        for name in SENTINEL_MODULES:
            (root / f"{name}.py").write_text(SENTINEL_SOURCE)
        paths.append("tree_sitter.py")
    if variant == "git programs":
        (root / ".git" / "config").write_text((root / ".git" / "config.armed").read_text())
        (root / ".git" / "info" / "attributes").write_text("* diff=probe filter=probe\n")
        paths.append(".git/config")
        mark.unlink(missing_ok=True)
    return paths


# What each variant's sequences begin with: the call that reaches its sentinel for sure (the
# random calls after it reach it only now and then).
PROBES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "own": [],
    "root imports": [("ws_write", {"path": "x.ts", "content": "let x: number = 1;\n"})],
    "git programs": [("git_status", {}), ("git_diff", {"path": "t.py"})],
}


def _check_git(variant: str, mark: Path, ran: Any) -> None:
    if variant == "git programs":
        assert not mark.exists(), (mark.read_text(), ran)


def _phases(shrink: bool) -> tuple[Phase, ...]:
    """Every phase, or none after generating: a variant that fails for a sibling's reason is
    not shrunk (seconds of CI for nothing), nor is a tour of 40 calls (minutes)."""
    return tuple(Phase) if shrink else (Phase.explicit, Phase.reuse, Phase.generate)


# -- 1. under full review: nothing changes, nothing runs ----------------------------------------
@pytest.mark.usefixtures("_hook")
@pytest.mark.parametrize("variant", VARIANTS)
def test_under_full_review_agent_calls_change_no_byte_folder_or_index_and_run_nothing(
        template: tuple[Path, Path, dict[str, list[str]]], tree_copy: Any, variant: str) -> None:
    _held_property(template, tree_copy, variant, _sequence(),
                   examples(SCALE if variant == "own" else SCALE / 3))


@pytest.mark.usefixtures("_hook")
def test_under_full_review_a_tour_of_every_tool_of_the_registry_changes_nothing_and_runs_nothing(
        template: tuple[Path, Path, dict[str, list[str]]], tree_copy: Any) -> None:
    """Every tool in every case (in a random order, with random plausible arguments): the CI
    cases of the property above may leave a tool out."""
    _held_property(template, tree_copy, "own", st.permutations(TOOL_NAMES), examples(SCALE / 6),
                   shrink=False)  # a failure lists every call it made; shrinking 40 is minutes


def _held_property(template: tuple[Path, Path, dict[str, list[str]]], tree_copy: Any,
                   variant: str, sequences: st.SearchStrategy[list[str]], cases: int,
                   shrink: bool = True) -> None:
    _template, mark, ids = template

    @settings(max_examples=cases, suppress_health_check=list(HealthCheck),
              phases=_phases(shrink and variant == "own"))
    @given(names=sequences, data=st.data())
    def run(names: list[str], data: st.DataObject) -> None:
        root = tree_copy({"approval": "review"})
        paths = _arm(root, variant, mark)
        before = _tree(root)
        ran = _run_sequence(root, names, data, ids, paths, PROBES[variant])
        after = _tree(root)
        changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
        assert not changed, (changed, ran)
        assert not _forbidden(Watch.processes, str(root)), (Watch.processes, ran)
        assert not Watch.python, (Watch.python, ran)
        _check_git(variant, mark, ran)

    run()


# -- 2. under narrowed capabilities: no process, no Python --------------------------------------
NARROWED = {
    "file-read-only": {"capabilities": ["file/read"]},
    "files-only": {"capabilities": ["file/read", "file/write", "file/edit", "image/inspect"]},
}


@pytest.mark.usefixtures("_hook")
@pytest.mark.parametrize(("narrowed", "variant"), [
    pytest.param("file-read-only", "own", id="file-read-only-own"),
    pytest.param("file-read-only", "root imports", id="file-read-only-root-imports"),
    pytest.param("file-read-only", "git programs", id="file-read-only-git-programs"),
    pytest.param("files-only", "own", id="files-only-own"),
    pytest.param("files-only", "root imports", id="files-only-root-imports"),
    pytest.param("files-only", "git programs", id="files-only-git-programs"),
])
def test_under_narrowed_capabilities_agent_calls_start_no_process_and_run_no_python(
        template: tuple[Path, Path, dict[str, list[str]]], tree_copy: Any, narrowed: str,
        variant: str) -> None:
    _template, mark, ids = template

    @settings(max_examples=examples(SCALE / 3), suppress_health_check=list(HealthCheck),
              phases=_phases(variant == "own"))
    @given(names=_sequence(), data=st.data())
    def run(names: list[str], data: st.DataObject) -> None:
        root = tree_copy({**NARROWED[narrowed], "approval": "auto"})
        paths = _arm(root, variant, mark)
        ran = _run_sequence(root, names, data, ids, paths, PROBES[variant])
        assert not _forbidden(Watch.processes, str(root)), (Watch.processes, ran)
        assert not Watch.python, (Watch.python, ran)
        _check_git(variant, mark, ran)

    run()
