"""Git run by any tool runs no program that the repository's configuration names.

One test per vector, each with a real repository whose configuration sets the vector to a
command that touches a sentinel file outside the workspace. Every test first shows the vector
is live (plain git, as a person would run it, touches the sentinel), then that the tools'
git does not."""

from __future__ import annotations

import os
import pty
import shlex
import subprocess
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.ws import gitcmd

pytestmark = pytest.mark.skipif(
    subprocess.run(["git", "--version"], capture_output=True).returncode != 0,
    reason="git is not installed",
)


def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=root, check=check, capture_output=True)


@pytest.fixture
def sentinels(tmp_path: Path) -> Path:
    folder = tmp_path / "sentinels"
    folder.mkdir()
    return folder


def _touch(sentinel: Path, then: str = "true") -> str:
    return f"touch {shlex.quote(str(sentinel))}; {then}"


@pytest.fixture
def repo(root: Path) -> Path:
    _git(root, "init", "-q", "-b", "main", ".")
    _git(root, "config", "user.email", "t@t")
    _git(root, "config", "user.name", "t")
    (root / "a.txt").write_text("one\n")
    (root / "b.txt").write_text("two\n")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "init")
    return root


def _dirty(repo: Path) -> None:
    """Change a.txt so git must look at its content (and run whatever reads it)."""
    (repo / "a.txt").write_text("one\nmore\n")


def _content_dirty(repo: Path) -> None:
    """Change b.txt so git status must read its content whatever the clock: same size (a size
    change is marked modified unread) and an mtime that differs from the index's record (a file
    written in the index's own second is read anyway, which made a test pass only when quick)."""
    b = repo / "b.txt"
    b.write_text("TWO\n")
    os.utime(b, (1_000_000_000, 1_000_000_000))


def _live(sentinel: Path, repo: Path, *args: str) -> None:
    """Plain git runs the vector (so the test can fail); the sentinel is then removed."""
    ran = _git(repo, *args, check=False)
    assert sentinel.exists(), (
        f"the vector did not fire for plain git {' '.join(args)}: "
        f"exit {ran.returncode}, {ran.stdout!r}, {ran.stderr!r}"
    )
    sentinel.unlink()


def _tools_answer(ws: Workspace) -> None:
    status = ws.call("git_status", {})
    assert status.ok, status.text
    assert " M a.txt" in status.text
    diff = ws.call("git_diff", {})
    assert diff.ok, diff.text
    assert "+more" in diff.text
    assert ws.call("git_diff", {"stat": True}).ok


def test_fsmonitor_from_the_repository_config_never_runs(
    ws: Workspace, repo: Path, sentinels: Path
) -> None:
    s = sentinels / "fsmonitor"
    _git(repo, "config", "core.fsmonitor", _touch(s, "false"))
    _dirty(repo)
    _live(s, repo, "status")
    _tools_answer(ws)
    moved = ws.call("ws_mv", {"src": "b.txt", "dst": "c.txt"})
    assert moved.ok and "git mv" in moved.text, moved.text
    assert gitcmd.run_git(str(repo), ["ls-files", "c.txt"]).stdout == "c.txt\n"
    assert not s.exists()


def test_hooks_never_run_from_the_hooks_folder_or_hooks_path(repo: Path, sentinels: Path) -> None:
    s = sentinels / "hook"
    own = repo / ".git" / "myhooks"
    own.mkdir()
    for n, folder in enumerate((repo / ".git" / "hooks", own)):
        hook = folder / "pre-commit"
        hook.write_text(f"#!/bin/sh\n{_touch(s)}\n")
        hook.chmod(0o755)
        if folder == own:
            _git(repo, "config", "core.hooksPath", str(own))
        (repo / "a.txt").write_text(f"plain {n}\n")
        _git(repo, "add", "a.txt")
        _live(s, repo, "commit", "-qm", "plain")
        (repo / "a.txt").write_text(f"tools {n}\n")
        _git(repo, "add", "a.txt")
        out = gitcmd.run_git(str(repo), ["commit", "-qm", "through the tools"])
        assert out.code == 0, out.stderr
        assert not s.exists()


