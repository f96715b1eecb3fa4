"""kli.client: start, connect (by file, newest), connect_server (a real jupyter server on
loopback), busy and dead kernels."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from kli import client
from kli.client import KernelDied, KernelTimeout, ProtocolError, ToolResult
from tests.jupyter_server import JupyterServer, folders, jupyter_dirs, launch, serve
from tests.ports import free_port

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def owned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[client.AgentClient]:
    root = tmp_path_factory.mktemp("client")
    (root / "a.py").write_text("x = 1\n")
    env = {**os.environ, "XDG_CONFIG_HOME": str(root / "xdg")}  # no user settings leak in
    with client.start(cwd=str(root), label="owner", timeout=30, env=env) as k:
        yield k


def test_start_owns_a_kernel_and_calls_return_tool_results(owned: client.AgentClient) -> None:
    result = owned.call("read", {"path": "a.py"})
    assert isinstance(result, ToolResult) and result.ok and result.text.endswith("|x = 1")
    assert owned.call("eval", {"code": "6 * 7"}).text.strip().endswith("42")
    missing = owned.call("read", {"path": "nope.py"})
    assert not missing.ok and "nope.py" in missing.text


def test_specs_come_from_the_registry(owned: client.AgentClient) -> None:
    from kli.tools.registry import REGISTRY

    assert [s["name"] for s in owned.specs()] == REGISTRY.names("kli")
    assert [s["name"] for s in owned.specs("slmcode")] == REGISTRY.names("slmcode")
    assert [s["name"] for s in owned.specs("all")] == REGISTRY.names()
    with pytest.raises(ProtocolError, match="'lisp'") as err:
        owned.specs("lisp")
    assert all(name in str(err.value) for name in ("kli", "slmcode", "all"))


def test_ping_round_trips(owned: client.AgentClient) -> None:
    assert 0 < owned.ping() < 5


def test_protocol_errors_raise_with_the_code(owned: client.AgentClient) -> None:
    with pytest.raises(ProtocolError) as info:
        owned.request({"op": "teleport"})
    assert info.value.code == "unknown_op"


def test_interrupt_stops_a_long_eval_of_this_client(owned: client.AgentClient) -> None:
    results: list[ToolResult] = []
    worker = threading.Thread(target=lambda: results.append(
        owned.call("eval", {"code": "import time\ntime.sleep(30)", "timeout": 60})))
    worker.start()
    time.sleep(1.0)
    owned.interrupt()
    worker.join(10)
    assert not worker.is_alive()
    assert not results[0].ok and "interrupted" in results[0].text.lower()
    assert owned.call("eval", {"code": "'still here'"}).ok


def _shared_by_threads(k: client.AgentClient, n: int = 10) -> list[Any]:
    """``n`` threads call one client at once, each its own eval; their results in order."""
    results: list[Any] = [None] * n
    barrier = threading.Barrier(n)

    def worker(i: int) -> None:
        barrier.wait()
        try:
            results[i] = k.call("eval", {"code": f"import time\ntime.sleep(0.05)\n{i} * 1000"},
                                timeout=60)
        except Exception as exc:  # recorded: the assertion names it
            results[i] = exc

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    return results


def test_one_client_shared_by_ten_threads_gets_every_reply_to_its_caller(
        owned: client.AgentClient) -> None:
    results = _shared_by_threads(owned)
    for i, r in enumerate(results):
        assert isinstance(r, ToolResult), f"thread {i}: {r!r}"
        assert r.ok and r.text.strip().endswith(str(i * 1000)), (i, r.text)


def test_asyncio_tasks_share_one_client(owned: client.AgentClient) -> None:
    import asyncio

    async def body() -> list[ToolResult]:
        return await asyncio.gather(*(owned.acall("eval", {"code": f"{i} + 0.5"}, timeout=60)
                                      for i in range(10)))

    results = asyncio.run(body())
    assert [r.text.strip().split("] ", 1)[1] for r in results] == [f"{i}.5" for i in range(10)]


def test_a_cancelled_task_interrupts_its_eval_and_the_kernel_is_idle_again(
        owned: client.AgentClient) -> None:
    import asyncio

    async def body() -> float:
        task = asyncio.ensure_future(
            owned.acall("eval", {"code": "import time\ntime.sleep(100)", "timeout": 200}))
        await asyncio.sleep(1.0)
        assert owned.status == "busy"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        began = time.monotonic()
        after = await owned.acall("eval", {"code": "'idle again'"}, timeout=30)
        assert after.ok and "idle again" in after.text
        return time.monotonic() - began

    assert asyncio.run(body()) < 5


def test_worker_threads_with_a_copied_context_wait_and_interrupt_one_kernel_at_once(
        tmp_path: Path) -> None:
    """jupyter_client's blocking API runs each call on an event loop it keeps in a context
    variable, and ``asyncio.to_thread`` / anyio workers run in a copy of their caller's
    context: in ``kli mcp``, the interrupt of an abandoned eval (one worker) raced the next
    request's connection waiting on iopub (another), and one of them failed with "This event
    loop is already running" (the interrupt was lost, or the request was an MCP "Internal
    server error"). Here one worker waits on iopub for 2 s while another interrupts and checks
    liveness 100 times (interrupting it 10): every call works, and the kernel still runs tools."""
    import asyncio

    from kli.kernel.client.zmq import ZmqTransport

    km = client.launch(cwd=str(tmp_path), env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path)})
    try:
        # The calling thread has used the blocking API itself (as a script or a test's own
        # kernel client does): its context now holds the loop its workers inherit.
        own = km.client()
        own.start_channels()
        own.wait_for_ready(timeout=60)
        transport = ZmqTransport(km.client(), km, shutdown_on_close=False)
        failures: list[str] = []

        def guarded(fn: Any) -> Any:
            def run() -> None:
                try:
                    fn()
                except Exception as exc:
                    failures.append(f"{fn.__name__}: {type(exc).__name__}: {exc}")
            return run

        @guarded
        def wait_on_iopub() -> None:  # inside a blocking jupyter_client call most of the time
            deadline = time.monotonic() + 2.0
            while time.monotonic() < deadline:
                transport.recv_iopub(0.5)

        @guarded
        def interrupt_and_check() -> None:
            for i in range(100):
                if i % 10 == 0:  # the kernel is idle: an interrupt between messages is ignored
                    transport.interrupt()
                assert transport.alive() and km.is_alive()
                time.sleep(0.01)

        async def both() -> None:
            await asyncio.gather(asyncio.to_thread(wait_on_iopub),
                                 asyncio.to_thread(interrupt_and_check))

        asyncio.run(both())
        assert not failures, failures
        transport.close()
        own.stop_channels()
        with client.attach_manager(km, label="after", timeout=30) as k:
            assert k.call("eval", {"code": "6 * 7"}).text.strip().endswith("42")
    finally:
        km.shutdown_kernel(now=True)


def test_two_clients_of_one_kernel_manager_both_get_their_replies(tmp_path: Path) -> None:
    """``kli mcp --start`` attaches one client per MCP session to the kernel it manages. Each
    has a session id of its own: with the manager's one id (its clients' ZMQ identity), the
    kernel handed the first client's shell over to the second, and the first one's requests
    went unanswered."""
    km = client.launch(cwd=str(tmp_path), env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path)})
    try:
        with client.attach_manager(km, label="first", timeout=30) as first, \
                client.attach_manager(km, label="second", timeout=30) as second:
            assert second.call("eval", {"code": "'second'"}, timeout=10).ok
            assert first.ping(timeout=10) < 5
            assert first.call("eval", {"code": "'first'"}, timeout=10).ok
            assert second.ping(timeout=10) < 5
    finally:
        km.shutdown_kernel(now=True)


def test_a_ping_a_stopped_kernel_never_answers_times_out_once(tmp_path: Path) -> None:
    """A request that times out asks the kernel what it is busy with (a ping); a ping that
    times out is not probed with another ping, each waiting on the same silent kernel (with the
    kernel process stopped, that went on without end)."""
    with client.start(cwd=str(tmp_path), timeout=30) as k:
        pid = k.transport.manager.provisioner.pid
        outcome: list[BaseException] = []

        def ping() -> None:
            try:
                k.ping(timeout=1)
            except BaseException as exc:
                outcome.append(exc)

        os.kill(pid, signal.SIGSTOP)
        try:
            waiting = threading.Thread(target=ping, daemon=True)
            waiting.start()
            waiting.join(10)
            assert not waiting.is_alive(), "a ping of a stopped kernel still waits after 10 s"
        finally:
            os.kill(pid, signal.SIGCONT)
        assert len(outcome) == 1 and isinstance(outcome[0], KernelTimeout), outcome
        assert k.ping(timeout=10) < 5


def test_a_cancelled_task_kills_its_bash_command_on_the_subshell_and_the_kernel_answers(
        owned: client.AgentClient, tmp_path: Path) -> None:
    import asyncio

    import psutil

    pid_file = tmp_path / "sleep.pid"

    async def body() -> float:
        task = asyncio.ensure_future(owned.acall(
            "bash", {"command": f"sleep 100 & echo $! > {pid_file}; wait", "timeout": 200}))
        for _ in range(100):
            if pid_file.exists() and pid_file.read_text().strip():
                break
            await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        began = time.monotonic()
        after = await owned.acall("bash", {"command": "echo answering"}, timeout=30)
        assert after.ok and "answering" in after.text
        return time.monotonic() - began

    assert asyncio.run(body()) < 5
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while psutil.pid_exists(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_cancel_names_whether_the_request_was_still_running(owned: client.AgentClient) -> None:
    reply = owned.request({"op": "cancel", "request": 987654})
    assert reply["op"] == "cancel" and reply["request"] == 987654 and reply["found"] is False
    with pytest.raises(ProtocolError) as info:
        owned.request({"op": "cancel"})
    assert info.value.code == "bad_request"


def test_a_cancelled_bash_call_answers_with_a_cancelled_result(
        owned: client.AgentClient, tmp_path: Path) -> None:
    """The request's own reply, as a client that waits on after cancelling sees it."""
    rid, waiter = owned._begin({"op": "call", "tool": "bash",
                                "args": {"command": "sleep 100", "timeout": 200}})
    try:
        time.sleep(1.0)
        reply = owned.request({"op": "cancel", "request": rid})
        assert reply["found"] is True
        result = ToolResult.from_json(waiter.future.result(10))
    finally:
        owned._forget(rid)
    assert not result.ok and result.details.get("error") == "cancelled", result.text
    assert result.details.get("cancelled") is True and "cancelled" in result.text


