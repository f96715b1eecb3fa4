"""A source install gets the JupyterLab extension, and a plain install gets a kernel that starts.

From a copy of the checkout as a clone has it (no prebuilt extension: it is git-ignored), an
sdist is built; building a wheel from it without Node.js stops with the way out, and with
Node.js it builds the extension (setup.py runs labextension/build.sh --fast when the prebuilt
files are missing). The slow test installs that sdist, with no extras, into a fresh virtual
environment (no system site packages; its dependencies first with uv, then `pip install` of the
sdist; pip's, uv's and npm's caches are reused): `jupyter kernelspec list` must list `kli` and
that kernel must start and run code; with JupyterLab added, `jupyter labextension list` must
show the extension "enabled OK". Then scripts/run, from the clone into that environment (with
kli-scan and the extension as this checkout built them: it must rebuild neither), must print
the URL that opens the tour and serve JupyterLab and Notebook 7 with `kli` as the default
kernel, on copies of the notebooks in tour/ (the file browser opens on them), so a saved tour
leaves `git status` clean.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.installer import install_command

ROOT = Path(__file__).resolve().parents[2]
_SCRUB = ("PYTHONPATH", "VIRTUAL_ENV", "JUPYTER_PATH", "JUPYTER_CONFIG_PATH", "PYTHONHOME",
          "KLI_TEST_INSTALLED_WHEEL")

pytestmark = pytest.mark.skipif(not (ROOT / "setup.py").is_file() or shutil.which("git") is None,
                                reason="needs the source checkout and git")


def _run(cmd: list[str], *, cwd: Path, env: dict[str, str], timeout: int,
         check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} exited {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}"
                    f"\n--- stderr\n{proc.stderr[-4000:]}")
    return proc


def _env(work: Path, path: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SCRUB}
    env.update(PATH=path, PIP_DISABLE_PIP_VERSION_CHECK="1",
               JUPYTER_DATA_DIR=str(work / "jupyter" / "data"),
               JUPYTER_CONFIG_DIR=str(work / "jupyter" / "config"),
               JUPYTER_RUNTIME_DIR=str(work / "jupyter" / "runtime"))
    return env


KLI_SCAN = "tools/file/native"  # kli-scan and its stamp (a hash of its sources)
EXTENSION = "labextension/kli_kernel_labextension"  # the built extension and its stamp


def _seed_builds(clone: Path) -> dict[str, int]:
    """Copy this checkout's builds of kli-scan and the extension, with their stamps, into
    ``clone``; each copied file with its modification time (a rebuild would change them)."""
    copied: dict[str, int] = {}
    for rel, stamp in ((KLI_SCAN, ".kli-scan-hash"), (EXTENSION, ".kli-src-hash")):
        if (ROOT / rel / stamp).is_file():
            shutil.copytree(ROOT / rel, clone / rel, dirs_exist_ok=True)
            copied |= {str(p.relative_to(clone)): p.stat().st_mtime_ns
                       for p in (clone / rel).rglob("*") if p.is_file()}
    return copied


def _dependencies(sdist: Path) -> list[str]:
    """The base dependencies the sdist's pyproject.toml declares (no extras)."""
    import tomllib

    with tarfile.open(sdist) as tar:
        member = next(m for m in tar.getmembers() if m.name.count("/") == 1
                      and m.name.endswith("/pyproject.toml"))
        fh = tar.extractfile(member)
        assert fh is not None
        return list(tomllib.load(fh)["project"]["dependencies"])


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tracked (and untracked, not ignored) files, as a fresh clone has them."""
    clone = tmp_path_factory.mktemp("clone") / "kli-kernel"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        if (ROOT / rel).is_file():
            (clone / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, clone / rel)
    assert not (clone / "labextension" / "kli_kernel_labextension").exists()
    return clone


@pytest.fixture(scope="module")
def sdist(clone: Path, tmp_path_factory: pytest.TempPathFactory,
          progress: Callable[[str], None]) -> Path:
    """An sdist built from the clone's files."""
    work = tmp_path_factory.mktemp("sdist")
    progress("source install: building the sdist")
    env = _env(work, os.environ.get("PATH", "/usr/bin:/bin"))
    _run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", str(work / "dist"),
          str(clone)], cwd=work, env=env, timeout=300)
    (found,) = (work / "dist").glob("kli_kernel-*.tar.gz")
    return found


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment, no system site packages (created by the first user)."""
    return tmp_path_factory.mktemp("venv") / "venv"


def test_sdist_carries_the_extension_sources_and_no_node_modules(sdist: Path) -> None:
    with tarfile.open(sdist) as tar:
        names = [n.split("/", 1)[1] for n in tar.getnames() if "/" in n]
    for needed in ("setup.py", "labextension/package.json", "labextension/package-lock.json",
                   "labextension/build.sh", "labextension/src/index.ts",
                   "kernel/kernelspec/kernel.json"):
        assert needed in names, needed
    assert not [n for n in names if "node_modules" in n]


def test_a_wheel_from_source_without_npm_and_prebuilt_files_fails_saying_how(
        sdist: Path, tmp_path: Path) -> None:
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path, filter="data")
    (src,) = tmp_path.glob("kli_kernel-*")
    empty_path = tmp_path / "bin"  # no node, no npm, nothing else
    empty_path.mkdir()
    proc = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                 "-w", str(tmp_path / "out"), str(src)], cwd=tmp_path,
                env=_env(tmp_path, str(empty_path)), timeout=300, check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert "prebuilt JupyterLab extension" in output and "Install Node.js and npm" in output, output
    assert not list(tmp_path.glob("out/*.whl"))


KERNEL_START = r'''
import json, sys
from jupyter_client.manager import start_new_kernel
km, kc = start_new_kernel(kernel_name="kli", startup_timeout=90)
try:
    reply = kc.execute_interactive("import kli.kernel, sys; print(sys.prefix, 6 * 7)", timeout=60)
    assert reply["content"]["status"] == "ok", reply["content"]
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)
'''


@pytest.mark.slow
@pytest.mark.kernel
@pytest.mark.timeout(1500)
def test_plain_install_from_sdist_starts_the_kernel_and_enables_the_built_extension(
        sdist: Path, venv: Path, tmp_path: Path, progress: Callable[[str], None]) -> None:
    if shutil.which("npm") is None:
        if os.environ.get("CI"):
            pytest.fail("npm is missing: a source install builds the JupyterLab extension with it")
        pytest.skip("npm is missing: a source install builds the JupyterLab extension with it")
    env = _env(tmp_path, str(venv / "bin") + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"))
    progress("source install: fresh virtual environment")
    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path, env=env, timeout=120)
    py, jupyter = str(venv / "bin" / "python"), str(venv / "bin" / "jupyter")
    # The sdist's dependencies first, with uv (tests/installer.py: a minute less of pip), then
    # pip itself builds and installs the sdist: what a plain source install runs.
    progress("source install: the sdist's dependencies (uv)")
    _run(install_command(py, *_dependencies(sdist)), cwd=tmp_path, env=env, timeout=900)
    progress("source install: pip install the sdist, no extras (builds the extension)")
    _run([py, "-m", "pip", "install", "-q", str(sdist)], cwd=tmp_path, env=env, timeout=1200)

    specs = json.loads(_run([jupyter, "kernelspec", "list", "--json"], cwd=tmp_path, env=env,
                            timeout=60).stdout)["kernelspecs"]
    assert set(specs) >= {"kli"}
    for name, spec in specs.items():  # whatever the plain install lists must start
        progress(f"source install: starting kernel {name!r}")
        started = _run([py, "-c", KERNEL_START.replace('"kli"', repr(name))], cwd=tmp_path,
                       env=env, timeout=180)
        assert "42" in started.stdout, (spec, started.stdout, started.stderr)

    progress("source install: install jupyterlab")
    _run(install_command(py, "jupyterlab>=4.4,<5"), cwd=tmp_path, env=env, timeout=900)
    listing = _run([jupyter, "labextension", "list"], cwd=tmp_path, env=env, timeout=120)
    text = listing.stdout + listing.stderr
    line = next((ln for ln in text.splitlines() if "kli-kernel" in ln), "")
    assert "enabled" in line and "OK" in line, text
    share = venv / "share" / "jupyter" / "labextensions" / "kli-kernel"
    assert list((share / "static").glob("remoteEntry.*.js")), "the build hook built nothing"


@pytest.mark.slow
@pytest.mark.kernel
@pytest.mark.timeout(1500)
def test_scripts_run_prints_the_tour_url_and_serves_lab_and_notebook_on_kli(
        clone: Path, venv: Path, tmp_path: Path, progress: Callable[[str], None]) -> None:
    """scripts/run in a clone, into the environment above (it installs what is missing)."""
    import re
    import signal
    import socket
    import urllib.error
    import urllib.request

    if not (venv / "bin" / "python").exists():
        pytest.skip("runs after the sdist install test, in its environment")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = _env(tmp_path, os.environ.get("PATH", "/usr/bin:/bin"))
    env.pop("DISPLAY", None)
    env["KLI_VENV"] = str(venv)
    # kli-scan and the extension as this checkout built them (git-ignored, as a clone that ran
    # scripts/run before has them): scripts/run must rebuild neither, their sources being the
    # same. Both builds from a fresh clone run in scripts/test's own set-up, through the same
    # functions (build_native, build_labextension).
    seeded = _seed_builds(clone)
    # A repository of the clone's files as they are now: what scripts/run and the tour leave
    # behind shows in its git status.
    git = ["git", "-c", "user.name=kli", "-c", "user.email=kli@localhost"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "clone"]):
        subprocess.run([*git, *cmd], cwd=clone, capture_output=True, check=True)
    progress("scripts/run: setting up and starting JupyterLab")
    log = tmp_path / "run.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            ["bash", str(clone / "scripts" / "run"), f"--ServerApp.port={port}",
             "--ServerApp.port_retries=0"], cwd=clone, env=env, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        pattern = re.compile(rf"http://127\.0\.0\.1:{port}/lab/tree/tour\.ipynb\?token=(\w+)")
        deadline = time.monotonic() + 900
        found = None
        while found is None:
            assert proc.poll() is None, log.read_text()[-4000:]
            assert time.monotonic() < deadline, log.read_text()[-4000:]
            time.sleep(1)
            found = pattern.search(log.read_text())
        url, token = found.group(0), found.group(1)
        rebuilt = [rel for rel, mtime in seeded.items()
                   if not (clone / rel).is_file() or (clone / rel).stat().st_mtime_ns != mtime]
        assert not rebuilt, f"scripts/run rebuilt what was up to date: {rebuilt}"
        progress("scripts/run: checking the tour, Notebook 7 and the default kernel")
        for _ in range(60):  # the URL may be printed a moment before the port answers
            try:
                with urllib.request.urlopen(url, timeout=30) as page:
                    assert page.status == 200
                break
            except urllib.error.URLError:
                assert proc.poll() is None, log.read_text()[-4000:]
                time.sleep(0.5)
        else:
            pytest.fail(f"{url} did not answer\n{log.read_text()[-4000:]}")
        base = f"http://127.0.0.1:{port}"
        with urllib.request.urlopen(f"{base}/tree?token={token}", timeout=30) as page:
            assert page.status == 200 and b"notebook" in page.read().lower()  # Notebook 7
        with urllib.request.urlopen(f"{base}/api/kernelspecs?token={token}", timeout=30) as r:
            specs = json.load(r)
        assert specs["default"] == "kli" and "kli" in specs["kernelspecs"]
        # The file browser opens on the tour's copies (tour/), the notebooks first, not among
        # binder/'s build files; what the tour saves leaves the clone's git status clean.
        with urllib.request.urlopen(f"{base}/api/contents?token={token}", timeout=30) as r:
            names = {item["name"] for item in json.load(r)["content"]}
        assert {"tour.ipynb", "watch_agent.ipynb"} <= names
        assert not names & {"postBuild", "requirements.txt", "runtime.txt"}
        with urllib.request.urlopen(f"{base}/api/contents/tour.ipynb?token={token}",
                                    timeout=30) as r:
            model = json.load(r)
        model["content"]["cells"][0]["metadata"]["kli-test"] = "autosaved"
        req = urllib.request.Request(
            f"{base}/api/contents/tour.ipynb?token={token}", method="PUT",
            data=json.dumps({"type": "notebook", "format": "json",
                             "content": model["content"]}).encode(),
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 200
        (clone / "tour" / ".ipynb_checkpoints").mkdir(exist_ok=True)
        (clone / "binder" / ".ipynb_checkpoints").mkdir(exist_ok=True)
        status = subprocess.run(["git", "status", "--porcelain"], cwd=clone,
                                capture_output=True, text=True, check=True).stdout
        assert status == "", status
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
