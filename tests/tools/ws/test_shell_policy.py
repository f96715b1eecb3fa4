"""shell_policy: the lexer's refusals and the tiers, decided on strings (nothing runs)."""

from __future__ import annotations

import pytest

from kli.tools.ws.shell_policy import check, classify, lex

ROOT = "/proj"


def _v(command: str, policy: str = "build"):  # type: ignore[no-untyped-def]
    return check(command, policy, ROOT, ROOT)


@pytest.mark.parametrize(
    "command",
    ["echo $(whoami)", "echo `whoami`", 'echo "$(id)"', 'echo "a `id` b"', "diff <(ls a) <(ls b)",
     "cat >(wc)"],
)
def test_substitution_is_refused(command: str) -> None:
    v = _v(command, "any")
    assert not v.allowed and v.rule == "substitution"
    assert "substitution" in v.message


@pytest.mark.parametrize("command", ["echo '$(not run)'", "grep -n '`x`' f", r"echo \$HOME \`"])
def test_quoted_or_escaped_substitution_is_plain_text(command: str) -> None:
    assert _v(command).allowed


@pytest.mark.parametrize("command", ["sleep 10 &", "make & make test", "pytest&"])
def test_backgrounding_is_refused(command: str) -> None:
    v = _v(command, "any")
    assert not v.allowed and v.rule == "background"


@pytest.mark.parametrize(
    "command",
    ["make && make test", "pytest -q 2>&1 | tail -5", "ls &> /dev/null", "ls 2>/dev/null || true",
     "ls |& grep x", "ls >&2"],
)
def test_ampersands_that_are_not_backgrounding(command: str) -> None:
    assert _v(command).allowed, _v(command).message


@pytest.mark.parametrize("command", ["ls; rm -rf x", "ls\nls", "cd a; make"])
def test_one_command_per_call(command: str) -> None:
    v = _v(command, "any")
    assert not v.allowed and v.rule == "one_command"
    assert "one command per call" in v.message


def test_a_comment_does_not_hide_a_second_line() -> None:
    v = _v("ls # list\nrm -rf x", "any")
    assert not v.allowed and v.rule == "one_command"
    assert _v("ls # just a comment").allowed


def test_heredoc_refusal_points_at_ws_write() -> None:
    v = _v("cat > f <<EOF\nhello\nEOF", "any")
    assert not v.allowed and "here-document" in v.message


def test_trailing_semicolon_or_newline_is_fine() -> None:
    assert _v("ls;").allowed and _v("ls\n").allowed and _v('echo "a;b"').allowed


@pytest.mark.parametrize(
    "command",
    ["echo hi > out.txt", "cat a >> b", "ls 2> err.log", "ls &> all.log", "ls >| f", "ls >&f",
     "echo x | tee notes.md", "echo x | tee -a /dev/null f", "cd sub && echo x > .kli/scratch/o"],
)
def test_write_redirection_is_refused_in_every_policy(command: str) -> None:
    for policy in ("readonly", "build", "any"):
        v = _v(command, policy)
        assert not v.allowed and v.rule == "write_redirect", (command, v)
        assert "ws_write" in v.message and "ws_edit" in v.message


@pytest.mark.parametrize(
    "command",
    ["ls > /dev/null", "pytest 2>/dev/null", "ls > .kli/scratch/out.txt", "ls | tee /dev/null",
     "ls >> /proj/.kli/scratch/log", "cat < input.txt"],
)
def test_redirection_to_null_scratch_or_input_is_fine(command: str) -> None:
    assert _v(command).allowed, _v(command).message


@pytest.mark.parametrize(
    "command",
    ["ls -la", "cat a.py", "grep -rn foo src", "git status", "git diff --cached", "git log -5",
     "find . -name '*.py'", "wc -l a b", "sed -n 1,5p f", "head -3 f | sort | uniq -c",
     "git branch -a", "git -C sub log", "cd src && ls", "date +%s", "uniq -c f", "hostname"],
)
def test_readonly_tier(command: str) -> None:
    v = _v(command, "readonly")
    assert v.allowed and v.tier == "readonly", command