def test_a_call_cancelled_while_queued_behind_other_work_answers_cancelled_without_running(
        owned: client.AgentClient, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    first, first_waiter = owned._begin({"op": "call", "tool": "eval",
                                        "args": {"code": "import time\ntime.sleep(3)"}})
    second, waiter = owned._begin({"op": "call", "tool": "eval", "args": {
        "code": f"open({str(marker)!r}, 'w').close()"}})
    try:
        time.sleep(0.5)
        reply = owned.request({"op": "cancel", "request": second})
        result = ToolResult.from_json(waiter.future.result(30))
        assert ToolResult.from_json(first_waiter.future.result(30)).ok
    finally:
        owned._forget(first)
        owned._forget(second)
    assert reply["found"] is False  # still in the main shell's queue when the cancel came
    assert not result.ok and result.details.get("error") == "cancelled", result.text
    assert not marker.exists()


def test_a_call_whose_client_timeout_expires_is_cancelled_in_the_kernel(
        owned: client.AgentClient, tmp_path: Path) -> None:
    import psutil

    pid_file = tmp_path / "gave-up.pid"
    with pytest.raises(KernelTimeout) as info:
        owned.call("bash", {"command": f"sleep 100 & echo $! > {pid_file}; wait",
                            "timeout": 200}, timeout=2)
    assert "cancelled it in the kernel" in str(info.value)
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while psutil.pid_exists(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert owned.call("bash", {"command": "echo answering"}, timeout=10).ok


def test_close_shuts_down_the_owned_kernel(tmp_path: Path) -> None:
    k = client.start(cwd=str(tmp_path), timeout=30)
    km = k.transport.manager
    assert km.is_alive()
    k.close()
    assert not km.is_alive()
    with pytest.raises(client.KernelError):
        k.call("read", {"path": "x"})


@pytest.mark.serial  # asserts a wall-clock time
def test_a_busy_kernel_times_out_with_a_clear_error(tmp_path: Path) -> None:
    with client.start(cwd=str(tmp_path), timeout=30) as k:
        k.transport.client.execute("import time; time.sleep(4)")
        began = time.monotonic()
        with pytest.raises(KernelTimeout) as info:
            k.call("eval", {"code": "1"}, timeout=1.5)
        assert time.monotonic() - began < 3
        assert "busy" in str(info.value) and "1.5 s" in str(info.value)


@pytest.mark.serial  # asserts a wall-clock time
def test_a_dead_kernel_is_reported_promptly(tmp_path: Path) -> None:
    k = client.start(cwd=str(tmp_path), timeout=120)
    try:
        pid = k.transport.manager.provisioner.process.pid
        k.transport.send_shell("comm_msg", {"comm_id": k.comm_id, "data": {
            "v": 1, "id": "slow", "op": "call", "tool": "eval",
            "args": {"code": "import time; time.sleep(60)", "timeout": 100}}})
        time.sleep(0.5)
        os.kill(pid, signal.SIGKILL)
        began = time.monotonic()
        with pytest.raises(KernelDied):
            k.call("read", {"path": "x"})
        assert time.monotonic() - began < 5
    finally:
        k.close()


def test_connect_by_connection_file_and_newest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from jupyter_client.manager import KernelManager

    runtime = tmp_path / "runtime"
    runtime.mkdir()
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    root = tmp_path / "root"
    root.mkdir()
    (root / "b.py").write_text("y = 2\n")
    km = KernelManager(kernel_name="kli", connection_file=str(runtime / "kernel-test1.json"))
    km.start_kernel(cwd=str(root))
    try:
        with client.connect(str(runtime / "kernel-test1.json"), timeout=30) as k:
            assert k.call("read", {"path": "b.py"}).ok
        with client.connect(timeout=30) as newest:  # finds kernel-test1.json by itself
            assert newest.call("eval", {"code": "'connected'"}).ok
            assert newest.transport.alive()
        assert km.is_alive(), "closing a connect()ed client leaves the kernel running"
    finally:
        km.shutdown_kernel(now=True)


def test_connect_without_any_kernel_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))
    with pytest.raises(client.KernelError, match="no running kernel"):
        client.connect()


