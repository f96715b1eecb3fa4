"""The shared head-and-tail cut, the dropped-while-running marker and the scratch saver with its
one pruning rule (tools/core/truncate.py, tools/core/scratch.py)."""

from __future__ import annotations

import os
from pathlib import Path

from kli.tools import Workspace
from kli.tools.core import scratch
from kli.tools.core.jail import Jail
from kli.tools.core.pysyntax import compile_error
from kli.tools.core.truncate import captured, dropped_marker, ends
from kli.tools.file.repair import python as repair_python
from kli.tools.ws import syntax


def test_ends_gives_two_thirds_of_the_room_to_the_head() -> None:
    assert ends("abcdefghij", 6) == ("abcd", "ij")
    assert ends("abcdefghij", 1) == ("", "j")


def test_ends_takes_the_tail_from_a_captures_kept_tail() -> None:
    assert ends("HEADHEAD", 6, tail="tailtail") == ("HEAD", "il")


def test_ends_on_lines_moves_each_cut_to_a_near_line_boundary() -> None:
    text = "".join(f"line {i}\n" for i in range(100))
    head, tail = ends(text, 60, on_lines=True)
    assert head.endswith("\n") and tail.startswith("line ")
    assert text.startswith(head) and text.endswith(tail)


def test_a_capture_with_a_dropped_middle_carries_the_one_marker() -> None:
    assert captured("ab", "", 2) == "ab"
    text = captured("head", "tail", 20)
    assert text == "head" + dropped_marker(12, 20) + "tail"
    assert "12 characters dropped while running; 20 were produced in all" in text


def test_ws_shell_marks_a_dropped_middle_with_the_shared_marker(ws: Workspace, root: Path) -> None:
    r = ws.call("ws_shell", {"command": "yes | head -c 600000"})
    saved = (root / r.details["full_output"]).read_text()
    assert "characters dropped while running; 600000 were produced in all" in saved
    assert r.details["full_output"].startswith(".kli/scratch/shell/ws_shell-")


def test_scratch_keeps_only_the_newest_files_of_a_group(root: Path) -> None:
    jail = Jail(str(root))
    (root / ".kli" / "scratch").mkdir(parents=True)
    other = root / ".kli" / "scratch" / "notes.txt"
    other.write_text("mine")
    saved = [scratch.save(jail, f"t{i}", prefix="bash", suffix="stdout.txt", keep=10) for i in range(5)]
    for n, rel in enumerate(saved):  # give each a distinct age, oldest first
        os.utime(root / rel, ns=(n * 10**9, n * 10**9))
    scratch.keep_newest(str(root / ".kli" / "scratch"), "bash-", 2)
    left = sorted(p.name for p in (root / ".kli" / "scratch").iterdir())
    assert left == sorted([os.path.basename(saved[3]), os.path.basename(saved[4]), "notes.txt"])
    assert (root / saved[4]).read_text() == "t4"


def test_the_python_parse_check_is_one_and_each_caller_words_it() -> None:
    error = compile_error("def f(:\n    pass\n", "m.py")
    assert error is not None and error.syntax and error.lineno == 1
    assert repair_python.parse_error("def f(:\n    pass\n") == f"{error.msg} (line 1, column {error.offset})"
    assert syntax.parse("m.py", "def f(:\n    pass\n").error.startswith(f"{error.msg} (line 1")
    assert compile_error("x = '\\d'\n") is None  # a warning, not an error