def test_pager_never_runs_even_on_a_terminal(repo: Path, sentinels: Path) -> None:
    s1, s2 = sentinels / "core-pager", sentinels / "pager-log"
    _git(repo, "config", "core.pager", _touch(s1, "cat"))
    _git(repo, "config", "pager.log", _touch(s2, "cat"))

    def on_a_terminal(argv: list[str], env: dict[str, str] | None) -> None:
        primary, secondary = pty.openpty()
        try:
            subprocess.run(argv, cwd=repo, env=env, stdout=secondary, stderr=secondary,
                           stdin=subprocess.DEVNULL, timeout=30)
        finally:
            os.close(secondary)
            os.close(primary)

    plain_env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    plain_env.pop("PAGER", None)
    on_a_terminal(["git", "log", "-1"], plain_env)
    assert s2.exists(), "pager.log did not run for plain git on a terminal"
    s2.unlink()
    _git(repo, "config", "--unset", "pager.log")
    on_a_terminal(["git", "log", "-1"], plain_env)
    assert s1.exists(), "core.pager did not run for plain git on a terminal"
    s1.unlink()
    _git(repo, "config", "pager.log", _touch(s2, "cat"))
    command = gitcmd.git_command(str(repo), ["log", "-1"])
    assert isinstance(command, gitcmd.GitCommand)
    on_a_terminal(command.argv, command.env)
    assert not s1.exists() and not s2.exists()


