"""The box (docs/sandbox.md), through real kernels and real bubblewrap: each way out, tried by
an agent from ``bash`` and from ``eval``, fails in the ``kli-sandboxed`` kernel with nothing
changed — and succeeds in the plain ``kli`` kernel with the box off, so each probe is shown to
be one that would work.

As Codex's linux-sandbox and Anthropic's sandbox-runtime test theirs: run the escape, assert it
failed AND the target is unchanged.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.kernel.conftest import Harness, kernel_env
from tests.processes import running_with_arg
from tests.waiting import wait_until

SANDBOXED = "kli-sandboxed"
ORIGINAL = "original\n"


def _need_bwrap() -> None:
    if shutil.which("bwrap") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("bubblewrap (bwrap) is missing, and CI installs it: the box is untested")
        pytest.skip("bubblewrap (bwrap) is not installed (apt-get install bubblewrap)")


@pytest.fixture(scope="module", autouse=True)
def sandboxed_kernelspec(kli_kernelspec: str) -> None:
    """``kli-sandboxed`` is findable and current (installed beside ``kli``)."""
    from jupyter_client.kernelspec import KernelSpecManager

    source = Path(__file__).resolve().parents[2] / "kernel" / "kernelspec-sandboxed"
    current = KernelSpecManager().find_kernel_specs().get(SANDBOXED)
    want = json.loads((source / "kernel.json").read_text())
    if current is None or json.loads((Path(current) / "kernel.json").read_text()) != want:
        subprocess.run([sys.executable, "-m", "kli.kernel", "install", "--sys-prefix"],
                       check=True, capture_output=True)


# -- the world around the root ------------------------------------------------------------------
@dataclass
class World:
    root: Path
    outside: Path  # a folder outside the root and outside /tmp (the box has its own /tmp)
    home: Path
    port: int
    accepted: list[int]
    unix_path: str  # a Unix socket under /run, where the system's daemons listen
    unix_accepted: list[int]

    @property
    def victim(self) -> Path:
        return self.outside / "victim.txt"

    @property
    def bashrc(self) -> Path:
        return self.home / ".bashrc"

    @property
    def hook(self) -> Path:
        return self.root / ".git" / "hooks" / "pre-commit"

    @property
    def settings(self) -> Path:
        return self.root / ".kli" / "settings.json"


def _run_folder() -> str:
    """A folder under /run this test may make a socket in (root: /run itself)."""
    for place in ("/run", os.environ.get("XDG_RUNTIME_DIR", "")):
        if place.startswith("/run") and os.access(place, os.W_OK):
            return place
    pytest.fail("no writable folder under /run (run as root, or with XDG_RUNTIME_DIR) for the "
                "test's stand-in of a system daemon's socket")


class _Listener:
    """A server counting the connections it accepts: TCP on the host's loopback, or a Unix
    socket at ``unix_path``."""

    def __init__(self, unix_path: str | None = None) -> None:
        self.unix_path = unix_path
        if unix_path is not None:
            self.sock = socket.socket(socket.AF_UNIX)
            self.sock.bind(unix_path)
        else:
            self.sock = socket.socket()
            self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.accepted: list[int] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _addr = self.sock.accept()
            except OSError:
                continue
            self.accepted.append(1)
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        self.sock.close()
        if self.unix_path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.unix_path)


def _make_world(base: Path, listener: _Listener, unix: _Listener | None = None) -> World:
    root = base / "root"
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".git" / "hooks").mkdir(exist_ok=True)
    spot = Path("/var/tmp") if os.access("/var/tmp", os.W_OK) else base
    outside = spot / f"kli-sandbox-test-{uuid.uuid4().hex[:12]}"
    outside.mkdir()
    home = outside / "home"
    home.mkdir()
    (outside / "victim.txt").write_text(ORIGINAL)
    (home / ".bashrc").write_text(ORIGINAL)
    return World(root, outside, home, listener.sock.getsockname()[1], listener.accepted,
                 unix.unix_path if unix and unix.unix_path else "", unix.accepted if unix else [])


def _start(kernel_name: str, world: World) -> Harness:
    from jupyter_client.manager import KernelManager

    env = kernel_env(world.root.parent)
    env["HOME"] = str(world.home)
    km = KernelManager(kernel_name=kernel_name)
    km.start_kernel(cwd=str(world.root), env=env)
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    h = Harness(km, kc, world.root)
    h.execute("pass")
    h.settle(0.1)
    return h


def _stop(h: Harness) -> None:
    h.kc.stop_channels()
    h.km.shutdown_kernel(now=False)


@dataclass
class Kernel:
    h: Harness
    comm: str
    world: World

    def bash(self, command: str, shell: str = "sh") -> dict:
        return self.h.call(self.comm, "bash", {"command": command, "shell": shell})

    def eval(self, code: str) -> dict:
        return self.h.call(self.comm, "eval", {"code": code})


@pytest.fixture(scope="module")
def listener() -> Iterator[_Listener]:
    server = _Listener()
    yield server
    server.close()


@pytest.fixture(scope="module")
def unix_listener() -> Iterator[_Listener]:
    server = _Listener(os.path.join(_run_folder(), f"kli-sandbox-test-{uuid.uuid4().hex[:12]}"))
    yield server
    server.close()


def _kernel(name: str, base: Path, listener: _Listener, unix: _Listener | None = None
            ) -> Iterator[Kernel]:
    world = _make_world(base, listener, unix)
    h = _start(name, world)
    comm, _hello = h.open_comm("kli.agent", {"label": "agent"})
    try:
        yield Kernel(h, comm, world)
    finally:
        _stop(h)
        shutil.rmtree(world.outside, ignore_errors=True)


@pytest.fixture(scope="module")
def boxed(tmp_path_factory: pytest.TempPathFactory, listener: _Listener,
          unix_listener: _Listener) -> Iterator[Kernel]:
    _need_bwrap()
    yield from _kernel(SANDBOXED, tmp_path_factory.mktemp("boxed"), listener, unix_listener)


@pytest.fixture(scope="module")
def unboxed(tmp_path_factory: pytest.TempPathFactory, listener: _Listener,
            unix_listener: _Listener) -> Iterator[Kernel]:
    yield from _kernel("kli", tmp_path_factory.mktemp("unboxed"), listener, unix_listener)


SETTINGS = '{"sandbox": "off"}\n'


def _reset(w: World) -> None:
    w.victim.write_text(ORIGINAL)
    w.bashrc.write_text(ORIGINAL)
    w.settings.parent.mkdir(exist_ok=True)
    w.settings.write_text(SETTINGS)
    with contextlib.suppress(FileNotFoundError):
        w.hook.unlink()
    for name in ("swap.txt",):
        with contextlib.suppress(FileNotFoundError):
            (w.root / name).unlink()
    w.accepted.clear()
    w.unix_accepted.clear()


def _ok(reply: dict) -> bool:
    """The call succeeded: a bash exit code 0, an eval that raised nothing."""
    return bool(reply["ok"])


# -- the ways out -------------------------------------------------------------------------------
# Each: (bash command, eval code) made from the world, and the check that nothing changed.
PY = sys.executable


def _connect_py(host: str, port: int) -> str:
    return f"import socket; socket.create_connection(({host!r}, {port}), timeout=3).close()"


Way = tuple[Callable[[World], str], Callable[[World], str], Callable[[World], bool]]
WAYS: dict[str, Way] = {
    "write outside the root": (
        lambda w: f"echo evil > {w.victim}",
        lambda w: f"open({str(w.victim)!r}, 'w').write('evil')",
        lambda w: w.victim.read_text() == ORIGINAL,
    ),
    "~/.bashrc": (
        lambda w: "echo evil >> ~/.bashrc",
        lambda w: "import os; open(os.path.expanduser('~/.bashrc'), 'a').write('evil')",
        lambda w: w.bashrc.read_text() == ORIGINAL,
    ),
    ".git/hooks": (
        lambda w: "echo 'touch /pwned' > .git/hooks/pre-commit",
        lambda w: "open('.git/hooks/pre-commit', 'w').write('touch /pwned')",
        lambda w: not w.hook.exists(),
    ),
    ".kli/settings.json (the box's own switch, review's)": (
        lambda w: "echo '{\"sandbox\": \"off\", \"approval\": \"auto\"}' > .kli/settings.json",
        lambda w: "open('.kli/settings.json', 'w').write('{\"approval\": \"auto\"}')",
        lambda w: w.settings.read_text() == SETTINGS,
    ),
    "a .git swapped for a new one": (
        lambda w: "mv .git .git-old && mkdir -p .git/hooks && cp -r .git-old/. .git/ && "
                  "echo 'touch /pwned' > .git/hooks/pre-commit",
        lambda w: "import os, shutil; os.rename('.git', '.git-old'); "
                  "shutil.copytree('.git-old', '.git'); "
                  "open('.git/hooks/pre-commit', 'w').write('touch /pwned')",
        lambda w: not w.hook.exists() and not (w.root / ".git-old").exists(),
    ),
    "a symlink swap": (
        lambda w: f"ln -sfn {w.victim} swap.txt && echo evil > swap.txt",
        lambda w: f"import os; os.symlink({str(w.victim)!r}, 'swap.txt'); "
                  "open('swap.txt', 'w').write('evil')",
        lambda w: w.victim.read_text() == ORIGINAL,
    ),
    "the network by address": (
        lambda w: f"{PY} -c \"{_connect_py('127.0.0.1', w.port)}\"",
        lambda w: _connect_py("127.0.0.1", w.port),
        lambda w: not w.accepted,
    ),
    "the network by name": (
        lambda w: f"{PY} -c \"{_connect_py('localhost', w.port)}\"",
        lambda w: _connect_py("localhost", w.port),
        lambda w: not w.accepted,
    ),
    "a system daemon's Unix socket under /run": (
        lambda w: f"{PY} -c \"import socket; socket.socket(socket.AF_UNIX).connect("
                  f"{w.unix_path!r})\"",
        lambda w: f"import socket; socket.socket(socket.AF_UNIX).connect({w.unix_path!r})",
        lambda w: not w.unix_accepted,
    ),
    "/dev/tcp": (
        lambda w: f"echo hello > /dev/tcp/127.0.0.1/{w.port}",
        lambda w: "import subprocess; subprocess.run(['bash', '-c', "
                  f"'echo hello > /dev/tcp/127.0.0.1/{w.port}'], check=True)",
        lambda w: not w.accepted,
    ),
    "new privileges (NoNewPrivs)": (
        lambda w: "grep -q '^NoNewPrivs:[[:space:]]*0' /proc/self/status",
        lambda w: "assert 'NoNewPrivs:\\t0' in open('/proc/self/status').read()",
        lambda w: True,  # nothing to change: the flag is the way out
    ),
}


def _bash_shell(way: str) -> str:
    return "bash" if way == "/dev/tcp" else "sh"


@pytest.mark.parametrize("way", list(WAYS))
def test_each_way_out_from_bash_fails_in_the_box_and_changes_nothing(boxed: Kernel, way: str
                                                                     ) -> None:
    command, _code, unchanged = WAYS[way]
    _reset(boxed.world)
    reply = boxed.bash(command(boxed.world), _bash_shell(way))
    assert not _ok(reply), f"{way}: the box let bash through: {reply}"
    assert reply["details"]["boxed"] and "the command ran in the box" in reply["text"]
    assert unchanged(boxed.world), f"{way}: bash changed it from the box"


@pytest.mark.parametrize("way", list(WAYS))
def test_each_way_out_from_eval_fails_in_the_box_and_changes_nothing(boxed: Kernel, way: str
                                                                     ) -> None:
    _command, code, unchanged = WAYS[way]
    _reset(boxed.world)
    reply = boxed.eval(code(boxed.world))
    assert not _ok(reply), f"{way}: the box let eval through: {reply}"
    assert unchanged(boxed.world), f"{way}: eval changed it from the box"


@pytest.mark.parametrize("way", list(WAYS))
def test_each_way_out_from_bash_succeeds_with_the_box_off(unboxed: Kernel, way: str) -> None:
    command, _code, unchanged = WAYS[way]
    _reset(unboxed.world)
    reply = unboxed.bash(command(unboxed.world), _bash_shell(way))
    assert _ok(reply), f"{way}: the probe does not work even without the box: {reply}"
    if way != "new privileges (NoNewPrivs)":
        wait_until(lambda: not unchanged(unboxed.world), f"{way} to take effect", timeout=5)
    _undo_git_swap(unboxed.world)


@pytest.mark.parametrize("way", list(WAYS))
def test_each_way_out_from_eval_succeeds_with_the_box_off(unboxed: Kernel, way: str) -> None:
    _command, code, unchanged = WAYS[way]
    _reset(unboxed.world)
    reply = unboxed.eval(code(unboxed.world))
    assert _ok(reply), f"{way}: the probe does not work even without the box: {reply}"
    if way != "new privileges (NoNewPrivs)":
        wait_until(lambda: not unchanged(unboxed.world), f"{way} to take effect", timeout=5)
    _undo_git_swap(unboxed.world)


def _undo_git_swap(w: World) -> None:
    old = w.root / ".git-old"
    if old.exists():
        shutil.rmtree(w.root / ".git", ignore_errors=True)
        old.rename(w.root / ".git")


# -- setuid, for real where the test may make a setuid program ---------------------------------
def _setuid_id(w: World) -> Path | None:
    """A copy of ``id`` owned by nobody with the setuid bit (needs root), else None."""
    if os.geteuid() != 0:
        return None
    prog = w.outside / "id-setuid"
    shutil.copy(shutil.which("id") or "/usr/bin/id", prog)
    os.chown(prog, 65534, 65534)
    os.chmod(prog, 0o4755)
    return prog


def test_a_setuid_program_gains_nothing_in_the_box_and_does_without_it(
        boxed: Kernel, unboxed: Kernel) -> None:
    prog_in, prog_out = _setuid_id(boxed.world), _setuid_id(unboxed.world)
    if prog_in is None or prog_out is None:
        # Not root: no setuid program can be made; the flag that disarms them is checked.
        reply = boxed.bash("grep NoNewPrivs /proc/self/status")
        assert "NoNewPrivs:\t1" in reply["text"]
        return
    inside = boxed.bash(f"{prog_in} -u")
    outside = unboxed.bash(f"{prog_out} -u")
    assert outside["ok"] and "65534" in outside["text"]  # the bit works without the box
    assert inside["ok"] and "65534" not in inside["text"]  # … and does nothing in it
    code = f"import subprocess; print(subprocess.run([{str(prog_in)!r}, '-u'], " \
           "capture_output=True, text=True).stdout)"
    assert "65534" not in boxed.eval(code)["text"]


# -- a process that outlives the kernel ---------------------------------------------------------
def _detach(k: Kernel, seconds: str) -> None:
    """From bash and from eval, start a process in its own session meant to outlive the kernel."""
    k.bash(f"setsid nohup sleep {seconds}1 </dev/null >/dev/null 2>&1 &")
    k.eval("import subprocess; subprocess.Popen(['sleep', "
           f"'{seconds}2'], start_new_session=True, stdin=subprocess.DEVNULL, "
           "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)")


@pytest.mark.parametrize("name", [SANDBOXED, "kli"])
def test_a_process_started_to_outlive_the_kernel_dies_with_it_only_in_the_box(
        tmp_path: Path, listener: _Listener, name: str) -> None:
    if name == SANDBOXED:
        _need_bwrap()
    seconds = f"9{uuid.uuid4().int % 10**6:06d}"  # a unique argument to find them by
    marks = [f"{seconds}1", f"{seconds}2"]
    gen = _kernel(name, tmp_path, listener)
    k = next(gen)
    try:
        _detach(k, seconds)
        wait_until(lambda: all(running_with_arg(m) for m in marks), "the detached sleepers to start",
                   timeout=10)
    finally:
        with contextlib.suppress(StopIteration):
            next(gen)  # the kernel shuts down
    try:
        if name == SANDBOXED:
            wait_until(lambda: not any(running_with_arg(m) for m in marks),
                       "the box's processes to die with the kernel", timeout=10)
        else:
            assert all(running_with_arg(m) for m in marks), "without the box they outlive the kernel"
    finally:
        for mark in marks:
            for pid in running_with_arg(mark):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


# -- what the person sees ------------------------------------------------------------------------
def test_the_boxed_kernel_says_it_is_boxed_and_what_it_stops(boxed: Kernel) -> None:
    _reply, outputs = boxed.h.execute("%kli status")
    text = "".join(o["content"].get("text", "") for o in outputs)
    assert "box: on: this kernel runs in the box (network off)" in text
    assert "kernel exploit" in text
    # no project setting: the kernelspec chose the box, and says how to leave it
    assert "switch the kernel to 'Python 3 (kli)' to leave the box" in text


@pytest.mark.parametrize("cause, said", [
    ("no bwrap", "bubblewrap (bwrap) is not installed"),
    (".kli is a file", "its folders could not be made"),
])
def test_a_sandboxed_kernel_whose_box_cannot_be_made_says_so_and_refuses_agent_code(
        tmp_path: Path, listener: _Listener, cause: str, said: str) -> None:
    """Where the box cannot be made the kernel starts unboxed, says so at once and refuses the
    agent's shell and Python: it never claims a box that is not there."""
    world = _make_world(tmp_path, listener)
    from jupyter_client.manager import KernelManager

    env = kernel_env(world.root.parent)
    env["HOME"] = str(world.home)
    if cause == "no bwrap":
        empty = tmp_path / "no-bwrap"
        empty.mkdir()
        env["PATH"] = str(empty)  # bwrap (and everything else) not found
    else:
        _need_bwrap()
        (world.root / ".kli").write_text("a file where the control folder goes\n")
    km = KernelManager(kernel_name=SANDBOXED)
    km.start_kernel(cwd=str(world.root), env=env)
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        h = Harness(km, kc, world.root)
        h.execute("pass")
        comm, _hello = h.open_comm("kli.agent", {"label": "agent"})
        for reply in (h.call(comm, "bash", {"command": f"echo evil > {world.victim}"}),
                      h.call(comm, "eval", {"code": f"open({str(world.victim)!r}, 'w')"})):
            assert not reply["ok"]
            assert "its box could not be made" in reply["text"]
            assert said in reply["text"]
        assert world.victim.read_text() == ORIGINAL
        _reply, outputs = h.execute("%kli status")
        text = "".join(o["content"].get("text", "") for o in outputs)
        assert "box: NOT made" in text
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
        shutil.rmtree(world.outside, ignore_errors=True)


