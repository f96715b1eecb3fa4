"""The box: agent code in an OS sandbox (bubblewrap), the other way to trust an agent
(docs/sandbox.md).

The setting ``sandbox`` (``.kli/settings.json``, kept per project as ``approval`` is; or live:
``set_choice``) is ``"off"`` (the default), ``"on"``, or ``{"mode": "on"|"off", "network":
"off"|"all"}``. With the box on:

- every shell command a tool starts (``bash``, its background jobs, ``ws_shell``) runs under
  ``bwrap`` (``command``): the whole file system read-only but the workspace root and a
  temporary folder of the box's own (its ``/tmp``); inside the root, the control state
  (``PROTECTED``: ``.git``, ``.kli``, the kernel's own virtual environment, Jupyter's and
  IPython's config) stays read-only; no network unless the person allows it; no new
  privileges and no capabilities; its own PID namespace, so nothing it starts outlives it;
- an agent's Python in the live image (a tool whose action is ``eval``) runs only where the
  kernel itself runs in the box (the ``kli-sandboxed`` kernelspec, ``inside``); elsewhere it
  is refused, naming the kernel to switch to (``refusal``);
- where the box cannot be made (no ``bwrap``, no user namespaces, not Linux, a root that holds
  the home folder), shell and eval calls of an agent are refused with the reason: the box is
  never claimed where it is not.

A network allow-list of named hosts cannot be built with bubblewrap alone (it has a network
namespace with only loopback, or the host's whole network): it needs a proxy outside the box
that programs inside honour. The network is therefore all or nothing (``NETWORKS``).

This module imports nothing above ``kli.tools.core``; hosts read ``describe`` for the person.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kli.tools.core.result import ToolResult
from kli.tools.core.settings import read_settings_file, write_setting

if TYPE_CHECKING:
    from kli.tools.core.registry import Call
    from kli.tools.core.workspace import Workspace

SETTING = "sandbox"
OFF, ON = "off", "on"
MODES = (OFF, ON)
NET_OFF, NET_ALL = "off", "all"
NETWORKS = (NET_OFF, NET_ALL)
# What ``describe`` says the box is: this kernel boxed, commands boxed, on but not made, the
# sandboxed kernel's box not made, off.
STATES = ("kernel", "commands", "unavailable", "failed", "off")
ENV_INSIDE = "KLI_SANDBOX"  # set by the launcher for the kernel it starts in the box (JSON)
ENV_FAILED = "KLI_SANDBOX_FAILED"  # set by the launcher when it could not make the box
KERNEL_NAME = "kli-sandboxed"  # the kernelspec whose kernel runs in the box
KERNEL_TITLE = "Python 3 (kli, sandboxed)"
# Inside the root, kept read-only in the box (names at the root; the kernel's own prefix too):
# control state, and what a person's tools run on their own when they meet it (direnv's
# .envrc, an editor's tasks, submodule URLs, an agent's MCP servers) — where it exists.
PROTECTED = (".git", ".kli", ".venv", ".jupyter", ".ipython", ".envrc", ".vscode", ".idea",
             ".gitmodules", ".mcp.json")
# Inside a read-only .kli, what the kernel in the box writes (its scratch captures and the
# checkpoints undo needs): data, not control.
KERNEL_WRITES = (os.path.join(".kli", "scratch"), os.path.join(".kli", "checkpoints"))
# A boxed command writes its captures there as a tool would (ws_shell's `> .kli/scratch/x`).
COMMAND_WRITES = (os.path.join(".kli", "scratch"),)
# Told to the model when a boxed command failed: the likely why, and what still works.
BOXED_NOTE = ("the command ran in the box: only the workspace root and /tmp are writable, the "
              "network is off unless the person allowed it, and what it started in the "
              "background ended with it (use run_in_background for long jobs)")
PROBE_TIMEOUT = 10.0  # seconds the one probe run of bwrap may take

STOPS = (
    "writes outside the workspace root and the box's own /tmp (your home, ~/.bashrc, system "
    "folders)",
    "writes to the root's control state: .git (hooks, config), .kli (settings), the kernel's "
    ".venv, .jupyter, .ipython",
    "the network (by name and by address, /dev/tcp) unless you allow it",
    "new privileges: setuid programs and file capabilities do nothing (NoNewPrivs), no "
    "capabilities",
    "processes outliving the box: its own PID namespace dies with the command or the kernel",
    "the system's Unix sockets (docker, dbus, databases under /run; the host's /tmp) and "
    "Jupyter's runtime folder (other kernels' keys, the server's token): hidden",
)
DOES_NOT_STOP = (
    "reading: files the person can read stay readable (secrets in your home included); "
    "without network they cannot leave, with network on they can",
    "writes inside the root (that is the work): review or undo judges them — read the diff "
    "before running project files the agent changed (a Makefile, package.json scripts, "
    "conftest.py, .pre-commit-config.yaml) outside the box",
    "start files absent when the box was made (.envrc, .vscode): the box can create them",
    "a hostile binary with a Linux kernel exploit (out of scope: the box is not a VM)",
    "named-host allow-lists: the network is all or nothing with bubblewrap alone",
    "Unix sockets elsewhere in what it can read (say /var/tmp, a home folder): a connect() "
    "needs no write access, and bubblewrap has no filter for it without a seccomp program",
    "repositories nested below the root keep their own .git writable",
    "a root with no .git: the box can make one (with hooks a later git run would run)",
)


# -- the setting ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Choice:
    mode: str = OFF
    network: str = NET_OFF

    @property
    def on(self) -> bool:
        return self.mode == ON


def choice(settings: Mapping[str, Any]) -> tuple[Choice, str | None]:
    """The person's choice, and the error that makes the setting unusable (then the box is
    taken as on, network off: fail closed)."""
    value = settings.get(SETTING, OFF)
    if value is None or value is False:
        return Choice(), None
    if value is True:
        return Choice(ON), None
    if isinstance(value, str) and value in MODES:
        return Choice(value), None
    if isinstance(value, dict):
        mode = value.get("mode", ON)
        network = value.get("network", NET_OFF)
        unknown = set(value) - {"mode", "network"}
        if mode in MODES and network in NETWORKS and not unknown:
            return Choice(mode, network), None
        if isinstance(network, list):
            return Choice(ON), (
                "setting 'sandbox': a list of named hosts cannot be enforced with bubblewrap "
                "alone (it offers no network, or the whole network): use \"network\": \"off\" "
                "or \"all\" (.kli/settings.json). Nothing was run.")
    return Choice(ON), (
        f"setting 'sandbox' is not valid ({value!r}): use \"on\", \"off\", or {{\"mode\": "
        "\"on\", \"network\": \"off\" or \"all\"}} (.kli/settings.json). Nothing was run; fix "
        "the setting and retry.")


# -- can the box be made here ---------------------------------------------------------------------
@dataclass(frozen=True)
class Availability:
    ok: bool
    reason: str = ""
    bwrap: str | None = None


_probe_lock = threading.Lock()
_probed: dict[str, Availability] = {}


def base_args(bwrap: str) -> list[str]:
    """What every box is, before its folders: a read-only view of everything, fresh /dev and
    /proc, new user, PID, IPC and UTS namespaces, no nested user namespaces, no capabilities,
    a new session (no terminal to inject into), killed when its parent dies."""
    return [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--disable-userns", "--cap-drop", "ALL", "--new-session", "--die-with-parent"]


def available() -> Availability:
    """Whether a box can be made on this machine (cached for the process once it could): Linux,
    ``bwrap`` on PATH, and one real run of it with the namespaces every box uses."""
    if not sys.platform.startswith("linux"):
        return Availability(False, f"the box needs Linux (bubblewrap); this is {sys.platform}, "
                            "where no sandbox is made")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Availability(False, "bubblewrap (bwrap) is not installed: install the Debian "
                            "package bubblewrap (apt-get install bubblewrap)")
    with _probe_lock:
        known = _probed.get(bwrap)
        if known is not None:
            return known
        try:
            done = subprocess.run([*base_args(bwrap), "--unshare-net", "true"],
                                  capture_output=True, timeout=PROBE_TIMEOUT, check=False)
            said = done.stderr.decode("utf-8", "replace").strip()
            ok = done.returncode == 0
        except (OSError, subprocess.TimeoutExpired) as exc:
            ok, said = False, str(exc)
        if ok:
            found = Availability(True, bwrap=bwrap)
            _probed[bwrap] = found
            return found
    return Availability(False, f"bubblewrap cannot make a box here ({said or 'it failed'}): "
                        "user namespaces may be off (sysctl kernel.unprivileged_userns_clone, "
                        "or a container that forbids them)", bwrap)


def root_problem(root: str) -> str | None:
    """Why a box writing ``root`` would not keep its promises, or None."""
    real = os.path.realpath(root)
    home = os.path.realpath(os.path.expanduser("~"))
    if real == "/" or home == real or home.startswith(real.rstrip("/") + "/"):
        return (f"the workspace root {real} holds the home folder {home}: the box could write "
                "your shell's start files (~/.bashrc, ~/.profile). Start Jupyter (or kli) in a "
                "project folder")
    return None


_inside: list[dict[str, Any] | None] = []  # the answer, found once: a box is not left


def inside() -> dict[str, Any] | None:
    """The box this process runs in (the launcher's facts), or None. Believed only when this
    process sees what the box is: the root file system read-only and NoNewPrivs set. Found on
    the first call and kept (an agent's code setting the variable later changes nothing)."""
    if not _inside:
        _inside.append(_inside_now())
    return _inside[0]


def _inside_now() -> dict[str, Any] | None:
    said = os.environ.get(ENV_INSIDE)
    if not said:
        return None
    try:
        facts = json.loads(said)
        if not isinstance(facts, dict):
            return None
        if not os.statvfs("/").f_flag & os.ST_RDONLY:
            return None
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            if "NoNewPrivs:\t1" not in fh.read():
                return None
    except (ValueError, OSError):
        return None
    return facts


def kernel_failed() -> str | None:
    """Why the box this kernel was asked for (the sandboxed kernelspec) could not be made."""
    return os.environ.get(ENV_FAILED) or None


# -- the box's folders ------------------------------------------------------------------------
def protected(root: str, prefixes: tuple[str, ...] = ()) -> list[str]:
    """The control paths inside ``root`` the box keeps read-only (each made, empty, when
    absent — but ``.git``, whose absence git reads as "no repository" — so the box cannot
    create it), plus each of ``prefixes`` (the kernel's interpreter) lying in the root."""
    real = os.path.realpath(root)
    out = []
    for name in PROTECTED:
        path = os.path.join(real, name)
        if name in (".kli",) and not os.path.lexists(path):
            os.makedirs(path, exist_ok=True)
        if os.path.lexists(path):
            out.append(path)
    for prefix in prefixes:
        rp = os.path.realpath(prefix)
        if rp.startswith(real + os.sep) and rp not in out:
            out.append(rp)
    return out


def folder_args(root: str, tmp: str, network: str, *, writable: tuple[str, ...] = (),
                prefixes: tuple[str, ...] = ()) -> list[str]:
    """The box's folders after ``base_args``: /run hidden, the root writable, ``tmp`` as its
    /tmp, the control paths read-only again (``protected``), then ``writable`` (paths inside
    those, made when absent), the Jupyter runtime folder hidden (other kernels' keys, the
    server's token), the network off unless ``network`` is ``all``."""
    real = os.path.realpath(root)
    # /run hidden: a Unix socket can be connected on a read-only mount, and the system's
    # daemons listen there (docker, dbus, a database); only the resolver's folder comes back
    # when the network is allowed. Then /tmp: a root under /tmp (or /run) is then bound into
    # the box's own, not hidden by it.
    args = ["--tmpfs", "/run"]
    if network == NET_ALL:
        resolver = os.path.realpath("/etc/resolv.conf")
        if resolver.startswith("/run/") and os.path.exists(resolver):
            args += ["--ro-bind", os.path.dirname(resolver), os.path.dirname(resolver)]
    args += ["--bind", tmp, "/tmp", "--setenv", "TMPDIR", "/tmp"]
    for path in _hidden_but_needed():
        args += ["--ro-bind", path, path]
    args += ["--bind", real, real]
    for path in protected(real, prefixes):
        # a symlink is bound as what it leads to: bind its target read-only at its own place
        args += ["--ro-bind", os.path.realpath(path), path]
    for rel in writable:
        path = os.path.join(real, rel)
        os.makedirs(path, exist_ok=True)
        args += ["--bind", path, path]
    runtime = os.environ.get("JUPYTER_RUNTIME_DIR") or os.path.join(
        os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "jupyter",
        "runtime")
    if os.path.isdir(runtime) and not os.path.realpath(runtime).startswith(real + os.sep):
        args += ["--tmpfs", os.path.realpath(runtime)]
    if network != NET_ALL:
        args.append("--unshare-net")
    args += ["--chdir", real]
    return args


def _hidden_but_needed() -> list[str]:
    """What the box must still read that lies under a folder it hides (/tmp, /run): the
    interpreter's prefixes, its import path and PATH (a virtual environment or a checkout under
    /tmp, as a CI run makes them), read-only, outermost folders only."""
    path_dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    wanted = {sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path,
              *(os.path.dirname(d) if os.path.basename(d) == "bin" else d for d in path_dirs)}
    found = sorted(p for p in {os.path.realpath(w) for w in wanted if w}
                   if p.startswith(("/tmp/", "/run/")) and os.path.isdir(p))
    out: list[str] = []
    for path in found:  # sorted: a folder comes before what it holds
        if not any(path.startswith(o + os.sep) for o in out):
            out.append(path)
    return out


_tmps: dict[str, str] = {}
_tmps_lock = threading.Lock()


def _remove_tmps() -> None:
    for path in list(_tmps.values()):
        shutil.rmtree(path, ignore_errors=True)


TMP_PREFIX = "kli-box-"


def new_box_tmp() -> str:
    """A fresh temporary folder for a box, named for this process (``kli-box-PID-…``); the
    folders of boxes whose process is gone (killed, so it could not remove its own) are
    removed first."""
    base = tempfile.gettempdir()
    with contextlib.suppress(OSError):
        for name in os.listdir(base):
            parts = name.split("-")
            if not name.startswith(TMP_PREFIX) or len(parts) < 4 or not parts[2].isdigit():
                continue
            path = os.path.join(base, name)
            try:
                if os.lstat(path).st_uid != os.getuid():
                    continue
                os.kill(int(parts[2]), 0)
            except ProcessLookupError:
                shutil.rmtree(path, ignore_errors=True)
            except OSError:
                continue
    return tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{os.getpid()}-")


def box_tmp(root: str) -> str:
    """The temporary folder the commands of ``root``'s box share in this process (their /tmp),
    removed when the process exits."""
    with _tmps_lock:
        path = _tmps.get(root)
        if path is None or not os.path.isdir(path):
            if not _tmps:
                atexit.register(_remove_tmps)
            path = _tmps[root] = new_box_tmp()
        return path


def command(ws: Workspace, argv: list[str], executable: str | None = None,
            ) -> tuple[list[str], str | None]:
    """``argv`` (and its ``executable``) as the shell tools start it: in a box when the box is
    on and this process is not already in one; unchanged otherwise. Raises ``ToolError`` when
    the box is on and cannot be made (nothing is run)."""
    from kli.tools.core.result import ToolError

    chosen, problem = choice(ws.settings)
    failed = kernel_failed()
    if failed:
        raise ToolError(_failed_text(failed), error="sandbox_unavailable")
    if not chosen.on or inside() is not None:
        return argv, executable
    if problem is not None:
        raise ToolError(problem, error="bad_settings")
    why = _why_not(ws.root)
    if why is not None:
        raise ToolError(_unavailable_text(why), error="sandbox_unavailable")
    found = available()
    assert found.bwrap is not None
    program = executable or argv[0]
    try:
        box = [*base_args(found.bwrap),
               *folder_args(ws.root, box_tmp(ws.root), chosen.network, writable=COMMAND_WRITES,
                            prefixes=(sys.prefix,))]
    except OSError as exc:  # .kli or its scratch folder could not be made, /tmp is full …
        raise ToolError(_unavailable_text(
            f"its folders could not be made ({exc.strerror}: {exc.filename})"),
            error="sandbox_unavailable") from None
    return [*box, "--", program, *argv[1:]], None


def _why_not(root: str) -> str | None:
    found = available()
    if not found.ok:
        return found.reason
    return root_problem(root)


def _unavailable_text(why: str) -> str:
    return (f"the box is on for this project but cannot be made: {why}. Nothing was run. A "
            "person can turn the box off (%kli sandbox off) or fix the cause; the box is never "
            "claimed where it is not.")


def _failed_text(why: str) -> str:
    return (f"this kernel was started as {KERNEL_TITLE!r} but its box could not be made: {why}. "
            "Nothing was run: the kernel runs unboxed, so an agent's shell and Python are "
            "refused here. Fix the cause and restart the kernel, or switch to 'Python 3 (kli)' "
            "with the box off.")


def refusal(call: Call, settings: Mapping[str, Any]) -> ToolResult | None:
    """The result of an agent's shell or eval call the box does not allow, or None.

    Eval runs in the kernel's own process: it is boxed only when the kernel is (``inside``).
    A shell call that the box will wrap passes (``command`` decides)."""
    action = call.tool.action
    if action not in ("shell", "eval") or call.source != "agent":
        return None
    failed = kernel_failed()
    if failed:
        return ToolResult.error(_failed_text(failed), error="sandbox_unavailable")
    if inside() is not None:
        return None
    chosen, problem = choice(settings)
    if not chosen.on:
        return None
    if problem is not None:
        return ToolResult.error(problem, error="bad_settings")
    why = _why_not(call.ws.root)
    if why is not None:
        return ToolResult.error(_unavailable_text(why), error="sandbox_unavailable")
    if action == "eval":
        return ToolResult.error(
            f"the box is on for this project, and {call.tool.name} runs Python in this kernel's "
            "own process, which runs outside the box. Nothing was run. A person can switch the "
            f"notebook's kernel to {KERNEL_TITLE!r} (Kernel > Change Kernel; kernelspec "
            f"{KERNEL_NAME}), where the kernel and everything it runs is boxed; shell commands "
            "(bash, ws_shell) run boxed here already.",
            error="sandbox_outside")
    return None


# -- for the person ------------------------------------------------------------------------------
def describe(ws: Workspace) -> dict[str, Any]:
    """The box as the person sees it (``%kli sandbox``, ``%kli status``, the activity panel):
    ``state`` is ``kernel`` (this kernel and all it runs are boxed), ``commands`` (shell
    commands boxed, an agent's eval refused), ``unavailable`` (on, but cannot be made: shell
    and eval refused), ``failed`` (the sandboxed kernel could not box itself) or ``off``."""
    chosen, problem = choice(ws.settings)
    facts = inside()
    failed = kernel_failed()
    out: dict[str, Any] = {"kind": "sandbox", "mode": chosen.mode, "network": chosen.network,
                           "problem": problem, "stops": list(STOPS),
                           "does_not_stop": list(DOES_NOT_STOP)}
    if failed:
        out.update(state="failed", said=_failed_text(failed), reason=failed)
    elif facts is not None:
        net = facts.get("network", NET_OFF)
        if not chosen.on:
            later = (f"; the project's setting is off, but this kernel was started as "
                     f"{KERNEL_TITLE!r}: switch the kernel to 'Python 3 (kli)' to leave the box")
        elif chosen.network != net:
            later = (f"; the project's setting says network {chosen.network}, which takes "
                     "effect when the kernel restarts")
        else:
            later = ""
        out.update(state="kernel", network=net, said=(
            f"on: this kernel runs in the box (network {net}); your cells, the agent's eval, "
            "bash and ws_shell all run in it. Writable: the workspace root and the box's /tmp"
            + later))
    elif not chosen.on:
        out.update(state="off", said="off: an agent's shell and eval run with your full "
                   "powers (review, if on, is what guards them)")
    else:
        why = _why_not(ws.root)
        if why is not None:
            out.update(state="unavailable", reason=why, said=(
                f"on, but NOT made: {why}. An agent's shell and eval are refused until it can "
                "be made or the box is turned off"))
        else:
            out.update(state="commands", said=(
                f"on for shell commands (bash, jobs, ws_shell; network {chosen.network}); this "
                "kernel runs outside the box, so an agent's eval is refused — switch the kernel "
                f"to {KERNEL_TITLE!r} to box Python too"))
    return out


# The states in which an agent's shell and eval can write only the root and the box's own
# folder (boxed, or refused): what ``kli.kernel.ai.reach`` reads as a kernel's reach.
CONFINING_STATES = ("kernel", "commands", "unavailable")


def set_choice(ws: Workspace, mode: str | None, network: str | None = None,
               keep: bool = True) -> Choice:
    """Switch the box (``%kli sandbox``, the panel), kept in the project's settings file as
    ``approval`` is (``keep``; False: this kernel only). Raises ``ValueError`` for an unknown
    mode or network, ``approval.KeepError`` (switched in this kernel only) when the file cannot
    be written — inside the box it never can: its .kli is read-only."""
    from kli.tools.core import approval

    current, _bad = choice(ws.settings)
    mode = mode or current.mode
    network = network or current.network
    if mode not in MODES:
        raise ValueError(f"sandbox mode must be one of {', '.join(MODES)}, not {mode!r}")
    if network not in NETWORKS:
        raise ValueError(
            f"sandbox network must be one of {', '.join(NETWORKS)}, not {network!r} (named "
            "hosts cannot be enforced with bubblewrap alone)")
    value = {"mode": mode, "network": network}
    problem = None
    if keep:
        path = _kept_in(ws) or approval.keep_file(ws)
        try:
            write_setting(path, SETTING, value)
            ws.drop_setting(SETTING)
            if choice(ws.settings)[0] != Choice(mode, network):
                ws.set_setting(SETTING, value)
                problem = "a settings file nearer the notebook sets 'sandbox' too"
        except ValueError as exc:
            ws.set_setting(SETTING, value)
            problem = str(exc)
    else:
        ws.set_setting(SETTING, value)
    ws.emit(describe(ws))
    if problem is not None:
        raise approval.KeepError(f"switched in this kernel only, not kept: {problem}.")
    return Choice(mode, network)


def _kept_in(ws: Workspace) -> str | None:
    from kli.tools.core.settings import project_settings_paths

    for path in project_settings_paths(ws.root):
        with contextlib.suppress(ValueError):
            if SETTING in read_settings_file(path)[1]:
                return path
    return None


