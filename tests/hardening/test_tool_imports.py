"""A tool never imports a file of the workspace (issue 23, rule 1; ``kli.tools.core.imports``).

The kernel has its root on ``sys.path``, so each test here puts the root there too (and takes
it off after). A sentinel module is a file in the root that, when imported — or when a tool
calls what it defines — leaves a file in ``tripped/``: a test passes only if nothing is there.
Modules the tools import lazily (``tree_sitter``, ``datetime``) are taken out of
``sys.modules`` for the test so the import really resolves, and put back after."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from kli.tools import Workspace
from kli.tools.core import imports

from .conftest import kernel_harness

BROKEN_TS = "let x: number = ;\n"


def sentinel(root: Path, tripped: Path, name: str) -> Path:
    """A module ``name`` in ``root`` whose import, or any call of its ``Parser`` / ``Language``,
    writes ``tripped/name``."""
    tripped.mkdir(exist_ok=True)
    mark = tripped / name
    body = (f"open({str(mark)!r}, 'a').write('imported\\n')\n"
            "def Parser(*a, **k):\n"
            f"    open({str(mark)!r}, 'a').write('called\\n')\n"
            "Language = Parser\n"
            "X = 'the root module'\n")
    path = root / f"{name}.py"
    path.write_text(body)
    return mark


@pytest.fixture
def on_path(root: Path) -> Iterator[Path]:
    """The root first on sys.path, as in the kernel."""
    sys.path.insert(0, str(root))
    try:
        yield root
    finally:
        sys.path.remove(str(root))
        sys.path_importer_cache.pop(str(root), None)


@contextlib.contextmanager
def forgotten(*names: str) -> Iterator[None]:
    """``names`` (and their submodules) are not imported during the block; the originals are
    put back after, and whatever was imported under those names meanwhile is dropped."""
    def ours(n: str) -> bool:
        return any(n == m or n.startswith(f"{m}.") for m in names)

    saved = {n: sys.modules.pop(n) for n in list(sys.modules) if ours(n)}
    try:
        yield
    finally:
        for n in [n for n in sys.modules if ours(n)]:
            del sys.modules[n]
        sys.modules.update(saved)


def under(path: str | None, root: Path) -> bool:
    return path is not None and os.path.realpath(path).startswith(str(root.resolve()) + os.sep)


def review(root: Path) -> Workspace:
    (root / ".kli").mkdir(exist_ok=True)
    (root / ".kli" / "settings.json").write_text(json.dumps({"approval": {"file": "review"}}))
    return Workspace(str(root))


def test_a_tree_sitter_py_in_the_root_is_not_imported_by_the_typescript_check(
        on_path: Path, tmp_path: Path) -> None:
    with forgotten("tree_sitter", "tree_sitter_typescript"):
        mark = sentinel(on_path, tmp_path / "tripped", "tree_sitter")
        ws = Workspace(str(on_path))
        for attempt in range(2):  # every later check too, not only the first
            r = ws.call("ws_write", {"path": f"a{attempt}.ts", "content": BROKEN_TS}, source="agent")
            assert r.ok, r.text
            # The installed tree-sitter parsed it: the error is its, with line and column.
            assert "does not parse (tree-sitter typescript): syntax error (line 1" in r.text
        assert not mark.exists()
        assert not under(sys.modules["tree_sitter"].__file__, on_path)


def test_a_held_write_of_a_ts_file_does_not_import_the_roots_tree_sitter(
        on_path: Path, tmp_path: Path) -> None:
    with forgotten("tree_sitter", "tree_sitter_typescript"):
        mark = sentinel(on_path, tmp_path / "tripped", "tree_sitter")
        ws = review(on_path)
        r = ws.call("ws_write", {"path": "a.ts", "content": BROKEN_TS},
                    ws.open_session("agent"), source="agent")
        assert r.details.get("status") == "pending", r.text
        assert not (on_path / "a.ts").exists()
        assert not mark.exists()


def test_a_tree_sitter_the_person_imported_from_the_root_is_not_used_by_a_tool(
        on_path: Path, tmp_path: Path) -> None:
    with forgotten("tree_sitter", "tree_sitter_typescript"):
        mark = sentinel(on_path, tmp_path / "tripped", "tree_sitter")
        ws = Workspace(str(on_path))
        import tree_sitter  # the person's cell: their own module, imported as usual

        assert tree_sitter.X == "the root module"
        mark.unlink()
        r = ws.call("ws_write", {"path": "a.ts", "content": BROKEN_TS}, source="agent")
        assert r.ok, r.text
        assert not mark.exists()  # its Parser was never called
        assert "[syntax check skipped: its checker was not imported: import of 'tree_sitter' " \
               "refused: it would load tree_sitter.py from the workspace" in r.text
        assert sys.modules["tree_sitter"] is tree_sitter  # the person's import is left as it was


def test_a_standard_module_shadowed_in_the_root_is_imported_from_the_standard_library(
        on_path: Path, tmp_path: Path) -> None:
    with forgotten("datetime"):
        mark = sentinel(on_path, tmp_path / "tripped", "datetime")
        ws = Workspace(str(on_path))
        # undo's since is read with ``import datetime`` inside the function
        r = ws.call("undo", {"session": "agent", "since": "10:30"}, source="agent")
        assert r.details.get("error") != "internal", r.text
        assert not mark.exists()
        assert not under(sys.modules["datetime"].__file__, on_path)


def test_eval_imports_the_roots_module_and_redefine_reloads_it(
        on_path: Path, tmp_path: Path) -> None:
    with forgotten("kli_probe_mod"):
        mark = sentinel(on_path, tmp_path / "tripped", "kli_probe_mod")
        ws = Workspace(str(on_path))
        r = ws.call("eval", {"code": "import kli_probe_mod\nkli_probe_mod.X"}, source="agent")
        assert r.ok and "'the root module'" in r.text, r.text
        assert mark.read_text() == "imported\n"  # the eval's business
        (on_path / "kli_probe_mod.py").write_text("X = 'reloaded'\n")
        r = ws.call("redefine", {"reload": "kli_probe_mod", "code": "kli_probe_mod.X"},
                    source="agent")
        assert r.ok and "'reloaded'" in r.text, r.text


def test_inside_a_tool_a_module_only_in_the_root_is_refused_and_elsewhere_imported(
        on_path: Path, tmp_path: Path) -> None:
    with forgotten("kli_probe_only", "difflib"):
        mark = sentinel(on_path, tmp_path / "tripped", "kli_probe_only")
        shadow = sentinel(on_path, tmp_path / "tripped", "difflib")
        with imports.guarded(str(on_path.resolve())):
            with pytest.raises(imports.Refused, match=r"kli_probe_only\.py from the workspace"):
                import kli_probe_only
            import difflib

            assert not under(difflib.__file__, on_path)
            with pytest.raises(ModuleNotFoundError):
                import kli_probe_nowhere  # noqa: F401
            # Another thread (the person's cell) imports as usual meanwhile.
            seen: list[str] = []
            t = threading.Thread(target=lambda: seen.append(__import__("kli_probe_only").X))
            t.start()
            t.join()
            assert seen == ["the root module"]
            with imports.lifted():  # an eval inside the tool
                assert sys.modules["kli_probe_only"].X == "the root module"
                import kli_probe_only  # noqa: F401
        assert mark.read_text() == "imported\n"
        assert not shadow.exists()


def test_a_submodule_of_a_namespace_package_is_not_taken_from_the_root(
        on_path: Path, tmp_path: Path) -> None:
    # ``kli`` is a namespace package: a ``kli/`` folder in the root joins its __path__.
    (on_path / "kli").mkdir()
    mark = sentinel(on_path / "kli", tmp_path / "tripped", "probe_sub")
    import kli

    assert any(under(p, on_path) for p in kli.__path__)
    try:
        with imports.guarded(str(on_path.resolve())), \
                pytest.raises(imports.Refused, match=r"kli\.probe_sub"):
            import kli.probe_sub
        assert not mark.exists()
    finally:
        sys.modules.pop("kli.probe_sub", None)


def test_work_a_tool_hands_to_another_thread_keeps_its_guard(root: Path) -> None:
    """``carried`` (the notebook rooms' thread runs a tool's changes to the live document)."""
    def on_thread(fn: object) -> list[object]:
        seen: list[object] = []
        t = threading.Thread(target=lambda: seen.append(fn()))  # type: ignore[operator]
        t.start()
        t.join()
        return seen

    real = str(root.resolve())
    with imports.guarded(real):
        handed = imports.carried(imports.active_root)
        assert on_thread(imports.active_root) == [None]  # a plain thread is not guarded
    assert on_thread(handed) == [real]
    assert imports.carried(imports.active_root) is imports.active_root  # nothing to carry


def test_the_guard_is_installed_once_and_first(ws: Workspace) -> None:
    ws.call("ws_list", {"path": "."})
    ws.call("ws_list", {"path": "."})
    assert sys.meta_path[0] is imports._Finder
    assert sys.meta_path.count(imports._Finder) == 1
    assert imports.active_root() is None  # off outside a tool call


def test_a_virtual_environment_inside_the_root_is_control_state_and_trusted(tmp_path: Path) -> None:
    """A real venv at ROOT/.venv, its python running the tools: its site-packages stays
    importable for tools (it is the kernel's installation) and no tool may write there."""
    root = (tmp_path / "project").resolve()
    root.mkdir()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")],
                   check=True, capture_output=True)
    python = root / ".venv" / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "kli_probe_installed.py").write_text("X = 'installed'\n")
    (root / "kli_probe_loose.py").write_text("X = 'loose'\n")
    script = f"""
import json, os, sys
sys.path.insert(0, {str(root)!r})
from kli.tools import Workspace
from kli.tools.core import imports
ws = Workspace({str(root)!r})
out = {{}}
with imports.guarded(ws.root):
    import kli_probe_installed
    out["installed"] = kli_probe_installed.X
    try:
        import kli_probe_loose
        out["loose"] = "imported"
    except imports.Refused:
        out["loose"] = "refused"
rel = os.path.relpath({site!r}, {str(root)!r})
r = ws.call("ws_write", {{"path": rel + "/kli_probe_installed.py", "content": "X = 1\\n"}})
out["write"] = r.details.get("error")
r = ws.call("ws_delete", {{"path": ".venv"}})
out["delete"] = r.details.get("error")
r = ws.call("ws_write", {{"path": "ok.py", "content": "X = 1\\n"}})
out["elsewhere"] = r.ok
print(json.dumps(out))
"""
    # The venv's python finds kli and its dependencies where this test run finds them.
    import kli.tools

    found = [str(Path(kli.tools.__file__).parents[2])]
    found += [p for p in sys.path if p.endswith("site-packages")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(found)}
    got = subprocess.run([str(python), "-c", script], capture_output=True, text=True, env=env,
                         cwd=str(root), timeout=120)
    assert got.returncode == 0, got.stderr
    out = json.loads(got.stdout.strip().splitlines()[-1])
    assert out == {"installed": "installed", "loose": "refused", "write": "control_dir",
                   "delete": "control_dir", "elsewhere": True}
    assert Path(site, "kli_probe_installed.py").read_text() == "X = 'installed'\n"