def test_a_non_kli_kernel_is_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(ProtocolError, match="not a kli kernel"):
        client.start("python3", cwd=str(tmp_path), timeout=20)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("server")
    (root / "s.py").write_text("served = True\n")
    port = free_port()
    token = "kli-test-token"
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root",
         f"--port={port}", "--ip=127.0.0.1", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={root}", "--ServerApp.port_retries=0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=str(root),
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=1)
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise
            time.sleep(0.2)
    yield {"url": url, "token": token, "root": root}
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_connect_server_starts_and_talks_to_a_kernel_over_the_websocket(server: dict[str, Any]) -> None:
    with client.connect_server(server["url"], server["token"], timeout=30) as k:
        assert k.transport.owned
        result = k.call("read", {"path": "s.py"})
        assert result.ok and "served = True" in result.text
        assert k.call("eval", {"code": "import os; os.getcwd()"}).text.find(str(server["root"])) >= 0
        kernel_id = k.transport.kernel_id
        # a second agent attaches to the same kernel by id, with its own session
        with client.connect_server(server["url"], server["token"], kernel_id, timeout=30) as k2:
            assert k2.session != k.session
            assert k2.call("eval", {"code": "1 + 1"}).ok
            # the websocket connection too is shared by threads without losing replies
            for i, r in enumerate(_shared_by_threads(k2)):
                assert isinstance(r, ToolResult) and r.text.strip().endswith(str(i * 1000)), r
    req = urllib.request.Request(f"{server['url']}/api/kernels",
                                 headers={"Authorization": f"token {server['token']}"})
    with urllib.request.urlopen(req) as resp:  # the owned kernel was shut down on close
        assert all(kk["id"] != kernel_id for kk in json.loads(resp.read()))


