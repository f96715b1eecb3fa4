"""atheris: any pattern through search and ws_grep gives a result or a bad_regex error, and
stays inside the time bound (walk bound lowered to 0.5 s here).

    python fuzz/fuzz_regex.py -runs=20000
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time

import atheris

with atheris.instrument_imports():
    from kli.tools import Workspace
    from kli.tools.file import walk as walk_mod
    from kli.tools.ws import ws_grep

walk_mod.MAX_SECONDS = ws_grep.MAX_SECONDS = 0.5
ROOT = tempfile.mkdtemp(prefix="kli-fuzz-rx-")
with open(os.path.join(ROOT, "long.txt"), "w") as fh:
    fh.write("a" * 3000 + "\n" + "ab" * 500 + "\nint main(void) { return 0; }\n")
WS = Workspace(ROOT)


def test_one_input(data: bytes) -> None:
    pattern = atheris.FuzzedDataProvider(data).ConsumeUnicodeNoSurrogates(64)
    started = time.monotonic()
    session = WS.open_session("fuzz")  # a fresh one: the loop guard sees no repeats
    try:
        r = WS.call("search", {"pattern": pattern, "path": "long.txt"}, session)
        g = WS.call("ws_grep", {"pattern": pattern}, session)
    finally:
        WS.close_session(session.id)
    assert r.details.get("error") in (None, "bad_regex"), r.text
    assert g.details.get("error") in (None, "bad_arguments"), g.text
    assert time.monotonic() - started < 30, pattern


if __name__ == "__main__":
    from _common import run

    try:
        run(test_one_input)
    finally:
        shutil.rmtree(ROOT, ignore_errors=True)