def test_when_the_root_is_klis_own_source_tree_the_tools_still_work(tmp_path: Path) -> None:
    """Developing kli with kli: the root holds the ``kli`` package the process runs from (a
    copy of it, first on sys.path as an editable install would put it). The modules the host
    loaded from there are its own code; the tools run, and a tool never loads a new module
    from there."""
    import shutil

    import kli.tools

    root = (tmp_path / "kli-checkout").resolve()
    shutil.copytree(Path(kli.tools.__file__).parents[1], root / "kli",
                    ignore=shutil.ignore_patterns("__pycache__"))
    script = f"""
import json, sys
from kli.tools import Workspace
from kli.tools.core import imports
ws = Workspace({str(root)!r})
assert imports.__file__.startswith({str(root)!r}), imports.__file__
out = {{}}
for name, args in [("ws_write", {{"path": "x.ts", "content": "let a = ;\\n"}}),
                   ("ws_write", {{"path": "x.py", "content": "a = 1\\n"}}),
                   ("ws_edit", {{"path": "x.py", "old_str": "a = 1", "new_str": "a = 2"}}),
                   ("edit", {{"input": "@@ x.py\\n"}}), ("undo", {{"session": "a", "since": "10:30"}}),
                   ("image_summary", {{}}), ("eval", {{"code": "1 + 1"}})]:
    r = ws.call(name, args, source="agent")
    out[name] = r.details.get("error")
open({str(root / "kli" / "tools" / "kli_probe_new.py")!r}, "w").write("X = 1\\n")
with imports.guarded(ws.root):
    try:
        import kli.tools.kli_probe_new
        out["new"] = "imported"
    except imports.Refused:
        out["new"] = "refused"
print(json.dumps(out))
"""
    got = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(root)}, cwd=str(root), timeout=120)
    assert got.returncode == 0, got.stderr
    out = json.loads(got.stdout.strip().splitlines()[-1])
    assert "internal" not in out.values(), out
    assert out["new"] == "refused"


