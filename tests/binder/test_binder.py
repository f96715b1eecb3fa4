"""Binder: build an environment from binder/ the way repo2docker does, run every demo notebook.

repo2docker, given a ``binder/`` folder, installs ``binder/requirements.txt`` into its Python
environment and then runs ``binder/postBuild`` from the repository root. This test does the same
in a fresh virtual environment (the requirements with uv, ``tests/installer.py``: repo2docker
uses its own installer; postBuild's ``pip install`` is postBuild's own), on a copy of the
checkout (tracked and untracked-but-not-ignored files, as a clone would have them), then
executes each demo notebook top to bottom with nbclient on the ``kli`` kernel of THAT
environment — twice, because a reader re-runs notebooks. Any error output, or a traceback on
stderr, fails the test and names the notebook and cell.

The environment (its virtual environment with binder/requirements.txt and the project's
dependencies) is cached under ``$XDG_CACHE_HOME/kli-kernel/tests`` (``KLI_TEST_CACHE``), keyed by
a hash of what decides its contents — binder/requirements.txt, binder/postBuild, pyproject.toml,
setup.py, the Python version: a re-run reuses it and runs only postBuild again (so the project's
current sources are installed and checked). ``KLI_TEST_FRESH_BINDER=1`` builds from nothing.
Each step prints its progress as it starts.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.installer import install_command

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
NOTEBOOKS = ["tour.ipynb", "watch_agent.ipynb", "slmcode_tools.ipynb", "bring_your_own_agent.ipynb",
             "chat_agent.ipynb"]
ARTIFACTS = ROOT / "tests" / "artifacts" / "binder"

# Environment variables that would make a notebook behave differently from a fresh Binder.
_SCRUB = ("PYTHONPATH", "VIRTUAL_ENV", "JUPYTER_PATH", "JUPYTER_CONFIG_PATH", "OPENAI_API_KEY",
          "OPENAI_BASE_URL", "KLI_MODEL", "KLI_TEST_INSTALLED_WHEEL", "PYTHONHOME")

# Runs inside the Binder environment. A cell whose metadata names ``kli.wait_for`` (a file the
# notebook's background agent creates when it is done) runs only once that file exists — as a
# reader does, who watches the activity panel before running the next cell. The wait happens
# BETWEEN cells, while the kernel is idle, which is what lets the agent's calls run.
RUNNER = r'''
import contextlib, json, os, sys, time
import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

notebook, cwd, out = sys.argv[1:4]
spec = KernelSpecManager().get_kernel_spec("kli")
nb = nbformat.read(notebook, as_version=4)
waits = []
started_kernel = contextlib.ExitStack()
for attempt in range(3):
    client = NotebookClient(nb, kernel_name="kli", timeout=180, startup_timeout=90,
                            allow_errors=True, resources={"metadata": {"path": cwd}})
    try:
        started_kernel.enter_context(client.setup_kernel())
        break
    except Exception as exc:  # jupyter_client chose a port that another process took before
        if attempt == 2:      # the kernel bound it (other tests start kernels too): again
            raise
        print(f"the kernel did not start ({type(exc).__name__}); starting it again",
              file=sys.stderr)
        time.sleep(1)
with started_kernel:
    for index, cell in enumerate(nb.cells):
        wait_for = cell.metadata.get("kli", {}).get("wait_for")
        if wait_for:
            started = time.monotonic()
            while not os.path.exists(os.path.join(cwd, wait_for)):
                if time.monotonic() - started > 120:
                    break
                time.sleep(0.2)
            waits.append(round(time.monotonic() - started, 1))
        client.execute_cell(cell, index)
nbformat.write(nb, out)
problems = []
for index, cell in enumerate(nb.cells):
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            problems.append({"cell": index, "kind": "error",
                             "text": output.get("ename", "") + ": " + output.get("evalue", "")})
        elif output.get("output_type") == "stream" and output.get("name") == "stderr" \
                and "Traceback" in output.get("text", ""):
            problems.append({"cell": index, "kind": "stderr traceback", "text": output["text"][-800:]})
print(json.dumps({"resource_dir": spec.resource_dir, "prefix": sys.prefix, "problems": problems,
                  "cells": len(nb.cells), "waits": waits}))
'''


def _run(cmd: list[str], *, cwd: Path, env: dict[str, str], timeout: int) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} exited {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}"
                    f"\n--- stderr\n{proc.stderr[-4000:]}")
    return proc.stdout


def _checkout_files() -> list[str]:
    """The files a fresh clone would have, plus untracked files not ignored (work in progress)."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, check=True)
    return [f for f in out.stdout.decode().split("\0") if f and (ROOT / f).is_file()]


