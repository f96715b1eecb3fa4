"""Which other notebooks' review an agent's call must honour (``kli.kernel.client.reach``),
alone: one case a file in ``reach/`` — the kernel the call goes to, the server's other kli
kernels as ``reach`` answered, the names to show, and the ``review`` to send with the call. The
route and the persona through a real server: tests/ai/acp/test_route_locked.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kli.kernel.client.reach import Kernel, review_floor

CASES = sorted((Path(__file__).parent / "reach").glob("*.json"))


def _kernel(data: dict[str, Any]) -> Kernel:
    return Kernel(data["kernel_id"], tuple(data["notebooks"]), data["approval"], data["root"],
                  data["boxed"])


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_review_floor(case: Path) -> None:
    data = json.loads(case.read_text())
    floor = review_floor(_kernel(data["here"]), [_kernel(o) for o in data["others"]],
                         data["shown"])
    assert floor == data["expect"], data["doc"]


def test_a_dead_servers_file_is_not_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server killed without its clean-up leaves its jpserver-*.json; its port may be another
    program's by now. The check asks no such server: here the port is a listener that would
    hold every question unanswered."""
    import json
    import socket
    import subprocess
    import sys

    from kli.kernel.client.reach import notebook_kernels

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        (tmp_path / f"jpserver-{gone.pid}.json").write_text(json.dumps(
            {"url": f"http://127.0.0.1:{port}/", "token": "", "root_dir": str(tmp_path),
             "pid": gone.pid}))
        monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))
        assert notebook_kernels() == {}
        with pytest.raises(TimeoutError):
            listener.accept()  # nobody came