def test_connect_server_with_a_wrong_token_fails_clearly(server: dict[str, Any]) -> None:
    with pytest.raises(client.KernelError):
        client.connect_server(server["url"], "wrong-token", timeout=10)


def test_a_dead_kernel_found_by_connection_file_is_reported_by_its_heartbeat(tmp_path: Path) -> None:
    from jupyter_client.manager import KernelManager

    km = KernelManager(kernel_name="kli", connection_file=str(tmp_path / "kernel-dead.json"))
    km.start_kernel(cwd=str(tmp_path))
    try:
        k = client.connect(str(tmp_path / "kernel-dead.json"), timeout=60)
        km.provisioner.process.kill()  # type: ignore[union-attr]
        began = time.monotonic()
        with pytest.raises(KernelDied):
            k.call("eval", {"code": "1"})
        assert time.monotonic() - began < 8
        k.close()
    finally:
        km.shutdown_kernel(now=True)


START_AND_CALL = """
import json, sys
from kli import client
with client.start(cwd=sys.argv[1], timeout=60) as k:
    info = k.transport.client.get_connection_info()
    print(json.dumps({"transport": info["transport"],
                      "eval": k.call("eval", {"code": "6 * 7"}).text}))
"""


def test_a_started_kernel_uses_ipc_and_prints_no_unencrypted_tcp_warning(tmp_path: Path) -> None:
    """ipykernel warns "running over TCP without encryption" into the user's outputs and logs;
    kernels kli starts listen on Unix sockets instead, which only this user can open."""
    done = subprocess.run([sys.executable, "-c", START_AND_CALL, str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["transport"] == "ipc" and out["eval"].strip().endswith("42")
    assert "without encryption" not in done.stderr + done.stdout
    assert "WARNING" not in done.stderr, done.stderr


INTERRUPT_FROM_TIMERS = """
import sys, threading
from kli import client
with client.start(cwd=sys.argv[1], timeout=60) as k:
    count, done = [0], threading.Event()
    def tick():
        k.interrupt()
        count[0] += 1
        if count[0] < 40:
            threading.Timer(0.02, tick).start()
        else:
            done.set()
    threading.Timer(0.02, tick).start()
    while not done.is_set():
        k.call("eval", {"code": "import time\\nfor _ in range(50): time.sleep(0.01)"})
    print("interrupted", count[0])
"""


def test_a_process_interrupting_from_timer_threads_exits_printing_nothing(tmp_path: Path) -> None:
    """Each thread's event loop (own_loop) is closed when its thread ends, the main thread's at
    exit: none is left to the garbage collector ("unclosed event loop", made visible here with
    -W always::ResourceWarning, or "Exception ignored in ... BaseEventLoop.__del__")."""
    done = subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", "-c", INTERRUPT_FROM_TIMERS,
         str(tmp_path)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "interrupted 40"
    assert done.stderr == ""


@pytest.mark.serial  # asserts a wall-clock time
def test_attaching_while_a_persons_cell_runs_is_at_once_and_busy_is_reported_as_busy(
        tmp_path: Path) -> None:
    """The comm opens on a subshell, so attaching does not wait for the cell; a call that
    needs the image says what holds it, and what to do — never "dead", never "restart"."""
    from kli.client import KernelBusy

    (tmp_path / "p.py").write_text("p = 1\n")
    with client.start(cwd=str(tmp_path), timeout=30) as owner:
        owner.transport.client.execute("import time\ntime.sleep(25)  # the person's long cell")
        time.sleep(0.5)
        began = time.monotonic()
        with client.connect(owner.transport.client.connection_file, label="late",
                            timeout=30) as late:
            assert time.monotonic() - began < 5
            assert late.call("read", {"path": "p.py"}).ok  # a file tool does not wait
            with pytest.raises(KernelBusy) as info:
                late.call("eval", {"code": "1"}, timeout=2)
            text = str(info.value)
            assert "alive but busy" in text and "Running: a notebook cell for" in text
            assert "the person's long cell" not in text or "time.sleep(25)" in text
            assert "wait for it to finish" in text and "ask the person" in text
            assert "dead" not in text and "restart" not in text
            owner.interrupt()


def test_a_client_attached_during_a_persons_cell_that_gives_up_on_its_eval_leaves_the_cell_running(
        tmp_path: Path) -> None:
    """A client that attached after a person's cell began never saw that cell's busy status.
    Its eval waits behind the cell; when the client gives up (a cancelled task, an MCP request
    abandoned), the eval is cancelled without running and the person's cell is not
    interrupted: the kernel is asked what runs before any interrupt."""
    import asyncio

    from jupyter_client.blocking.client import BlockingKernelClient

    marker = tmp_path / "ran"
    with client.start(cwd=str(tmp_path), timeout=30) as owner:
        person = BlockingKernelClient(connection_file=owner.transport.client.connection_file)
        person.load_connection_file()
        person.start_channels()
        try:
            cell = person.execute("import time\ntime.sleep(4)\n'cell done'")
            time.sleep(0.5)
            with client.connect(person.connection_file, label="late", timeout=30) as late:
                async def give_up() -> None:
                    task = asyncio.ensure_future(late.acall(
                        "eval", {"code": f"open({str(marker)!r}, 'w').close()"}))
                    await asyncio.sleep(1.0)
                    task.cancel()
                    with pytest.raises(asyncio.CancelledError):
                        await task

                asyncio.run(give_up())
                reply = person.get_shell_msg(timeout=30)
                while reply["parent_header"].get("msg_id") != cell:
                    reply = person.get_shell_msg(timeout=30)
                assert reply["content"]["status"] == "ok", reply["content"]
                assert late.call("eval", {"code": "'after'"}, timeout=30).ok
        finally:
            person.stop_channels()
    assert not marker.exists()  # cancelled while it waited: it never ran


@dataclass
class _TokenServer(JupyterServer):
    token: ClassVar[str] = "nb-token"


@pytest.fixture(scope="module")
def notebooks_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A Jupyter server with a token, its own runtime dir and two notebooks open on kli
    kernels."""
    base = tmp_path_factory.mktemp("notebooks")
    root, runtime, _share = folders(base)
    (root / "sub").mkdir()
    env = {**os.environ, **jupyter_dirs(base, runtime), "XDG_CONFIG_HOME": str(base)}
    port = free_port()
    proc = launch("jupyter_server", port, root, env=env, log=base / "server.log",
                  token=_TokenServer.token)
    with serve(_TokenServer(f"http://127.0.0.1:{port}", root, proc, base / "server.log"),
               30) as server:
        kernels = {nb: server.start_session(nb) for nb in ("a.ipynb", "sub/b.ipynb")}
        yield {"url": server.url, "token": server.token, "root": root, "runtime": runtime,
               "kernels": kernels}


def test_connect_by_notebook_path_attaches_to_that_notebooks_kernel_and_says_where(
        notebooks_server: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(notebooks_server["runtime"]))
    root = notebooks_server["root"]
    with client.connect(notebook="sub/b.ipynb", timeout=30) as k:
        assert k.notebook == str(root / "sub" / "b.ipynb")
        assert k.cwd == str(root / "sub") and k.root == str(root / "sub")
        assert notebooks_server["kernels"]["sub/b.ipynb"] in k.where
        assert "notebook: " + str(root / "sub" / "b.ipynb") in k.where
        assert "working directory: " + str(root / "sub") in k.where
    with client.connect(notebook=str(root / "a.ipynb"), timeout=30) as k:  # absolute path too
        assert k.notebook == str(root / "a.ipynb")
    with pytest.raises(client.KernelError, match=r"no kernel is running for notebook 'c\.ipynb'"):
        client.connect(notebook="c.ipynb")


def test_connect_server_by_notebook_path(notebooks_server: dict[str, Any]) -> None:
    with client.connect_server(notebooks_server["url"], notebooks_server["token"],
                               notebook="a.ipynb", timeout=30) as k:
        assert k.transport.kernel_id == notebooks_server["kernels"]["a.ipynb"]
        assert not k.transport.owned and k.notebook == str(notebooks_server["root"] / "a.ipynb")
    with pytest.raises(client.KernelError, match=r"no session for notebook 'nope\.ipynb'"):
        client.connect_server(notebooks_server["url"], notebooks_server["token"],
                              notebook="nope.ipynb")


def test_connect_without_a_choice_among_several_kernels_warns_which_it_picked(
        notebooks_server: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(notebooks_server["runtime"]))
    with pytest.warns(UserWarning, match=r"newest of 2 kernels: .*notebook: "):
        k = client.connect(timeout=30)
    k.close()


def test_connect_by_notebook_finds_a_kernel_no_server_lists_by_its_jpy_session_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from jupyter_client.manager import KernelManager

    runtime = tmp_path / "runtime"
    runtime.mkdir()
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    nb = tmp_path / "lone.ipynb"
    km = KernelManager(kernel_name="kli", connection_file=str(runtime / "kernel-lone.json"))
    km.start_kernel(cwd=str(tmp_path), env={**os.environ, "JPY_SESSION_NAME": str(nb)})
    try:
        with client.connect(notebook=str(nb), timeout=30) as k:
            assert k.notebook == str(nb) and k.cwd == str(tmp_path)
            assert "kernel-lone.json" in k.where
    finally:
        km.shutdown_kernel(now=True)