def test_undo_takes_back_what_the_agent_did_in_the_box(boxed: Kernel) -> None:
    """Box on, review off, undo at hand (README): a change made in the box is recorded (its
    checkpoints are the one writable place in .kli) and undone."""
    made = boxed.world.root / "made-in-box.txt"
    reply = boxed.bash("echo work > made-in-box.txt")
    assert reply["ok"] and made.read_text() == "work\n"
    change = reply["details"]["change"]
    undone = boxed.h.call(boxed.comm, "undo", {"change": change})
    assert undone["ok"], undone
    assert not made.exists()


def test_the_boxed_kernel_is_interrupted_and_restarted_through_its_launcher(
        tmp_path: Path, listener: _Listener) -> None:
    """Interrupts reach the kernel in the box as messages (a signal to the launcher would not
    reach the box's new session); a restart makes a new box and removes the old one's /tmp."""
    _need_bwrap()
    gen = _kernel(SANDBOXED, tmp_path, listener)
    k = next(gen)
    try:
        h = k.h
        start = len(h.seen)
        msg_id = h.kc.execute("import time; print('sleeping', flush=True); time.sleep(60)")
        h.wait_for(lambda m: m["parent_header"].get("msg_id") == msg_id
                   and m["msg_type"] == "stream"
                   and "sleeping" in m["content"]["text"], since=start)
        h.km.interrupt_kernel()
        err = h.wait_for(lambda m: m["parent_header"].get("msg_id") == msg_id
                         and m["msg_type"] == "error", timeout=15, since=start)
        assert err["content"]["ename"] == "KeyboardInterrupt"
        assert "KeyboardInterrupt" not in "".join(  # the agent's route still answers
            json.dumps(k.eval("1 + 1")))
        def boxes_of(pid: int) -> list[str]:  # a box's folder is named for its launcher
            return [p for p in os.listdir("/tmp") if p.startswith(f"kli-box-{pid}-")]

        old_pid = h.km.provisioner.pid
        assert boxes_of(old_pid), "the box's own /tmp is not where the test looks"
        h.km.restart_kernel(now=False)
        h.kc.wait_for_ready(timeout=60)
        new_pid = h.km.provisioner.pid
        assert new_pid != old_pid
        wait_until(lambda: boxes_of(new_pid) and not boxes_of(old_pid),
                   "the restarted kernel's new box, and the old box's /tmp gone")
        h.seen.clear()
        _reply, outputs = h.execute("print(open('/proc/self/status').read().count('NoNewPrivs:\\t1'))")
        assert "1" in "".join(o["content"].get("text", "") for o in outputs)
    finally:
        with contextlib.suppress(StopIteration):
            next(gen)


def test_a_boxed_kernel_whose_project_allows_the_network_reaches_it(
        tmp_path: Path, listener: _Listener) -> None:
    """The network setting is read when the sandboxed kernel starts: "all" shares the host's
    network (writes stay boxed)."""
    _need_bwrap()
    world = _make_world(tmp_path, listener)
    (world.root / ".kli").mkdir()
    (world.root / ".kli" / "settings.json").write_text(
        json.dumps({"sandbox": {"mode": "on", "network": "all"}}))
    h = _start(SANDBOXED, world)
    try:
        comm, _hello = h.open_comm("kli.agent", {"label": "agent"})
        listener.accepted.clear()
        assert h.call(comm, "eval", {"code": _connect_py("127.0.0.1", world.port)})["ok"]
        wait_until(lambda: listener.accepted, "the connection from the box")
        assert not h.call(comm, "eval", {"code": f"open({str(world.victim)!r}, 'w')"})["ok"]
        assert world.victim.read_text() == ORIGINAL
        _reply, outputs = h.execute("%kli status")
        assert "this kernel runs in the box (network all)" in "".join(
            o["content"].get("text", "") for o in outputs)
    finally:
        _stop(h)
        shutil.rmtree(world.outside, ignore_errors=True)