# What decides the cached environment's contents (besides the project's own sources, which
# postBuild installs again on every run).
ENV_INPUTS = ("binder/requirements.txt", "binder/postBuild", "pyproject.toml", "setup.py")
CACHE = Path(os.environ.get("KLI_TEST_CACHE") or Path(
    os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kli-kernel" / "tests")


def environment_key() -> str:
    digest = hashlib.sha256(sys.version.encode())
    for rel in ENV_INPUTS:
        path = ROOT / rel
        digest.update(rel.encode() + b"\0" + (path.read_bytes() if path.is_file() else b""))
    return digest.hexdigest()[:16]


@pytest.fixture(scope="module")
def binder_env(tmp_path_factory: pytest.TempPathFactory,
               progress: Callable[[str], None]) -> dict[str, Path | dict[str, str]]:
    if shutil.which("git") is None:
        pytest.skip("git is needed to copy the checkout")
    if shutil.which("npm") is None and (ROOT / "labextension" / "package.json").exists():
        if os.environ.get("CI"):
            pytest.fail("npm is missing: binder/postBuild builds the JupyterLab extension with it")
        pytest.skip("npm is missing: binder/postBuild builds the JupyterLab extension with it")
    work = tmp_path_factory.mktemp("binder")
    repo = work / "repo"
    fresh = bool(os.environ.get("KLI_TEST_FRESH_BINDER"))
    key = environment_key()
    venv = work / "venv" if fresh else CACHE / f"binder-venv-{key}"
    for rel in _checkout_files():
        dest = repo / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copy2(ROOT / rel, dest)
        except FileNotFoundError:  # an untracked scratch file removed meanwhile (shared tree)
            continue
    jupyter_home = work / "jupyter"
    env = {k: v for k, v in os.environ.items() if k not in _SCRUB}
    env.update(
        PATH=str(venv / "bin") + os.pathsep + env.get("PATH", "/usr/bin:/bin"),
        # Only the new environment's kernelspecs and extensions, never the user's.
        JUPYTER_DATA_DIR=str(jupyter_home / "data"),
        JUPYTER_CONFIG_DIR=str(jupyter_home / "config"),
        JUPYTER_RUNTIME_DIR=str(jupyter_home / "runtime"),
        XDG_CONFIG_HOME=str(work / "xdg"),  # no user kli settings
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "binder.lock", "w") as lock:  # one build at a time per cache
        fcntl.flock(lock, fcntl.LOCK_EX)
        ready = venv / ".kli-binder-ready"
        if ready.is_file():
            progress(f"Binder environment: reusing {venv} (its inputs are unchanged)")
        else:
            for old in CACHE.glob("binder-venv-*"):  # environments of inputs unused for a day
                marker = old / ".kli-binder-ready"
                if not marker.exists() or time.time() - marker.stat().st_mtime > 86400:
                    shutil.rmtree(old, ignore_errors=True)
            shutil.rmtree(venv, ignore_errors=True)
            progress(f"Binder environment: creating {venv}")
            _run([sys.executable, "-m", "venv", str(venv)], cwd=work, env=env, timeout=120)
            # repo2docker's step (its own installer); postBuild's pip is binder/'s and stays pip
            progress("Binder environment: install -r binder/requirements.txt")
            _run(install_command(venv / "bin" / "python", "-r", "binder/requirements.txt"),
                 cwd=repo, env=env, timeout=900)
        progress("Binder environment: binder/postBuild (extension build, pip install .)")
        _run(["./binder/postBuild"], cwd=repo, env=env, timeout=900)
        ready.touch()
        progress("Binder environment: ready")
    return {"repo": repo, "venv": venv, "env": env}


# The first test to use the environment builds it: a cold pip and npm cache can take minutes.
BUILD_TIMEOUT = 1500


@pytest.mark.slow  # builds the Binder environment: started first on a worker (tests/conftest.py)
@pytest.mark.timeout(BUILD_TIMEOUT)
def test_postbuild_installs_kernel_and_prebuilt_extension(binder_env: dict) -> None:
    venv, env, repo = binder_env["venv"], binder_env["env"], binder_env["repo"]
    specs = json.loads(_run([str(venv / "bin" / "jupyter"), "kernelspec", "list", "--json"],
                            cwd=repo, env=env, timeout=60))["kernelspecs"]
    assert "kli" in specs
    assert Path(specs["kli"]["resource_dir"]).resolve().is_relative_to(venv.resolve())
    if (ROOT / "labextension" / "package.json").exists():
        share = venv / "share" / "jupyter" / "labextensions" / "kli-kernel"
        assert list((share / "static").glob("remoteEntry.*.js")), "prebuilt extension missing"
    config = venv / "etc" / "jupyter" / "jupyter_server_config.json"
    assert json.loads(config.read_text())["MultiKernelManager"]["default_kernel_name"] == "kli"
    # the server of that environment takes it (not only a file that says so)
    probe = ("from jupyter_server.serverapp import ServerApp; app = ServerApp(); "
             "app.load_config_file(); print(app.config.MultiKernelManager.default_kernel_name)")
    assert _run([str(venv / "bin" / "python"), "-c", probe], cwd=repo, env=env,
                timeout=120).strip() == "kli"
    # Jupyter AI's chat: kli is its default persona, and the persona's entry point loads there
    assert (json.loads(config.read_text())["PersonaManager"]["default_persona_id"]
            == "jupyter-ai-personas::kli::KliPersona")
    personas = ("from importlib.metadata import entry_points; "
                "[e.load() for e in entry_points(group='jupyter_ai.personas') if e.name == 'kli']; "
                "print(sorted(e.name for e in entry_points(group='jupyter_ai.personas')))")
    assert "'kli'" in _run([str(venv / "bin" / "python"), "-c", personas], cwd=repo, env=env,
                           timeout=120)


@pytest.mark.kernel
@pytest.mark.timeout(BUILD_TIMEOUT)
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_demo_notebook_runs_top_to_bottom_twice_without_errors(binder_env: dict, name: str) -> None:
    repo, venv, env = binder_env["repo"], binder_env["venv"], binder_env["env"]
    runner = repo.parent / "run_notebook.py"
    runner.write_text(RUNNER)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for attempt in (1, 2):
        out = ARTIFACTS / f"{Path(name).stem}.run{attempt}.ipynb"
        report = json.loads(_run(
            [str(venv / "bin" / "python"), str(runner), str(repo / "binder" / name),
             str(repo / "binder"), str(out)], cwd=repo / "binder", env=env, timeout=600,
        ).strip().splitlines()[-1])
        assert Path(report["resource_dir"]).resolve().is_relative_to(venv.resolve())
        assert report["problems"] == [], f"{name}, run {attempt} (executed copy: {out})"
        assert report["cells"] > 3


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_demo_notebook_opens_on_the_kli_kernel_with_no_stored_outputs(name: str) -> None:
    nb = json.loads((BINDER / name).read_text(encoding="utf-8"))
    assert nb["metadata"]["kernelspec"]["name"] == "kli"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(not c.get("outputs") and c.get("execution_count") is None for c in code)


def test_watch_agent_transcript_matches_a_fresh_recording() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "tests" / "binder" / "make_transcript.py"),
                          "--check"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    transcript = json.loads((BINDER / "agent_transcript.json").read_text(encoding="utf-8"))
    outcomes = [(s["tool"], s["recorded_ok"]) for s in transcript["steps"]]
    # reads, edits, meets a stale anchor, recovers, leaves a repair preview
    assert ("edit", False) in outcomes[:5] and outcomes[-1] == ("edit", False)
    assert "stale anchor" in transcript["steps"][3]["recorded_text"]
    assert "Repair preview" in transcript["steps"][-1]["recorded_text"]
