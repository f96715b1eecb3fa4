"""What ws_shell may run: a small shell lexer and the safety rules, as data with reasons.

``check(command, policy, root, cwd)`` returns a ``Verdict`` (allowed or not, the tier the
command needs, the rule that refused it and the message for the model). Nothing here runs
anything, so every rule is tested on strings.

Rules, in order:

1. One command per call: a newline or ``;`` outside quotes is refused (``&&``, ``||`` and pipes
   join the steps of one command and are allowed).
2. No command substitution: ``$(…)`` and backticks (outside single quotes), and process
   substitution ``<(…)`` / ``>(…)``.
3. No backgrounding: a lone ``&`` (not part of ``&&``, ``>&``, ``&>`` or ``|&``).
4. The write-redirection guard, in every policy: ``>``, ``>>``, ``>|``, ``&>``, ``<>`` into a
   file, and ``tee FILE``, are refused unless the file is ``/dev/null`` (or stdout/stderr) or
   under ``.kli/scratch/``: files are created and changed with ws_write / ws_edit.
5. ``.kli/`` is off limits: a command that is not read-only and names a path under ``.kli/``
   (other than ``.kli/scratch/``) is refused.
6. Tiers. Every command of a pipeline or ``&&`` chain is classified; the highest tier wins:
   ``readonly`` (ls, cat, grep, git status/diff/log, …), ``build`` (pytest, make, npm test,
   go test, cargo test, python -m …, python script.py), ``any`` (everything else). The
   ``shell_policy`` setting — ``"readonly"``, ``"build"`` (the default) or ``"any"`` — is the
   highest tier allowed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

POLICIES = ("readonly", "build", "any")
TIER_RANK = {"readonly": 0, "build": 1, "any": 2}

READONLY_COMMANDS = frozenset(
    """ls cat head tail wc grep egrep fgrep rg ag find file stat pwd echo printf which type
    whereis diff cmp sort uniq cut tr du df tree sed true false date uname whoami id hostname
    basename dirname realpath readlink test [ nl od xxd hexdump md5sum sha1sum sha256sum
    sha512sum cksum jq column fold expand unexpand rev tac comm join paste seq printenv ps free
    uptime nproc cd pushd popd sleep yes tee""".split()
)

GIT_READONLY = frozenset(
    """status diff log show rev-parse ls-files blame grep describe shortlog reflog cat-file
    ls-tree merge-base name-rev whatchanged show-ref count-objects version help""".split()
)
# git subcommands that only list unless given a name to create/delete.
GIT_LISTING = frozenset({"branch", "tag", "remote", "stash", "config", "worktree"})
GIT_LISTING_FLAGS = frozenset(
    {
        "-a",
        "-r",
        "-v",
        "-vv",
        "--all",
        "--list",
        "-l",
        "--show-current",
        "--remotes",
        "--verbose",
        "--get",
        "--get-all",
        "--get-regexp",
        "list",
        "show",
        "--merged",
        "--no-merged",
        "--contains",
    }
)

BUILD_COMMANDS = frozenset(
    """pytest py.test tox nox make cmake ctest ninja ruff mypy pyright flake8 pylint black
    eslint tsc jest vitest mocha gradle gradlew mvn javac gcc g++ cc clang clang++ rustc
    unittest""".split()
)
NPM_BUILD = frozenset(
    {
        "test",
        "t",
        "run",
        "run-script",
        "build",
        "ci",
        "install",
        "i",
        "lint",
        "ls",
        "list",
        "audit",
        "outdated",
        "version",
        "--version",
        "-v",
    }
)
GO_BUILD = frozenset(
    {"test", "build", "vet", "run", "fmt", "mod", "list", "version", "env", "generate", "doc"}
)
CARGO_BUILD = frozenset(
    {
        "test",
        "build",
        "check",
        "clippy",
        "run",
        "fmt",
        "bench",
        "doc",
        "tree",
        "metadata",
        "--version",
        "-V",
    }
)
DOTNET_BUILD = frozenset({"test", "build", "run", "restore", "--version"})
PYTHON_NAMES = ("python", "python3", "python2", "pypy", "pypy3")

# Commands a small model reaches for where a ws_* tool is the right one.
TOOL_HINTS = {
    "rm": "To delete a file use ws_delete (it keeps a checkpoint).",
    "rmdir": "To delete an empty folder use ws_delete.",
    "mv": "To rename or move a file use ws_mv.",
    "cp": "To copy a file, ws_read it and ws_write the copy.",
    "touch": "To create a file use ws_write.",
    "mkdir": "ws_write creates missing parent folders itself.",
    "sed": "To change a file use ws_edit (old_str → new_str).",
    "perl": "To change a file use ws_edit (old_str → new_str).",
    "curl": "",
    "wget": "",
}

WRAPPERS = frozenset({"time", "nice", "nohup", "command", "builtin", "exec", "stdbuf"})
SAFE_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})


@dataclass
class Redirect:
    op: str
    target: str


@dataclass
class Segment:
    """One simple command: its words (quotes removed) and redirections."""

    words: list[str] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    tier: str  # the tier the command needs ("readonly", "build", "any")
    rule: str  # "ok" or the refusing rule's name
    message: str = ""


class ShellSyntaxRefused(Exception):
    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message


def lex(command: str) -> list[Segment]:
    """Split ``command`` into simple commands, refusing rules 1–3 with
    ``ShellSyntaxRefused``."""
    return _Lexer(command).segments()


def _substitution(what: str) -> ShellSyntaxRefused:
    return ShellSyntaxRefused(
        "substitution",
        f"{what} is not allowed: ws_shell runs one plain command, without command "
        "substitution. Run the inner command as its own ws_shell call first, then put its "
        "output into the next command yourself.",
    )


BACKTICKS = "command substitution with backticks (`…`)"
DOLLAR_PAREN = "command substitution $(…)"


def _several_commands(separator: str, command: str) -> ShellSyntaxRefused:
    return ShellSyntaxRefused(
        "one_command",
        "ws_shell runs one command per call; this has several (separated by "
        f"{'a newline' if separator == chr(10) else 'a ;'}). Run them as separate ws_shell "
        "calls, or join steps that depend on each other with &&."
        + (
            " A here-document is several lines too: to create a file use ws_write."
            if "<<" in command
            else ""
        ),
    )


def _no_target(op: str) -> ShellSyntaxRefused:
    return ShellSyntaxRefused("syntax", f"redirection {op!r} has no target.")


class _Lexer:
    """One pass over a command, left to right. ``i`` is the next character; each ``_…``
    method reads one token starting there and moves ``i`` past it. The word being built
    (``word``; ``has_word`` so that ``""`` counts as an argument) ends at a blank or an
    operator, and goes to the current segment as a word, or as the target of the pending
    redirection."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.n = len(command)
        self.i = 0
        self.found: list[Segment] = [Segment()]
        self.word: list[str] = []
        self.has_word = False
        self.pending_redirect: str | None = None

    def segments(self) -> list[Segment]:
        while self.i < self.n:
            self._token(self.command[self.i])
        self._end_word()
        if self.pending_redirect is not None:
            raise _no_target(self.pending_redirect)
        return [s for s in self.found if s.words or s.redirects]

    def _token(self, c: str) -> None:
        if c == "\\" and self.i + 1 < self.n:
            self._escaped()
        elif c == "'":
            self._single_quoted()
        elif c == '"':
            self._double_quoted()
        elif c == "`":
            raise _substitution(BACKTICKS)
        elif c == "$" and self._at(self.i + 1, "("):
            raise _substitution(DOLLAR_PAREN)
        elif c in "<>" and self._at(self.i + 1, "("):
            raise _substitution(f"process substitution {c}(…)")
        elif c == "#" and not self.has_word:
            self._comment()
        elif c in "\n;":
            self._separator(c)
        elif c in " \t":
            self._end_word()
            self.i += 1
        elif c == "&":
            self._ampersand()
        elif c == "|":
            self._new_segment()
            self.i += 2 if self._at(self.i + 1, "|", "&") else 1
        elif c in "()":
            self._new_segment()
            self.i += 1
        elif c in "<>":
            self._redirection(c)
        else:
            self._add(c)
            self.i += 1

    def _at(self, k: int, *options: str) -> bool:
        """The character at ``k`` is one of ``options``."""
        return k < self.n and self.command[k] in options

    # -- words and segments -------------------------------------------------------------------
    def _add(self, text: str) -> None:
        self.word.append(text)
        self.has_word = True

    def _end_word(self) -> None:
        if not self.has_word:
            return
        text = "".join(self.word)
        if self.pending_redirect is not None:
            self.found[-1].redirects.append(Redirect(self.pending_redirect, text))
            self.pending_redirect = None
        else:
            self.found[-1].words.append(text)
        self.word, self.has_word = [], False

    def _new_segment(self) -> None:
        self._end_word()
        if self.pending_redirect is not None:
            raise _no_target(self.pending_redirect)
        if self.found[-1].words or self.found[-1].redirects:
            self.found.append(Segment())

    # -- tokens -------------------------------------------------------------------------------
    def _escaped(self) -> None:
        """A backslash: a line continuation, or the next character taken literally."""
        if self.command[self.i + 1] != "\n":
            self._add(self.command[self.i + 1])
        self.i += 2

    def _single_quoted(self) -> None:
        end = self.command.find("'", self.i + 1)
        if end < 0:
            raise ShellSyntaxRefused("syntax", "unterminated single quote in the command.")
        self._add(self.command[self.i + 1 : end])
        self.i = end + 1

    def _double_quoted(self) -> None:
        """Inside double quotes a backslash escapes only a double quote, a backslash, ``$``, a
        backtick and a newline; command substitution still runs there (so it is refused)."""
        command, n = self.command, self.n
        i = self.i + 1
        self.has_word = True
        while i < n and command[i] != '"':
            d = command[i]
            if d == "\\" and self._at(i + 1, '"', "\\", "$", "`", "\n"):
                self.word.append(command[i + 1])
                i += 2
                continue
            if d == "`":
                raise _substitution(BACKTICKS)
            if d == "$" and self._at(i + 1, "("):
                raise _substitution(DOLLAR_PAREN)
            self.word.append(d)
            i += 1
        if i >= n:
            raise ShellSyntaxRefused("syntax", "unterminated double quote in the command.")
        self.i = i + 1

    def _comment(self) -> None:
        """A comment runs to the end of its line; a line after it is still rule 1."""
        nl = self.command.find("\n", self.i)
        self.i = self.n if nl < 0 else nl

    def _separator(self, c: str) -> None:
        """A newline or ``;``: allowed only at the end of the command (rule 1)."""
        if self.command[self.i + 1 :].strip():
            raise _several_commands(c, self.command)
        self.i += 1

    def _ampersand(self) -> None:
        """``&&`` joins two steps, ``&>`` / ``&>>`` redirect both streams; a lone ``&``
        backgrounds (rule 3)."""
        if self._at(self.i + 1, "&"):
            self._new_segment()
            self.i += 2
        elif self._at(self.i + 1, ">"):
            self._end_word()
            op = "&>>" if self._at(self.i + 2, ">") else "&>"
            self.pending_redirect = op
            self.i += len(op)
        else:
            raise ShellSyntaxRefused(
                "background",
                "backgrounding with & is not allowed: ws_shell waits for its command, and a "
                "process left running would outlive the call. Run the command in the "
                "foreground (it has a timeout), or use && to chain steps.",
            )

    def _redirection(self, c: str) -> None:
        """A redirection operator; its target is the next word. Duplicating (``2>&1``) or
        closing (``>&-``) a descriptor writes no file and takes no target; ``>&file`` does."""
        command, n = self.command, self.n
        # An fd number written right before the operator belongs to it (2>, 1>>).
        if self.has_word and "".join(self.word).isdigit():
            self.word, self.has_word = [], False
        self._end_word()
        j = self.i + 1
        if c == ">":
            if self._at(j, ">", "|", "&"):
                j += 1
        elif command[j : j + 2] == "<<":
            j += 2
        elif self._at(j, "<", ">", "&"):
            j += 1
        op = command[self.i : j]
        if op in (">&", "<&"):
            k = j
            while k < n and command[k].isdigit():
                k += 1
            if (k > j and (k == n or command[k] in " \t|&;)")) or self._at(j, "-"):
                self.i = k if k > j else j + 1
                return
            op = "&>" if op == ">&" else op
        self.pending_redirect = op
        self.i = j


def _command_words(words: list[str]) -> list[str]:
    """The words from the command name on: leading VAR=value assignments and wrappers
    (``time``, ``nice -n 5``, ``env A=1``, ``timeout 10``) skipped."""
    i = 0
    while i < len(words):
        w = words[i]
        if "=" in w and not w.startswith("-") and w.split("=", 1)[0].isidentifier():
            i += 1
            continue
        base = os.path.basename(w)
        if base in WRAPPERS:
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 2 if words[i] in ("-n", "-o", "-e", "-i") and base in ("nice", "stdbuf") else 1
            continue
        if base == "env":
            i += 1
            while i < len(words) and (words[i].startswith("-") or "=" in words[i]):
                i += 1
            if i >= len(words):
                return ["env"]
            continue
        if base == "timeout":
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1
            i += 1  # the duration
            continue
        return words[i:]
    return []


def classify(words: list[str]) -> str:
    """The tier one simple command needs."""
    cmd = _command_words(words)
    if not cmd:
        return "readonly"
    name = os.path.basename(cmd[0])
    args = cmd[1:]
    if name == "git":
        return _classify_git(args)
    if name == "find":
        bad = {
            "-delete",
            "-exec",
            "-execdir",
            "-ok",
            "-okdir",
            "-fprint",
            "-fprint0",
            "-fprintf",
            "-fls",
        }
        return "any" if any(a in bad for a in args) else "readonly"
    if name == "sed":
        return "any" if any(a.startswith(("-i", "--in-place")) for a in args) else "readonly"
    if name == "sort":
        return "any" if any(a.startswith(("-o", "--output")) for a in args) else "readonly"
    positional = [a for a in args if not a.startswith("-")]
    # Read-only commands that write a file given as an argument.
    if name == "xxd":
        return "any" if "-r" in args or len(positional) >= 2 else "readonly"
    if name == "uniq":
        return "any" if len(positional) >= 2 else "readonly"
    if name == "tree":
        return "any" if any(a.startswith("-o") for a in args) else "readonly"
    if name == "hostname":
        return "any" if positional else "readonly"
    if name == "date":
        setting = any(a in ("-s", "--set") or a.startswith("--set=") for a in args)
        return "any" if setting or any(not p.startswith("+") for p in positional) else "readonly"
    if name in READONLY_COMMANDS:
        return "readonly"
    if name in PYTHON_NAMES or (name.startswith("python3.") and name[8:].isdigit()):
        return _classify_python(args)
    if name == "node":
        if any(a in ("-e", "--eval", "-p", "--print") for a in args):
            return "any"
        if not args or args[0] in ("--version", "-v", "--check", "-c"):
            return "readonly" if args[:1] in (["--version"], ["-v"]) else "build"
        return "build"
    if name in ("npm", "yarn", "pnpm"):
        sub = next((a for a in args if not a.startswith("-")), "")
        return "build" if sub in NPM_BUILD or (name == "yarn" and not args) else "any"
    if name == "go":
        return "build" if args[:1] and args[0] in GO_BUILD else "any"
    if name == "cargo":
        return "build" if args[:1] and args[0] in CARGO_BUILD else "any"
    if name == "dotnet":
        return "build" if args[:1] and args[0] in DOTNET_BUILD else "any"
    if name in ("pip", "pip3"):
        sub = args[0] if args else ""
        return "readonly" if sub in ("list", "show", "freeze", "check", "--version") else "any"
    if name in BUILD_COMMANDS:
        return "build"
    return "any"


def _classify_git(args: list[str]) -> str:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-C", "-c", "--git-dir", "--work-tree") else 1
    if i >= len(args):
        return "readonly"
    sub, rest = args[i], args[i + 1 :]
    if any(a.startswith("--output") for a in rest):
        return "any"  # git diff/log --output=FILE writes a file
    if sub in GIT_READONLY:
        return "readonly"
    if sub in GIT_LISTING and all(a in GIT_LISTING_FLAGS or a.startswith("--format") for a in rest):
        return "readonly"
    return "any"


def _classify_python(args: list[str]) -> str:
    if not args:
        return "build"
    first = args[0]
    if first in ("--version", "-V"):
        return "readonly"
    if first == "-c":
        return "any"
    if first == "-m":
        module = args[1] if len(args) > 1 else ""
        if module == "pip":
            return "readonly" if args[2:3] and args[2] in ("list", "show", "freeze") else "any"
        return "build"
    if first.startswith("-"):
        return _classify_python(args[1:])
    return "build"  # a script of the project


def _sink_allowed(target: str, root: str, cwd: str, after_cd: bool) -> bool:
    if target in SAFE_SINKS:
        return True
    if after_cd and not os.path.isabs(target):
        return False
    full = os.path.normpath(os.path.join(cwd, target))
    scratch = os.path.join(root, ".kli", "scratch")
    return full.startswith(scratch + os.sep)


def _names_control(words: list[str], root: str, cwd: str) -> str | None:
    """The first word naming control state — the root's ``.kli/`` (but its ``scratch/``) or a
    ``.git`` at any depth — or None."""
    control = os.path.join(root, ".kli")
    scratch = os.path.join(control, "scratch")
    for w in words:
        if ".kli" not in w and ".git" not in w:
            continue
        full = os.path.normpath(os.path.join(cwd, w))
        if (full == control or full.startswith(control + os.sep)) and not (
            full == scratch or full.startswith(scratch + os.sep)
        ):
            return w
        if ".git" in full.split(os.sep):
            return w
    return None


def check(command: str, policy: str, root: str, cwd: str) -> Verdict:
    """Decide whether ``command`` may run under ``policy`` (see the module docstring)."""
    if not command.strip():
        return Verdict(False, "readonly", "empty", "command is empty; give one shell command.")
    try:
        segments = lex(command)
    except ShellSyntaxRefused as exc:
        return Verdict(False, "any", exc.rule, f"ws_shell refused — {exc.message}")
    need = "readonly"
    after_cd = False
    worst: list[str] = []
    for seg in segments:
        cmd = _command_words(seg.words)
        name = os.path.basename(cmd[0]) if cmd else ""
        for r in seg.redirects:
            if r.op in WRITE_OPS and not _sink_allowed(r.target, root, cwd, after_cd):
                return Verdict(
                    False,
                    "any",
                    "write_redirect",
                    f"ws_shell refused — the redirection `{r.op} {r.target}` would write the "
                    f"file {r.target}. ws_shell does not write files: create a file with "
                    "ws_write, change one with ws_edit. To keep a command's output, redirect it "
                    "under .kli/scratch/ (e.g. `> .kli/scratch/out.txt`) or to /dev/null.",
                )
        if name == "tee":
            files = [w for w in cmd[1:] if not w.startswith("-")]
            bad = [f for f in files if not _sink_allowed(f, root, cwd, after_cd)]
            if bad:
                return Verdict(
                    False,
                    "any",
                    "write_redirect",
                    f"ws_shell refused — `tee {' '.join(bad)}` would write the file {bad[0]}. "
                    "ws_shell does not write files: create a file with ws_write, change one "
                    "with ws_edit, or tee into .kli/scratch/ or /dev/null.",
                )
        tier = classify(seg.words)
        if tier != "readonly":
            named = _names_control(seg.words, root, cwd)
            if named is not None:
                return Verdict(
                    False,
                    "any",
                    "control_dir",
                    f"ws_shell refused — `{name}` would act on {named}: .kli/ (harness) and "
                    ".git/ (the repository's) are control state, not project source, and no "
                    "tool changes them. Use .kli/scratch/ for scratch files; ask the person "
                    "for a change to the repository's own files.",
                )
        if name in ("cd", "pushd", "popd"):
            after_cd = True
        if TIER_RANK[tier] > TIER_RANK[need]:
            need, worst = tier, [name]
        elif tier == need and TIER_RANK[tier] > 0:
            worst.append(name)
    if TIER_RANK[need] <= TIER_RANK.get(policy, 1):
        return Verdict(True, need, "ok")
    return Verdict(False, need, "policy", policy_message(worst[0] if worst else "", need, policy))


def policy_message(name: str, need: str, policy: str) -> str:
    lists = {
        "readonly": "read-only commands only (ls, cat, grep, find, git status/diff/log, …)",
        "build": "read-only and build/test commands only (pytest, make, npm test, go test, "
        "cargo test, python -m …)",
    }
    hint = TOOL_HINTS.get(name, "")
    what = f"`{name}`" if name else "this command"
    kind = (
        "a build/test command"
        if need == "build"
        else "neither a read-only nor a build/test command"
    )
    return (
        f"ws_shell refused — {what} is {kind}, and the shell_policy setting is {policy!r}: "
        f"{lists.get(policy, '')}. {hint + ' ' if hint else ''}Otherwise do it with the ws_* "
        f'tools, or ask the user to set "shell_policy": "{need}" in .kli/settings.json.'
    )