@pytest.mark.parametrize(
    "command",
    ["pytest -q tests", "make", "npm test", "go test ./...", "cargo test", "python -m pytest",
     "python3 -m unittest discover", "python run_me.py", "npm run build", "tox -e py311",
     "PYTHONPATH=src python -m mypy pkg", "timeout 60 pytest -x"],
)
def test_build_tier_allowed_by_default_not_in_readonly(command: str) -> None:
    assert _v(command, "build").allowed and _v(command, "build").tier == "build", command
    v = _v(command, "readonly")
    assert not v.allowed and v.rule == "policy"


@pytest.mark.parametrize(
    "command",
    ["rm -rf build", "curl http://x", "python -c 'print(1)'", "sed -i s/a/b/ f",
     "find . -delete", "git commit -m x", "git push", "pip install x", "bash script.sh",
     "node -e 1", "ls | xargs rm", "uniq in.txt out.txt", "xxd a b", "tree -o t.txt",
     "git diff --output=d.patch", "hostname newname", "date -s 2020-01-01"],
)
def test_other_commands_need_policy_any(command: str) -> None:
    v = _v(command, "build")
    assert not v.allowed and v.rule == "policy" and v.tier == "any", command
    assert '"shell_policy": "any"' in v.message
    assert _v(command, "any").allowed


def test_policy_refusal_points_at_the_ws_tool() -> None:
    assert "ws_delete" in _v("rm a.txt").message
    assert "ws_mv" in _v("mv a b").message
    assert "ws_edit" in _v("sed -i s/a/b/ f").message


def test_control_dir_is_off_limits_for_non_readonly_commands() -> None:
    v = _v("rm .kli/settings.json", "any")
    assert not v.allowed and v.rule == "control_dir"
    assert _v("cat .kli/settings.json", "readonly").allowed
    assert _v("rm .kli/scratch/x", "any").allowed


def test_a_git_folder_is_off_limits_for_non_readonly_commands_at_any_depth() -> None:
    for command in ("rm -rf .git", "cp evil .git/config", "mv hook sub/.git/hooks/pre-commit"):
        v = _v(command, "any")
        assert not v.allowed and v.rule == "control_dir", command
        assert ".git/" in v.message
    assert _v("cat .git/HEAD", "readonly").allowed
    assert _v("rm .gitignore", "any").allowed


def test_lex_splits_pipelines_and_keeps_quoted_words() -> None:
    segs = lex("grep -n 'a b' \"c d\" | sort 2>&1 > /dev/null")
    assert [s.words for s in segs] == [["grep", "-n", "a b", "c d"], ["sort"]]
    assert [(r.op, r.target) for r in segs[1].redirects] == [(">", "/dev/null")]


def test_classify_skips_assignments_and_wrappers() -> None:
    assert classify(["FOO=1", "time", "pytest"]) == "build"
    assert classify(["env", "A=1", "rm", "x"]) == "any"
    assert classify(["nice", "-n", "5", "ls"]) == "readonly"


# -- properties -------------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SHELLISH = st.text(alphabet=list("ab -|&;<>()$`'\"\\\n#=./12"), max_size=40)


@settings(max_examples=400, deadline=None)
@given(command=_SHELLISH)
def test_check_never_crashes(command: str) -> None:
    v = check(command, "any", ROOT, ROOT)
    assert isinstance(v.allowed, bool)
    assert v.allowed or v.message


_WORD = st.text(alphabet="abcxyz-./_", min_size=1, max_size=6)
_JOIN = st.sampled_from([" ", " | ", " && ", " || ", " 2>&1 | "])
_BAD = st.sampled_from(["$(id)", "`id`", '"$(id)"', '"a`id`"', " & ", "<(ls)", "; ls", "\nls", " #c\nls",
                        "> out.txt", ">>log", " | tee f"])


@settings(max_examples=400, deadline=None)
@given(before=st.lists(st.tuples(_WORD, _JOIN), max_size=4), bad=_BAD,
       after=st.lists(st.tuples(_JOIN, _WORD), max_size=3))
def test_an_unquoted_forbidden_construct_anywhere_is_refused(
    before: list[tuple[str, str]], bad: str, after: list[tuple[str, str]]
) -> None:
    command = "echo " + "".join(w + j for w, j in before) + bad + "".join(j + w for j, w in after)
    v = check(command, "any", ROOT, ROOT)
    assert not v.allowed, command
    assert v.rule in ("substitution", "background", "one_command", "write_redirect"), v
