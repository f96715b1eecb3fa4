"""Held means nothing changed (issue 23, rule 2): under review, an agent's file call that would
move a git-tracked file, remove an empty folder or make folders changes no byte, no folder and
not git's index; the person's Accept performs exactly the recorded steps, or is refused naming
what changed since. And every call in ``tools/`` that changes the file system or starts a
program is one whose held path is known (``test_every_mutating_call_site_is_accounted_for``)."""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.core import approval


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=root,
                          capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(root: Path) -> Path:
    git(root, "init", "-q")
    (root / "t.py").write_text("x = 1\n")
    (root / "u.txt").write_text("untracked\n")
    git(root, "add", "t.py")
    git(root, "commit", "-qm", "one")
    (root / ".kli").mkdir()
    (root / ".kli" / "settings.json").write_text(json.dumps({"approval": "review"}))
    return root


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under root (None for a folder) with its bytes, .git/ included."""
    return {str(p.relative_to(root)): (None if p.is_dir() else p.read_bytes())
            for p in sorted(root.rglob("*"))}


def agent_call(ws: Workspace, tool: str, args: dict[str, str]) -> str:
    r = ws.call(tool, args, ws.open_session("agent"), source="agent")
    assert r.ok and r.details.get("status") == "pending", r.text
    return str(r.details["proposal"])


def test_a_held_git_mv_of_a_tracked_file_leaves_file_and_index_and_accept_moves_both(
        repo: Path) -> None:
    ws = Workspace(str(repo))
    before = tree(repo)
    r = ws.call("ws_mv", {"src": "t.py", "dst": "t2.py"}, ws.open_session("a"), source="agent")
    assert r.details["status"] == "pending", r.text
    assert "git mv t.py t2.py" in r.text and r.details["steps"] == [
        "git mv t.py t2.py (the file and its entry in git's index)"]
    assert tree(repo) == before  # the file, the folder set and .git/index as they were
    a = approval.accept_any(ws, r.details["proposal"], "ui")
    assert a.ok, a.text
    assert not (repo / "t.py").exists() and (repo / "t2.py").read_text() == "x = 1\n"
    assert git(repo, "status", "--porcelain", "--", "t.py", "t2.py") == "R  t.py -> t2.py\n"


def test_accept_of_a_held_git_mv_is_refused_naming_the_file_when_its_index_entry_changed(
        repo: Path) -> None:
    ws = Workspace(str(repo))
    pid = agent_call(ws, "ws_mv", {"src": "t.py", "dst": "t2.py"})
    (repo / "t.py").write_text("x = 2\n")
    git(repo, "add", "t.py")  # staged, then the file put back: the bytes are as proposed
    (repo / "t.py").write_text("x = 1\n")
    index = (repo / ".git" / "index").read_bytes()
    a = approval.accept_any(ws, pid, "ui")
    assert not a.ok and a.details["error"] == approval.STALE
    assert "git's index entry for t.py changed since proposal" in a.text
    assert (repo / "t.py").exists() and not (repo / "t2.py").exists()
    assert (repo / ".git" / "index").read_bytes() == index


def test_a_held_delete_of_an_empty_folder_leaves_it_until_accept(repo: Path) -> None:
    (repo / "empty").mkdir()
    ws = Workspace(str(repo))
    before = tree(repo)
    r = ws.call("ws_delete", {"path": "empty"}, ws.open_session("a"), source="agent")
    assert r.details["status"] == "pending" and "remove empty folder empty" in r.text
    assert tree(repo) == before
    assert approval.accept_any(ws, r.details["proposal"], "ui").ok
    assert not (repo / "empty").exists()


def test_accept_of_a_held_folder_delete_is_refused_when_a_file_was_put_in_it(repo: Path) -> None:
    (repo / "empty").mkdir()
    ws = Workspace(str(repo))
    pid = agent_call(ws, "ws_delete", {"path": "empty"})
    (repo / "empty" / "kept.txt").write_text("a person's file\n")
    a = approval.accept_any(ws, pid, "ui")
    assert not a.ok and "empty changed since proposal" in a.text
    assert (repo / "empty" / "kept.txt").read_text() == "a person's file\n"


def test_a_held_move_into_new_folders_makes_no_folder_until_accept(repo: Path) -> None:
    ws = Workspace(str(repo))
    before = tree(repo)
    r = ws.call("ws_mv", {"src": "u.txt", "dst": "new/sub/u.txt"}, ws.open_session("a"),
                source="agent")
    assert r.details["status"] == "pending", r.text
    assert r.details["steps"] == ["make folder new/sub", "move u.txt to new/sub/u.txt"]
    assert tree(repo) == before and not (repo / "new").exists()
    assert approval.accept_any(ws, r.details["proposal"], "ui").ok
    assert (repo / "new" / "sub" / "u.txt").read_text() == "untracked\n"
    assert not (repo / "u.txt").exists()


def test_a_held_git_mv_into_new_folders_that_git_refuses_on_accept_leaves_no_folder(
        repo: Path) -> None:
    ws = Workspace(str(repo))
    pid = agent_call(ws, "ws_mv", {"src": "t.py", "dst": "new/sub/t.py"})
    (repo / ".git" / "index.lock").write_text("")  # another git is writing the index
    a = approval.accept_any(ws, pid, "ui")
    assert not a.ok and "git mv t.py new/sub/t.py failed" in a.text and "still pending" in a.text
    assert not (repo / "new").exists() and (repo / "t.py").exists()
    (repo / ".git" / "index.lock").unlink()
    assert approval.accept_any(ws, pid, "ui").ok  # retried once git is done
    assert (repo / "new" / "sub" / "t.py").read_text() == "x = 1\n"


def test_accept_of_a_held_folder_move_is_refused_when_the_folder_changed(repo: Path) -> None:
    (repo / "d").mkdir()
    (repo / "d" / "a.txt").write_text("a\n")
    ws = Workspace(str(repo))
    pid = agent_call(ws, "ws_mv", {"src": "d", "dst": "e"})
    (repo / "d" / "b.txt").write_text("b\n")
    a = approval.accept_any(ws, pid, "ui")
    assert not a.ok and "d changed since proposal" in a.text
    assert (repo / "d" / "b.txt").exists() and not (repo / "e").exists()


def test_a_held_write_into_new_folders_makes_none_until_accept(repo: Path) -> None:
    ws = Workspace(str(repo))
    pid = agent_call(ws, "ws_write", {"path": "n1/n2/f.txt", "content": "f\n"})
    assert not (repo / "n1").exists()
    assert approval.accept_any(ws, pid, "ui").ok
    assert (repo / "n1" / "n2" / "f.txt").read_text() == "f\n"


def test_a_held_restore_of_a_symlink_checkpoint_changes_nothing_and_accept_makes_the_link(
        root: Path) -> None:
    (root / "target.txt").write_text("t\n")
    (root / "link").symlink_to("target.txt")
    ws = Workspace(str(root))
    assert ws.call("ws_delete", {"path": "link"}, source="ui").ok  # checkpointed
    [cp] = [c for c in ws.call("ws_checkpoints", {}, source="ui").details["checkpoints"]
            if c["path"] == "link" and c["reason"] != "change"]
    (root / ".kli" / "settings.json").write_text(json.dumps({"approval": "review"}))
    before = tree(root)
    r = ws.call("ws_checkpoints", {"action": "restore", "id": cp["id"]}, ws.open_session("a"),
                source="agent")
    assert r.details.get("status") == "pending", r.text
    assert "make link a symlink to target.txt" in r.text
    assert tree(root) == before and not (root / "link").is_symlink()
    assert approval.accept_any(ws, r.details["proposal"], "ui").ok
    assert (root / "link").is_symlink() and (root / "link").readlink() == Path("target.txt")


def test_a_held_restore_sets_the_checkpoints_permission_bits_on_accept_only(root: Path) -> None:
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    ws = Workspace(str(root))
    assert ws.call("ws_delete", {"path": "run.sh"}, source="ui").ok
    [cp] = [c for c in ws.call("ws_checkpoints", {}, source="ui").details["checkpoints"]
            if c["path"] == "run.sh" and c["reason"] != "change"]
    (root / ".kli" / "settings.json").write_text(json.dumps({"approval": "review"}))
    r = ws.call("ws_checkpoints", {"action": "restore", "id": cp["id"]}, ws.open_session("a"),
                source="agent")
    assert r.details.get("status") == "pending" and not (root / "run.sh").exists(), r.text
    assert approval.accept_any(ws, r.details["proposal"], "ui").ok
    assert (root / "run.sh").read_text() == "#!/bin/sh\n"
    assert (root / "run.sh").stat().st_mode & 0o777 == 0o755


def test_git_diff_leaves_the_git_index_as_it_was_when_files_are_stat_dirty(
        repo: Path, tmp_path: Path) -> None:
    """Found by the registry-wide property: ``git diff`` refreshed and rewrote .git/index of a
    copied tree (every file stat-dirty), under review as under auto."""
    (repo / "t.py").write_text("x = 2\n")
    (repo / "same.py").write_text("unchanged\n")
    git(repo, "add", "same.py")
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-r", "--preserve=mode,timestamps", str(repo), str(copy)], check=True)
    index = (copy / ".git" / "index").read_bytes()
    r = Workspace(str(copy)).call("git_diff", {}, source="agent")
    assert r.ok and "+x = 2" in r.text and "same.py" not in r.text, r.text
    assert (copy / ".git" / "index").read_bytes() == index


# -- every call that changes the file system or starts a program --------------------------------
TOOLS = Path(__file__).resolve().parents[3] / "tools"
MUTATING = {
    "os": {"mkdir", "makedirs", "rmdir", "remove", "unlink", "rename", "renames", "replace",
           "chmod", "fchmod", "chown", "fchown", "lchown", "utime", "symlink", "link",
           "truncate", "removedirs", "mkfifo", "mknod", "system", "posix_spawn", "posix_spawnp",
           "fork", "execv", "execve", "execvp", "execvpe", "kill", "killpg", "setxattr",
           "removexattr"},
    "shutil": {"move", "rmtree", "copy", "copy2", "copyfile", "copytree", "copymode",
               "copystat", "chown"},
    "subprocess": {"run", "Popen", "call", "check_call", "check_output"},
}
# Outside tools/core/atomic.py (the capture's own home), each site and why a held call never
# reaches it. A new site must go through atomic (captured) or refuse while
# ``atomic.capturing_now()``, and then be added here with its reason.
ACCOUNTED = {
    ("core/checkpoints.py", "save", "os.makedirs"): "skipped while capturing (_held)",
    ("core/checkpoints.py", "prune", "shutil.rmtree"): "save prunes only when not held",
    ("core/jail.py", "Jail.scratch_dir", "os.makedirs"): "ws_shell only: a shell call is never run held",
    ("core/scratch.py", "keep_newest", "os.unlink"): "save prunes only when not capturing",
    ("core/sandbox.py", "available", "subprocess.run"): "bwrap's probe, `true` in a box: writes nothing",
    ("core/sandbox.py", "protected", "os.makedirs"): "as a box starts: a shell call, never run held",
    ("core/sandbox.py", "folder_args", "os.makedirs"): "as a box starts: a shell call, never run held",
    ("core/sandbox.py", "new_box_tmp", "os.kill"): "signal 0: only asks whether a box's process lives",
    ("core/sandbox.py", "new_box_tmp", "shutil.rmtree"): "box folders outside the root, of ended processes",
    ("core/sandbox.py", "_remove_tmps", "shutil.rmtree"): "this process's box folders, at its exit",
    ("process/jobs.py", "start_job", "subprocess.Popen"): "bash: a shell call, never run held",
    ("process/runner.py", "Tree.signal", "os.killpg"): "the runner's own children",
    ("process/runner.py", "Tree.finish", "os.killpg"): "the runner's own children",
    ("process/runner.py", "Tree._send", "os.kill"): "the runner's own children",
    ("process/runner.py", "_Child.spawn", "subprocess.Popen"): "bash / ws_shell, never run held",
    ("file/firstpass/run.py", "start", "subprocess.Popen"): "search's first pass, our binary: reads",
    ("ws/gitcmd.py", "*", "subprocess.run"): "git, its one home: reads, git mv through capture_op",
    ("ws/syntax.py", "_run_on_copy", "subprocess.run"): "a checker on a copy outside the root",
    ("ws/ws_mv.py", "_run", "shutil.move"): "after atomic.rename failed: never when captured",
}


def _mutating_sites() -> set[tuple[str, str, str]]:
    found: set[tuple[str, str, str]] = set()
    for path in sorted(TOOLS.rglob("*.py")):
        rel = path.relative_to(TOOLS).as_posix()
        if rel == "core/atomic.py":
            continue
        scope: list[str] = []

        def visit(node: ast.AST, rel: str = rel, scope: list[str] = scope) -> None:
            named = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            if named:
                scope.append(node.name)  # type: ignore[union-attr]
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name) and \
                    node.func.attr in MUTATING.get(node.func.value.id, ()):
                found.add((rel, ".".join(scope), f"{node.func.value.id}.{node.func.attr}"))
            for child in ast.iter_child_nodes(node):
                visit(child)
            if named:
                scope.pop()

        visit(ast.parse(path.read_text()))
    return found


def _accounted(site: tuple[str, str, str]) -> bool:
    return site in ACCOUNTED or (site[0], "*", site[2]) in ACCOUNTED


def test_every_mutating_call_site_is_accounted_for() -> None:
    sites = _mutating_sites()
    new = sorted(site for site in sites if not _accounted(site))
    assert not new, (
        f"{new}: a call that changes the file system or starts a program. Route it through "
        "kli.tools.core.atomic (captured under review) or refuse it while "
        "atomic.capturing_now(), then add it to ACCOUNTED with the reason a held call never "
        "changes anything through it.")
    gone = [a for a in ACCOUNTED
            if not any(s == a or (a[1] == "*" and (s[0], s[2]) == (a[0], a[2])) for s in sites)]
    assert not gone, f"ACCOUNTED lists sites that are gone: remove {gone}"
