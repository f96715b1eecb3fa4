"""Refusing interactive programs before a shell command runs.

A program that waits for a terminal (an editor, a pager, a monitor, a remote login) would sit
until its timeout with nobody to answer it. ``refusal(command)`` looks at the first effective
command word and returns the message to send back instead of running, or None.

The first effective word is found by skipping leading ``NAME=value`` assignments and the
wrappers ``env``, ``command``, ``exec``, ``time``, ``sudo``, ``doas`` with their own options
(``sudo -u root``, ``env -i``, ``env -u VAR``, ``time -p``, ``command -p``), then comparing the
basename (``/usr/bin/vim`` is ``vim``). ``command -v vim`` / ``command -V vim`` only look a
name up, so they run.

Beyond the specification's "first word", the same test is applied to the first word of EVERY
simple command in the line — after ``;``, ``&&``, ``||``, ``|``, ``&``, a newline, ``(`` and the
reserved words ``if then else elif do while until ! {`` — because ``git log | less`` or
``make; vim out.txt`` hang just the same. Arguments are never inspected: ``echo vim`` runs.
Command substitutions (``$(vim)``) are not inspected.
"""

from __future__ import annotations

import os
import re
import shlex

# The programs the specification refuses, each with what to do instead.
INTERACTIVE: dict[str, str] = {
    "vi": "an editor needs a terminal; use the read and edit tools, or sed -i / a heredoc "
    "(cat > FILE <<'EOF' … EOF) to change a file",
    "vim": "",
    "nvim": "",
    "nano": "",
    "emacs": "",
    "less": "a pager waits for keys; print instead with cat FILE, head -n 100 FILE, "
    "tail -n 100 FILE or sed -n '200,300p' FILE (for git, git --no-pager …)",
    "more": "",
    "man": "man pages open in a pager; run PROGRAM --help instead",
    "top": "a live monitor never ends; take one snapshot with ps aux --sort=-%cpu | head -n 20",
    "htop": "",
    "watch": "watch repeats forever; run the command once, or a bounded loop such as "
    "for i in 1 2 3; do COMMAND; sleep 1; done",
    "ssh": "a remote login may prompt for passwords or host keys, which nobody can answer "
    "here; ask the user to run it",
    "mosh": "",
    "tmux": "a terminal multiplexer needs a terminal; to keep something running in the "
    "background use nohup COMMAND > out.log 2>&1 & and read out.log",
    "screen": "",
}
_SAME_AS = {
    "vim": "vi", "nvim": "vi", "nano": "vi", "emacs": "vi", "more": "less", "htop": "top",
    "mosh": "ssh", "screen": "tmux",
}  # fmt: skip

# Wrappers skipped before the effective word, with their options that take a value.
WRAPPERS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "command": frozenset(),
    "exec": frozenset({"-a"}),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "sudo": frozenset(
        "-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role "
        "-t --type -U --other-user -T --command-timeout -R --chroot".split()
    ),
    "doas": frozenset({"-u", "-C"}),
}
# ``command -v NAME`` and ``command -V NAME`` describe NAME without running it.
_LOOKUP_ONLY = {"command": frozenset({"-v", "-V"})}

_OPERATOR_CHARS = frozenset(";&|()<>\n")
_RESERVED = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}"})


def _is_assignment(word: str) -> bool:
    name, eq, _ = word.partition("=")
    return bool(eq) and name.isidentifier()


_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([^\s'\"<>|&;()]+)\2")


def _drop_heredoc_bodies(command: str) -> str:
    """Remove here-document bodies: their lines are data, not commands."""
    lines = command.split("\n")
    kept: list[str] = []
    ends: list[tuple[str, bool]] = []
    for line in lines:
        if ends:
            delimiter, strip_tabs = ends[0]
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                ends.pop(0)
            continue
        kept.append(line)
        ends = [(m.group(3), m.group(1) == "-") for m in _HEREDOC.finditer(line)]
    return "\n".join(kept)


def _tokens(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


def command_words(command: str) -> list[str]:
    """The effective first word of each simple command in ``command``, in order."""
    try:
        tokens = _tokens(_drop_heredoc_bodies(command))
    except ValueError:  # unbalanced quotes: the shell will refuse it; judge the first word
        tokens = command.split()[:8]
    words: list[str] = []
    at_start = True
    in_comment = False
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        operator = set(tok) <= _OPERATOR_CHARS  # shlex joins adjacent ones: ");", ">&"
        if operator and "\n" in tok:
            at_start, in_comment = True, False
            continue
        if in_comment:
            continue
        if operator and ("<" in tok or ">" in tok):
            if at_start:
                i += 1  # a leading redirection's target
            continue
        if operator:
            at_start = True  # ; & | && || ( ) and their runs
            continue
        if not at_start:
            continue
        if tok.startswith("#"):
            in_comment = True
            continue
        if tok in _RESERVED or _is_assignment(tok):
            continue
        name = os.path.basename(tok)
        if name in WRAPPERS:
            with_value = WRAPPERS[name]
            while i < len(tokens) and tokens[i].startswith("-"):
                opt = tokens[i]
                i += 1
                if opt in _LOOKUP_ONLY.get(name, ()):
                    at_start = False  # ``command -v vim`` only looks vim up
                    break
                if opt == "--":
                    break
                if opt in with_value and "=" not in opt:
                    i += 1
            if name == "env":
                while i < len(tokens) and _is_assignment(tokens[i]):
                    i += 1
            continue
        words.append(name)
        at_start = False
    return words


# Any refused name standing as a word of its own (a path may precede it). A command without one
# is let through without tokenizing it (shlex costs ~20 µs; this search ~1 µs).
_MENTIONS = re.compile(r"(?<![\w.-])(?:" + "|".join(INTERACTIVE) + r")(?![\w.-])")


def refusal(command: str) -> str | None:
    """The refusal message for ``command``, or None when it may run."""
    if _MENTIONS.search(command) is None:
        return None
    for word in command_words(command):
        if word in INTERACTIVE:
            advice = INTERACTIVE[word] or INTERACTIVE[_SAME_AS[word]]
            return (
                f"refused: {word} is an interactive program and this shell has no terminal "
                f"(it would wait until the timeout). Nothing was run. Instead: {advice}."
            )
    return None
