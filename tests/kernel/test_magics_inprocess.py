"""The magics on an in-process IPython shell: capabilities, aliases that shadow nothing, the
magic session's anchors persisting across calls."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from kli.kernel.comms import Hub
from kli.kernel.magics import register_aliases, register_magics
from kli.tools import Workspace
from kli.tools.file.anchors import line_hash

pytestmark = pytest.mark.kernel


@pytest.fixture
def shell(root: Path) -> Iterator[tuple[Any, Workspace]]:
    sh = InteractiveShell.instance()
    ws = Workspace(str(root), {"capabilities": ["file/read", "file/edit"]}, namespace=sh.user_ns)
    magics = register_magics(sh, Hub(None, ws))
    register_aliases(sh, magics)
    yield sh, ws
    InteractiveShell.clear_instance()


def test_caps_lists_granted_and_denied_gates(shell: tuple[Any, Workspace],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    sh, _ws = shell
    sh.run_line_magic("kli", "caps")
    out = capsys.readouterr().out
    assert "file/read      granted" in out and "file/edit      granted" in out
    assert "process/exec   DENIED" in out and "image/eval     DENIED" in out
    assert 'capabilities = ["file/read", "file/edit"]' in out


def test_caps_lists_every_project_settings_file_up_the_tree_nearest_first(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inner = root / "pkg" / "sub"
    for where, data in ((root, {"capabilities": ["file/read", "file/edit", "process/exec"]}),
                        (root / "pkg", {"approval": "auto"}),
                        (inner, {"capabilities": ["file/read", "process/exec"]})):
        (where / ".kli").mkdir(parents=True)
        (where / ".kli" / "settings.json").write_text(json.dumps(data))
    sh = InteractiveShell.instance()
    try:
        ws = Workspace(str(inner), namespace=sh.user_ns)
        register_magics(sh, Hub(None, ws))
        sh.run_line_magic("kli", "caps")
        out = capsys.readouterr().out
    finally:
        InteractiveShell.clear_instance()
    assert "file/read      granted" in out and "process/exec   granted" in out
    assert "file/edit      DENIED" in out  # the nearer file does not grant it
    rows = [line.strip() for line in out.splitlines() if line.startswith("  ")]
    assert rows == [
        f'{inner}/.kli/settings.json  capabilities = ["file/read", "process/exec"]',
        f"{root / 'pkg'}/.kli/settings.json  no 'capabilities'",
        f'{root}/.kli/settings.json  capabilities = ["file/read", "file/edit", "process/exec"]',
    ]


def test_a_denied_tool_shows_an_error_not_an_exception(shell: tuple[Any, Workspace],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    sh, _ws = shell
    sh.run_line_magic("kli", "bash echo hi")
    captured = capsys.readouterr()
    assert "bash denied: capability 'process/exec' is not granted" in captured.err
    assert captured.out == ""


def test_aliases_never_shadow_ipython_magics(shell: tuple[Any, Workspace]) -> None:
    sh, _ws = shell
    aliases = set(sh._kli_aliases)
    assert {"read", "find", "search", "write", "eval"} <= aliases
    assert "edit" not in aliases and "bash" not in aliases
    assert sh.magics_manager.magics["line"]["edit"].__name__ != "alias"
    assert sh.magics_manager.magics["cell"]["bash"].__name__ != "alias"
    assert sh.magics_manager.magics["line"]["read"].__name__ == "alias"


def test_magic_session_keeps_anchors_from_one_call_to_the_next(shell: tuple[Any, Workspace],
                                                               root: Path) -> None:
    sh, ws = shell
    (root / "m.py").write_text("one = 1\ntwo = 2\n")
    sh.run_line_magic("read", "m.py")
    h = line_hash("two = 2")
    sh.run_cell_magic("kli", "edit", f"@@ m.py\n= 2:{h}..2:{h}\n~two = 22\n")
    assert (root / "m.py").read_text() == "one = 1\ntwo = 22\n"
    magic = [s for s in ws.sessions.values() if s.label == "magic"]
    assert len(magic) == 1 and magic[0].views
