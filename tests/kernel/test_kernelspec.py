"""The kli kernelspec is installed and found by ``jupyter kernelspec list``; the install
subcommand puts it where asked; kernel_info names the implementation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.kernelspec import SPEC_SOURCE

pytestmark = pytest.mark.kernel

FILES = {"kernel.json", "logo-32x32.png", "logo-64x64.png", "logo-svg.svg"}


def _jupyter() -> str:
    return os.path.join(os.path.dirname(sys.executable), "jupyter")


def test_jupyter_kernelspec_list_finds_kli(kli_kernelspec: str) -> None:
    out = subprocess.run([_jupyter(), "kernelspec", "list", "--json"], check=True,
                         capture_output=True, text=True).stdout
    spec = json.loads(out)["kernelspecs"]["kli"]
    assert spec["spec"]["display_name"] == "Python 3 (kli)"
    assert spec["spec"]["language"] == "python"
    assert spec["spec"]["argv"] == ["python", "-m", "kli.kernel", "-f", "{connection_file}"]
    assert spec["spec"]["interrupt_mode"] == "signal"
    assert FILES <= set(os.listdir(spec["resource_dir"]))


def test_install_subcommand_writes_the_spec_under_a_prefix(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "kli.kernel", "install", "--prefix", str(tmp_path)],
                          check=True, capture_output=True, text=True)
    dest = tmp_path / "share" / "jupyter" / "kernels" / "kli"
    assert str(dest) in done.stdout
    assert set(os.listdir(dest)) == FILES
    assert json.loads((dest / "kernel.json").read_text()) == json.loads(
        (SPEC_SOURCE / "kernel.json").read_text())
    assert (dest / "logo-64x64.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_install_subcommand_refuses_two_destinations(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "kli.kernel", "install", "--user", "--prefix",
                           str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2 and "not allowed with" in done.stderr


def test_kernel_info_names_kli_and_its_comm_targets(kernel: Any) -> None:
    msg_id = kernel.kc.kernel_info()
    reply = kernel.kc.get_shell_msg(timeout=10)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kernel.kc.get_shell_msg(timeout=10)
    content = reply["content"]
    assert content["implementation"] == "kli" and "%kli tools" in content["banner"]
    assert content["language_info"]["name"] == "python"
    assert content["kli"]["comm_targets"] == ["kli.agent", "kli.ui"]


def test_install_works_from_a_wheel_install_without_the_source_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kli.kernel import install

    prefix = tmp_path / "prefix"
    dest = install.install(prefix=str(prefix))  # as the wheel's shared-data would have
    monkeypatch.setattr(install, "SPEC_DIR", str(tmp_path / "not-there"))
    monkeypatch.setattr(sys, "prefix", str(prefix))
    assert install.spec_source() == dest
    # re-installing over the very copy it reads from keeps it whole
    again = install.install(prefix=str(prefix))
    assert again == dest and set(os.listdir(dest)) == FILES


def test_install_writes_the_sandboxed_kernelspec_beside_kli(tmp_path: Path) -> None:
    """``kli-sandboxed`` (docs/sandbox.md) starts the same kernel through the box's launcher."""
    subprocess.run([sys.executable, "-m", "kli.kernel", "install", "--prefix", str(tmp_path)],
                   check=True, capture_output=True, text=True)
    dest = tmp_path / "share" / "jupyter" / "kernels" / "kli-sandboxed"
    spec = json.loads((dest / "kernel.json").read_text())
    assert spec["argv"][1:3] == ["-m", "kli.kernel.sandbox"]
    assert spec["interrupt_mode"] == "message" and spec["display_name"] == "Python 3 (kli, sandboxed)"
    assert set(os.listdir(dest)) == FILES