def test_external_diff_from_config_and_environment_never_runs(
    ws: Workspace, repo: Path, sentinels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s, s_env = sentinels / "diff-external", sentinels / "GIT_EXTERNAL_DIFF"
    _git(repo, "config", "diff.external", _touch(s))
    _dirty(repo)
    _live(s, repo, "diff")
    script = sentinels / "ext.sh"
    script.write_text(f"#!/bin/sh\n{_touch(s_env)}\n")
    script.chmod(0o755)
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", str(script))
    _tools_answer(ws)
    out = gitcmd.run_git(str(repo), ["diff"])  # even without --no-ext-diff
    assert out.code != 0 or "+more" in out.stdout
    assert not s.exists() and not s_env.exists()


def test_diff_driver_command_never_runs(ws: Workspace, repo: Path, sentinels: Path) -> None:
    s = sentinels / "diff-command"
    (repo / ".gitattributes").write_text("*.txt diff=evil\n")
    _git(repo, "config", "diff.evil.command", _touch(s))
    _dirty(repo)
    _live(s, repo, "diff")
    _tools_answer(ws)
    assert not s.exists()


def test_textconv_never_runs(ws: Workspace, repo: Path, sentinels: Path) -> None:
    s = sentinels / "textconv"
    (repo / ".gitattributes").write_text("*.txt diff=conv\n")
    _git(repo, "config", "diff.conv.textconv", _touch(s, 'cat "$1"') + " #")
    _dirty(repo)
    _live(s, repo, "diff")
    _tools_answer(ws)
    # Asked for by name, textconv fails (the driver's program is switched off) and runs nothing.
    out = gitcmd.run_git(str(repo), ["log", "-p", "--textconv", "-1", "--", "a.txt"])
    assert out.code != 0 and "cannot run" in out.stderr
    assert not s.exists()


@pytest.mark.parametrize("driver", ["evil", "Evil=Name", "with.dots"])
def test_clean_filter_never_runs(ws: Workspace, repo: Path, sentinels: Path, driver: str) -> None:
    """git status runs the clean filter on a file whose content it must look at; a driver's
    name may hold capitals, '=' and dots (the override takes the key verbatim)."""
    s = sentinels / "clean"
    (repo / ".gitattributes").write_text(f"*.txt filter={driver}\n")
    _git(repo, "config", f"filter.{driver}.clean", _touch(s, "cat"))
    _git(repo, "config", f"filter.{driver}.required", "true")
    _dirty(repo)
    _content_dirty(repo)
    _live(s, repo, "status")
    _tools_answer(ws)
    assert ws.call("ws_mv", {"src": "a.txt", "dst": "moved.txt"}).ok
    assert not s.exists()


def test_smudge_filter_never_runs(repo: Path, sentinels: Path) -> None:
    s = sentinels / "smudge"
    (repo / ".gitattributes").write_text("*.txt filter=sm\n")
    _git(repo, "config", "filter.sm.smudge", _touch(s, "cat"))
    _dirty(repo)
    _live(s, repo, "checkout", "--", "a.txt")
    _dirty(repo)
    out = gitcmd.run_git(str(repo), ["checkout", "--", "a.txt"])
    assert out.code == 0, out.stderr
    assert (repo / "a.txt").read_text() == "one\n"
    assert not s.exists()


def test_process_filter_never_runs(ws: Workspace, repo: Path, sentinels: Path) -> None:
    s = sentinels / "process"
    (repo / ".gitattributes").write_text("*.txt filter=lr\n")
    _git(repo, "config", "filter.lr.process", _touch(s, "false"))
    _dirty(repo)
    _live(s, repo, "status")
    _tools_answer(ws)
    assert not s.exists()


def test_fsmonitor_pulled_in_by_include_path_never_runs(
    ws: Workspace, repo: Path, sentinels: Path, tmp_path: Path
) -> None:
    s = sentinels / "include"
    included = tmp_path / "outside.gitconfig"
    included.write_text(f"[core]\n\tfsmonitor = {_touch(s, 'false')}\n")
    _git(repo, "config", "include.path", str(included))
    _dirty(repo)
    _live(s, repo, "status")
    _tools_answer(ws)
    assert not s.exists()


def test_filter_pulled_in_by_include_if_never_runs(
    ws: Workspace, repo: Path, sentinels: Path, tmp_path: Path
) -> None:
    s = sentinels / "include-if"
    included = tmp_path / "conditional.gitconfig"
    included.write_text(f'[filter "cond"]\n\tclean = {_touch(s, "cat")}\n')
    (repo / ".gitattributes").write_text("*.txt filter=cond\n")
    _git(repo, "config", f"includeIf.gitdir:{repo}/.path", str(included))
    _dirty(repo)
    _live(s, repo, "status")
    _tools_answer(ws)
    assert not s.exists()


def test_a_config_file_in_the_workspace_is_refused_and_nothing_runs(
    ws: Workspace, repo: Path, sentinels: Path
) -> None:
    """A file the agent can write, included by the repository's config: git is not started."""
    s = sentinels / "in-workspace"
    (repo / "team.gitconfig").write_text(f"[core]\n\tfsmonitor = {_touch(s, 'false')}\n")
    _git(repo, "config", "include.path", "../team.gitconfig")
    _dirty(repo)
    _live(s, repo, "status")
    for tool, args in (("git_status", {}), ("git_diff", {}),
                       ("ws_mv", {"src": "a.txt", "dst": "z.txt"})):
        r = ws.call(tool, args)
        assert not r.ok and r.details["error"] == "git_config_in_workspace", (tool, r.text)
        assert "team.gitconfig" in r.text and "Ask the person" in r.text
    assert (repo / "a.txt").exists() and not (repo / "z.txt").exists()
    assert not s.exists()


def test_ssh_command_and_credential_helper_never_run(repo: Path, sentinels: Path) -> None:
    s_ssh, s_cred = sentinels / "ssh", sentinels / "credential"
    _git(repo, "config", "core.sshCommand", _touch(s_ssh, "false"))
    _git(repo, "config", "credential.helper", f"!{_touch(s_cred, 'false')}")
    _live(s_ssh, repo, "ls-remote", "ssh://example.invalid/x")
    for url in ("ssh://example.invalid/x", "http://127.0.0.1:9/x"):
        out = gitcmd.run_git(str(repo), ["ls-remote", url])
        assert out.code != 0
    assert not s_ssh.exists() and not s_cred.exists()


def test_git_variables_of_the_kernel_environment_are_not_passed(
    repo: Path, sentinels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = sentinels / "env"
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='{_touch(s, 'false')}'")
    monkeypatch.setenv("GIT_SSH_COMMAND", _touch(s))
    monkeypatch.setenv("GIT_DIR", "/nonexistent")
    _dirty(repo)
    out = gitcmd.run_git(str(repo), ["status", "--porcelain"])
    assert out.code == 0 and " M a.txt" in out.stdout, out.stderr
    assert not s.exists()


def test_a_work_tree_elsewhere_shows_nothing_outside_the_root(
    tmp_path: Path, sentinels: Path
) -> None:
    """core.worktree pointing above the root: git_status and git_diff show only the root's
    files; pointing beside it: the root is not in a work tree."""
    outer = tmp_path / "outer"
    root = outer / "ws"
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main", ".")
    _git(root, "config", "core.worktree", str(outer))
    (outer / "secret.txt").write_text("password\n")
    (root / "mine.txt").write_text("mine\n")
    _git(root, "add", "-A")
    _git(root, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    (outer / "secret.txt").write_text("password2\n")
    (root / "mine.txt").write_text("mine2\n")
    (outer / "new-secret.txt").write_text("x\n")
    ws = Workspace(str(root))
    status = ws.call("git_status", {})
    assert status.ok and "mine.txt" in status.text
    assert "secret" not in status.text
    diff = ws.call("git_diff", {})
    assert diff.ok and "mine2" in diff.text and "password" not in diff.text
    assert "password" not in ws.call("git_diff", {"path": ":(top)secret.txt"}).text

    beside = tmp_path / "beside"
    beside.mkdir()
    (beside / "other.txt").write_text("other\n")
    _git(root, "config", "core.worktree", str(beside))
    status = ws.call("git_status", {})
    assert not status.ok and status.details["error"] == "not_a_repo"


def test_a_git_in_the_workspace_path_is_never_run(
    ws: Workspace, repo: Path, sentinels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `git` the agent wrote into a folder on PATH (a virtual environment's bin/ inside the
    root, or '.') is not what the tools start."""
    s = sentinels / "fake-git"
    bin_dir = repo / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    fake = bin_dir / "git"
    fake.write_text(f"#!/bin/sh\n{_touch(s)}\nexit 1\n")
    fake.chmod(0o755)
    (repo / "git").write_bytes(fake.read_bytes())
    (repo / "git").chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), ".", "", os.environ["PATH"]]))
    monkeypatch.chdir(repo)
    _dirty(repo)
    status = ws.call("git_status", {})
    assert status.ok and " M a.txt" in status.text
    assert not s.exists()


def test_a_submodules_own_configuration_never_runs(tmp_path: Path, sentinels: Path) -> None:
    """A submodule's config (in the superproject's .git/modules/) is another repository's:
    git_status and git_diff do not enter submodules, so its drivers never run."""
    s_fsmonitor, s_clean = sentinels / "sub-fsmonitor", sentinels / "sub-clean"
    inner, outer = tmp_path / "inner", tmp_path / "outer"
    for folder, name in ((inner, "i.txt"), (outer, "o.txt")):
        folder.mkdir()
        _git(folder, "init", "-q", "-b", "main", ".")
        (folder / name).write_text("x\n")
        _git(folder, "add", ".")
        _git(folder, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    _git(outer, "-c", "protocol.file.allow=always", "submodule", "-q", "add", str(inner), "sub")
    _git(outer, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "sub")
    sub = outer / "sub"
    _git(sub, "config", "core.fsmonitor", _touch(s_fsmonitor, "false"))
    _git(sub, "config", "filter.f.clean", _touch(s_clean, "cat"))
    (sub / ".gitattributes").write_text("* filter=f\n")
    (sub / "i.txt").write_text("x\nmore\n")
    (outer / "o.txt").write_text("x\nmore\n")
    _live(s_fsmonitor, outer, "status")
    ws = Workspace(str(outer))
    status = ws.call("git_status", {})
    assert status.ok and " M o.txt" in status.text, status.text
    assert ws.call("git_diff", {}).ok
    assert not s_fsmonitor.exists() and not s_clean.exists()
    moved = ws.call("ws_mv", {"src": "sub", "dst": "elsewhere"})
    assert not moved.ok and "sub/.git" in moved.text  # its .git file is control state


def test_a_root_laid_out_as_a_bare_repository_is_no_repository(
    ws: Workspace, root: Path, sentinels: Path
) -> None:
    """HEAD, objects/, refs/ and a config written as plain files (no .git): plain git takes the
    root for a bare repository and runs its fsmonitor; the tools' git sees no repository."""
    s = sentinels / "bare"
    for tool, args in (
        ("ws_write", {"path": "HEAD", "content": "ref: refs/heads/main\n"}),
        ("ws_write", {"path": "objects/info/x", "content": "x\n"}),
        ("ws_write", {"path": "refs/heads/x", "content": "x\n"}),
        ("ws_write", {"path": "config", "content": "[core]\n\trepositoryformatversion = 0\n"
                      f"\tbare = false\n\tworktree = .\n\tfsmonitor = {_touch(s, 'false')}\n"}),
        ("ws_write", {"path": "a.txt", "content": "x\n"}),
    ):
        assert ws.call(tool, args).ok
    (root / "refs" / "heads" / "x").unlink()
    _live(s, root, "status")
    status = ws.call("git_status", {})
    assert not status.ok and status.details["error"] == "not_a_repo", status.text
    assert not ws.call("ws_mv", {"src": "a.txt", "dst": "b.txt"}).text.endswith("(git mv)")
    assert not s.exists()


def test_gpg_program_never_runs_for_a_signed_commit(repo: Path, sentinels: Path) -> None:
    """log.showSignature in the configuration makes git log verify a signed commit with
    gpg.program."""
    s = sentinels / "gpg"
    program = sentinels / "gpg.sh"
    program.write_text(f"#!/bin/sh\n{_touch(s)}\n")
    program.chmod(0o755)
    raw = _git(repo, "cat-file", "commit", "HEAD").stdout.decode()
    head, _, message = raw.partition("\n\n")
    signature = ("gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n"
                 " -----END PGP SIGNATURE-----")
    (sentinels / "commit").write_text(f"{head}\n{signature}\n\n{message}")
    signed = _git(repo, "hash-object", "-t", "commit", "-w", str(sentinels / "commit"))
    _git(repo, "update-ref", "refs/heads/main", signed.stdout.decode().strip())
    _git(repo, "config", "log.showSignature", "true")
    _git(repo, "config", "gpg.program", str(program))
    _live(s, repo, "log", "-1")
    for args in (["log", "-1"], ["log", "-1", "--show-signature"]):
        gitcmd.run_git(str(repo), args)
    assert not s.exists()
