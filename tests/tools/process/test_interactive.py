"""Refusing interactive programs: the first effective command word, wrappers skipped."""

from __future__ import annotations

import pytest

from kli.tools.process.interactive import INTERACTIVE, command_words, refusal

SPEC_NAMES = [
    "vi", "vim", "nvim", "nano", "emacs", "less", "more", "man", "top", "htop", "watch", "ssh",
    "mosh", "tmux", "screen",
]  # fmt: skip


def test_the_refused_names_are_exactly_the_spec_list() -> None:
    assert sorted(INTERACTIVE) == sorted(SPEC_NAMES)


@pytest.mark.parametrize("name", SPEC_NAMES)
def test_each_spec_name_is_refused_with_advice(name: str) -> None:
    message = refusal(f"{name} somefile")
    assert message is not None
    assert message.startswith(f"refused: {name} is an interactive program")
    assert "Nothing was run" in message and "Instead: " in message
    assert len(message.split("Instead: ", 1)[1]) > 20


@pytest.mark.parametrize(
    "command",
    [
        "/usr/bin/vim notes.txt",
        "FOO=1 BAR=2 vim x",
        "env vim x",
        "env -i vim x",
        "env -u HOME vim x",
        "env -i FOO=bar vim x",
        "command vim x",
        "command -p vim x",
        "exec vim x",
        "time vim x",
        "time -p vim x",
        "sudo vim /etc/hosts",
        "sudo -u root vim /etc/hosts",
        "sudo -E -u root -- less /var/log/syslog",
        "doas -u root nano x",
        "FOO=1 sudo -u root env -i time -p /usr/bin/top",
        "git log | less",
        "make; vim out.txt",
        "true && man ls",
        "false || ssh host",
        "echo hi\nwatch date",
        "(top)",
        "if true; then htop; fi",
        "for f in a b; do nano $f; done",
        "sleep 1 & tmux",
        'x=$(ls); "vim" a',
        "(cd sub);less x",
        "make 2>&1 >log; top",
        ">out.txt vim",
        "cat <<EOF > notes\nplain text\nEOF\nvim notes",
        "cat <<-'END'\n\tless\n\tEND\nless notes",
    ],
)
def test_wrapped_or_later_interactive_commands_are_refused(command: str) -> None:
    assert refusal(command) is not None, command


@pytest.mark.parametrize(
    "command",
    [
        "echo vim",
        "echo 'less; more'",
        'printf "%s\\n" "a | vim"',
        "grep -r vim .",
        "command -v vim",
        "command -V less",
        "vimdiff_helper --version",
        "ls # then vim",
        "# vim is an editor\nls",
        "cat file.txt | head -n 5",
        "git --no-pager log -n 3",
        "ps aux",
        "sudo -u vim ls",
        "env -u vim ls",
        "ls >vim",
        "cat < less",
        "echo a 2>&1 | cat",
        "cat <<'EOF'\nless is more\nEOF",
    ],
)
def test_non_interactive_commands_run(command: str) -> None:
    assert refusal(command) is None, command


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("A=1 env -i B=2 sudo -u x time -p ls -l | wc -l", ["ls", "wc"]),
        ("cd dir && make test; echo $?", ["cd", "make", "echo"]),
        ("/bin/echo x", ["echo"]),
    ],
)
def test_command_words_are_the_effective_first_words(command: str, words: list[str]) -> None:
    assert command_words(command) == words


def test_unbalanced_quotes_still_judge_the_first_word() -> None:
    assert refusal("vim 'unterminated") is not None
    assert refusal("echo 'unterminated") is None


@pytest.mark.parametrize(
    ("name", "advice"),
    [
        ("less", "head -n"),
        ("more", "cat FILE"),
        ("vim", "edit tools"),
        ("top", "ps aux"),
        ("ssh", "ask the user"),
        ("man", "--help"),
        ("watch", "once"),
        ("screen", "nohup"),
    ],
)
def test_refusal_suggests_what_to_do_instead(name: str, advice: str) -> None:
    message = refusal(name)
    assert message is not None and advice in message
