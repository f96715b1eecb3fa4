"""The prebuilt extension: JupyterLab's CodeMirror is shared, never bundled a second time.

Two copies of @codemirror/state in one page break every editor extension passed between them
("Unrecognized extension value"), so the extension must take @codemirror/state, view and
language (and @jupyterlab/codemirror) from JupyterLab's shared scope with no fallback copy of
its own. Checked on the installed extension (KLI_TEST_INSTALLED_WHEEL=1) or the checkout's build.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED_FROM_JUPYTERLAB = (
    "@codemirror/state",
    "@codemirror/view",
    "@codemirror/language",
    "@jupyterlab/codemirror",
)
# Strings only the named package's own code contains.
MARKERS = {
    "@codemirror/state": "Unrecognized extension value in extension set",
    "@codemirror/view": "Trying to update state with a transaction that doesn't start from",
}


def _extension_dir() -> Path:
    installed = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "kli-kernel"
    if os.environ.get("KLI_TEST_INSTALLED_WHEEL") and (installed / "package.json").is_file():
        return installed
    built = REPO / "labextension" / "kli_kernel_labextension"
    if not (built / "package.json").is_file():
        if os.environ.get("KLI_REQUIRE_BROWSER"):
            pytest.fail(f"the extension is not built ({built})")
        pytest.skip(f"the extension is not built ({built}); run npm run build in labextension/")
    return built


def test_install_json_names_the_python_package() -> None:
    ext = _extension_dir()
    install = json.loads((ext / "install.json").read_text())
    assert install["packageManager"] == "python"
    assert install["packageName"] == "kli-kernel"
    assert json.loads((ext / "package.json").read_text())["name"] == "kli-kernel"


def test_codemirror_singletons_come_from_jupyterlab_without_a_bundled_copy() -> None:
    static = _extension_dir() / "static"
    (remote,) = static.glob("remoteEntry.*.js")
    entry = remote.read_text()
    for pkg in SHARED_FROM_JUPYTERLAB:
        consume = re.search(re.escape(f'"{pkg}",') + r"import:null,[^}]*", entry)
        assert consume, f"{pkg} is not consumed from the shared scope"
        assert "singleton:!0" in consume.group(0), f"{pkg} is not a singleton"
        assert "fallback:void 0" in consume.group(0), f"{pkg} has a bundled fallback"
    chunks = {p.name: p.read_text() for p in static.glob("*.js")}
    for pkg, marker in MARKERS.items():
        holders = [name for name, text in chunks.items() if marker in text]
        assert holders == [], f"{pkg} code is bundled in {holders}"
    # @codemirror/merge is not in JupyterLab: the extension brings it.
    assert any("unifiedMergeView" in text for text in chunks.values())
