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
