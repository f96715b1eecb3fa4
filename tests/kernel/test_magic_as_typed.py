"""The magics as people type them: unknown options named, a near-miss tool name corrected,
``%kli tools --profile`` honoured, a one-line patch pointed to the cell form, a denied call and
``%kli caps`` said for the person, and Tab completion
of tool names then options — in process (IPython's completer) and through a real kernel's
``complete_request``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.completer import provisionalcompleter
from IPython.core.interactiveshell import InteractiveShell

from kli.kernel.comms import Hub
from kli.kernel.magics import (
    MagicUsageError,
    completions,
    parse_magic_args,
    parse_tools_args,
    register_aliases,
    register_magics,
)
from kli.tools import Workspace
from kli.tools.registry import REGISTRY

pytestmark = pytest.mark.kernel
T = REGISTRY.tools


@pytest.fixture
def shell(root: Path) -> Iterator[Any]:
    (root / "a.py").write_text("x = 1\n")
    sh = InteractiveShell.instance()
    ws = Workspace(str(root), namespace=sh.user_ns)
    register_aliases(sh, register_magics(sh, Hub(None, ws)))
    yield sh
    InteractiveShell.clear_instance()


def test_an_unknown_option_after_a_path_is_named_not_read_as_part_of_the_path() -> None:
    with pytest.raises(MagicUsageError,
                       match=r"unknown option --bogus \(accepted: --path, --start, --end, --raw\)"):
        parse_magic_args(T["read"], "a.py --bogus 3")
    with pytest.raises(MagicUsageError, match="unknown option --bogus"):
        parse_magic_args(T["ws_delete"], "old.py --bogus")


def test_commands_and_code_keep_their_own_dashes_verbatim() -> None:
    assert parse_magic_args(T["bash"], "grep --count x f") == {"command": "grep --count x f"}
    assert parse_magic_args(T["eval"], "f(--x)") == {"code": "f(--x)"}


def test_magic_line_prints_unknown_option_with_usage(shell: Any,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("kli", "read a.py --bogus 3")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "%kli read: unknown option --bogus (accepted: --path, --start, --end, --raw)." \
        in captured.err
    assert "Usage: %kli read PATH" in captured.err


@pytest.mark.parametrize(("typed", "meant"), [("raed", "read"), ("ws_gerp", "ws_grep")])
def test_help_for_a_misspelt_tool_says_did_you_mean(shell: Any, typed: str, meant: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("kli", f"help {typed}")
    err = capsys.readouterr().err
    assert f"%kli help: unknown tool {typed!r}. Did you mean {meant}" in err


def test_tools_profile_option_lists_only_that_profile(shell: Any,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("kli", "tools --profile slmcode")
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert names == REGISTRY.names("slmcode")
    shell.run_line_magic("kli", "tools --profile=kli")
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert names == REGISTRY.names("kli")
    shell.run_line_magic("kli", "tools")
    assert len(capsys.readouterr().out.splitlines()) == len(REGISTRY.tools)


@pytest.mark.parametrize(("line", "message"), [
    ("--profile lisp", "unknown profile 'lisp'; the profiles are kli, slmcode and all (every tool)."),
    ("--bogus", "unknown option --bogus (accepted: --profile)"),
    ("--profile", "--profile needs a value"),
])
def test_tools_refuses_what_it_does_not_take(line: str, message: str) -> None:
    with pytest.raises(MagicUsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_tools_args(line)


def test_a_one_line_patch_with_no_ops_points_to_the_cell_form(
        shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("kli", "read a.py")
    capsys.readouterr()
    shell.run_line_magic("kli", "edit @@ a.py = 1:80 ~x = 2")
    err = capsys.readouterr().err
    assert "has no ops" in err
    assert ("The text after %kli edit was given on one line ('@@ a.py = 1:80 ~x = 2'), and it "
            "needs its line breaks. Write it in a cell instead: %%kli edit on the first line, "
            "the text on the lines below." in err)


def test_a_patch_given_as_a_cell_gets_no_such_hint(shell: Any,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_cell_magic("kli", "edit", "@@ a.py\n")
    err = capsys.readouterr().err
    assert "has no ops" in err and "%%kli edit on its first line" not in err


@pytest.mark.parametrize(("line", "expected"), [
    ("%kli rea", ["read"]),
    ("%kli ws_g", ["ws_glob", "ws_grep"]),
    ("%kli to", ["tools"]),
    ("%kli help ws_r", ["ws_read"]),
    ("%kli read a.py --s", ["--start"]),
    ("%kli read a.py --start 2 --", ["--end", "--raw", "--no-raw"]),
    ("%kli read --", ["--path", "--start", "--end", "--raw", "--no-raw"]),
    ("%kli edit --repair ", ["safe", "preview", "reject"]),
    ("%kli tools --", ["--profile"]),
    ("%kli tools --profile s", ["slmcode"]),
    ("%%kli bash --t", ["--timeout"]),
    ("x = 1", []),
])
def test_completions_offer_tool_names_then_options(line: str, expected: list[str]) -> None:
    assert completions(line)[1] == expected


def test_alias_lines_complete_their_tool_options() -> None:
    assert completions("%read a.py --e", ["read"])[1] == ["--end"]
    assert completions("%read a.py --e")[1] == []  # not registered as an alias: no candidates


def test_ipython_completer_offers_only_the_magic_candidates(shell: Any) -> None:
    with provisionalcompleter():
        got = [c.text for c in shell.Completer.completions("%kli read a.py --s", 18)]
        python = [c.text for c in shell.Completer.completions("pri", 3)]
    assert got == ["--start"]
    assert "print" in python


def test_kernel_complete_request_completes_tool_names_and_options(kernel: Any) -> None:
    for code, expected in [("%kli rea", "read"), ("x = 1\n%kli read a.py --st", "--start")]:
        msg_id = kernel.kc.complete(code, len(code))
        reply = kernel.kc.get_shell_msg(timeout=30)
        assert reply["parent_header"]["msg_id"] == msg_id
        content = reply["content"]
        assert content["status"] == "ok"
        assert content["matches"] == [expected], content
        fragment = code.rsplit(" ", 1)[-1]
        assert content["cursor_end"] - content["cursor_start"] == len(fragment)


def test_a_denied_magic_tells_the_person_where_to_grant_and_the_agent_to_ask(
        shell: Any, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (root / ".kli").mkdir(exist_ok=True)
    (root / ".kli" / "settings.json").write_text('{"capabilities": ["file/read"]}')
    shell.run_line_magic("kli", "bash echo hi")
    shown = capsys.readouterr()
    said = shown.out + shown.err
    assert "bash denied: capability 'process/exec' is not granted" in said
    assert 'add "process/exec" to the "capabilities" list in .kli/settings.json' in said
    assert "Ask the user" not in said
    agent = Workspace(str(root)).call("bash", {"command": "echo hi"})
    assert "Ask the user to grant 'process/exec'" in agent.text


def test_caps_says_when_there_is_no_user_settings_file(
        shell: Any, root: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "xdg"))
    shell.run_line_magic("kli", "caps")
    out = capsys.readouterr().out
    user = root / "xdg" / "kli" / "settings.json"
    assert f"user settings:    (none; {user} would be read if it existed)" in out
    user.parent.mkdir(parents=True)
    user.write_text("{}")
    shell.run_line_magic("kli", "caps")
    assert f"user settings:    {user}\n" in capsys.readouterr().out + "\n"