@pytest.mark.kernel
def test_a_kernel_started_in_the_root_runs_none_of_its_modules_and_cells_import_them(
        tmp_path: Path) -> None:
    """A real kli kernel in a root holding files named like modules the kernel loads at start
    (traitlets, zmq, ipykernel) and like the one a magic's repair widget loads later
    (ipywidgets): none of them runs; the person's cell still imports the root's own module."""
    from kli.tools.file.anchors import line_hash

    root = tmp_path / "root"
    root.mkdir()
    tripped = tmp_path / "tripped"
    marks = [sentinel(root, tripped, name) for name in ("traitlets", "zmq", "ipykernel",
                                                        "ipywidgets")]
    (root / "mine.py").write_text("X = 'the root module'\n")
    (root / "theirs.py").write_text("X = 'imported by a cell an agent ran'\n")
    (root / "a.py").write_text("a = 1\nb = 2\nc = 3\n")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import theirs\nprint(theirs.X)", id="imp")]
    nbformat.write(nb, str(root / "nb.ipynb"))
    h = kernel_harness.start_harness(root)
    try:
        _content, outputs = h.execute("import mine\nprint(mine.X)")
        assert any("the root module" in o["content"].get("text", "") for o in outputs), outputs
        agent, _hello = h.open_comm("kli.agent", {"label": "agent"})
        ran = h.call(agent, "run_cells", {"path": "nb.ipynb", "cell": "imp"})
        assert ran["ok"] and "imported by a cell an agent ran" in ran["text"], ran["text"]
        h.execute("%kli read a.py\n")
        hb = line_hash("b = 2")
        _content, outputs = h.execute(
            f"%%kli edit --repair preview\n@@ a.py\n= 2:{hb}..2:{hb}\n~b = max(2, 3\n")
        # The installed ipywidgets drew Accept / Reject.
        assert any("application/vnd.jupyter.widget-view+json" in o["content"].get("data", {})
                   for o in outputs), outputs
    finally:
        kernel_harness.stop_harness(h)
    assert [m.name for m in marks if m.exists()] == []


