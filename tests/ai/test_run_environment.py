"""What ``bash scripts/run`` gives its ``.venv`` for the chat (issue 36): one install call with the
project's ``lab`` extra and Jupyter AI 3.2, and ``ai`` (litellm) when a model is set up (not
``mcp``: Jupyter AI 3.2 pins mcp<2), the kli persona on Jupyter AI's entry point group, and kli as the default persona in
the environment's server config (binder/default_kernel.py, which Binder's postBuild runs too).
This venv (.venv-dev-ai / .venv-test-ai) holds the same packages; the full scripts/run, timed on a
fresh environment, is in the README."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from tests.ai.harness import PERSONA_ID
from tests.ai.keyless import MODEL_VARS

ROOT = Path(__file__).resolve().parents[2]


def _extras(env: dict[str, str], venv: Path) -> set[str]:
    """The extras scripts/run's install call asks for, from its own lines, run in bash."""
    text = (ROOT / "scripts" / "run").read_text()
    start = text.index("extras=lab\n")
    end = text.index("fi\n", start) + 3
    out = subprocess.run(["bash", "-c", f'VENV="{venv}"\n{text[start:end]}echo "$extras"'],
                         env=env, capture_output=True, text=True, check=True).stdout
    return set(out.strip().split(","))


def test_scripts_run_installs_jupyter_ai_in_its_one_install_call_and_litellm_with_a_model(
        tmp_path: Path) -> None:
    text = (ROOT / "scripts" / "run").read_text()
    calls = [line for line in text.splitlines() if line.strip().startswith("py_install")]
    assert len(calls) == 1, calls
    assert '-e ".[$extras]" "jupyter-ai==3.2.*"' in calls[0], calls[0]
    assert "binder/default_kernel.py" in text
    bare = {k: v for k, v in os.environ.items() if k not in MODEL_VARS}
    no_litellm = tmp_path / "venv"  # a fresh venv: no litellm
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(no_litellm)], check=True)
    assert _extras(bare, no_litellm) == {"lab"}  # the keyless demo needs no model client
    for var, value in [("OPENAI_API_KEY", "sk-x"), ("KLI_AGENT_MODEL", "ollama/qwen2.5-coder")]:
        assert _extras({**bare, var: value}, no_litellm) == {"lab", "ai"}, var
    assert _extras(bare, Path(sys.prefix)) == {"lab", "ai"}  # litellm there already: kept current


def test_the_kli_persona_is_on_jupyter_ais_entry_point_group_and_loads() -> None:
    found = [e for e in entry_points(group="jupyter_ai.personas") if e.name == "kli"]
    assert len(found) == 1
    persona = found[0].load()
    assert f"jupyter-ai-personas::{found[0].name}::{persona.__name__}" == PERSONA_ID


def test_default_kernel_makes_kli_the_default_persona_and_keeps_other_settings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("default_kernel",
                                                  ROOT / "binder" / "default_kernel.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    config = tmp_path / "etc" / "jupyter" / "jupyter_server_config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"ServerApp": {"ip": "127.0.0.1"}}))
    assert module.main() == 0
    written = json.loads(config.read_text())
    assert written["PersonaManager"]["default_persona_id"] == PERSONA_ID
    assert written["MultiKernelManager"]["default_kernel_name"] == "kli"
    assert written["ServerApp"] == {"ip": "127.0.0.1"}