def test_the_kernelspec_starts_python_with_the_root_off_the_path_and_cells_and_children_as_usual(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped kernelspec (its PYTHONSAFEPATH) keeps the root off ``sys.path`` from the
    interpreter's first import: a ``runpy.py`` (what ``python -m`` runs the kernel with) or a
    ``kli/kernel/`` folder (the kernel package itself) an agent left in the root never runs at
    the next start. The person's cells still import the root's modules, and the kernel's
    children (a bash command's Python) start as usual, without the variable."""
    from kli.kernel.install import spec_source

    share = tmp_path / "share" / "jupyter" / "kernels" / "kli"
    share.parent.mkdir(parents=True)
    shutil.copytree(spec_source(), share)
    assert json.loads((share / "kernel.json").read_text())["env"].get("PYTHONSAFEPATH") == "1"
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "share" / "jupyter"))
    root = tmp_path / "root"
    root.mkdir()
    tripped = tmp_path / "tripped"
    marks = [sentinel(root, tripped, "runpy")]
    (root / "kli" / "kernel").mkdir(parents=True)
    marks.append(sentinel(root / "kli" / "kernel", tripped, "__init__"))
    (root / "mine.py").write_text("X = 'the root module'\n")
    h = kernel_harness.start_harness(root)
    try:
        _content, outputs = h.execute(
            "import sys, mine\nprint(mine.X, sys.flags.safe_path, sys.path.index('') > 0)")
        text = "".join(o["content"].get("text", "") for o in outputs)
        assert "the root module True True" in text, outputs
        agent, _hello = h.open_comm("kli.agent", {"label": "agent"})
        ran = h.call(agent, "bash", {"command": "echo ${PYTHONSAFEPATH-unset}; "
                                                f"{sys.executable} -c 'import sys; print(sys.flags.safe_path)'"})
        assert ran["ok"] and "unset" in ran["text"] and "False" in ran["text"], ran["text"]
    finally:
        kernel_harness.stop_harness(h)
    assert [m.name for m in marks if m.exists()] == []
