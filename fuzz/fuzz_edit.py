"""atheris: edit, ws_patch and ws_edit on real files — any input gets a result (never an
internal error) and a rejected edit changes no byte.

    python fuzz/fuzz_edit.py -runs=20000
"""

from __future__ import annotations

import shutil

import atheris

with atheris.instrument_imports():
    from _common import snapshot, workspace_with_files

    import kli.tools.registry  # noqa: F401 - every tool module, instrumented for coverage


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    which = fdp.ConsumeIntInRange(0, 2)
    text = fdp.ConsumeUnicodeNoSurrogates(1024)
    ws, root, before = workspace_with_files()
    try:
        if which == 0:
            r = ws.call("edit", {"input": "@@ a.py\n" + text})  # type: ignore[attr-defined]
        elif which == 1:
            r = ws.call("ws_patch", {"patch": text, "path": "b.txt"})  # type: ignore[attr-defined]
        else:
            old = fdp.ConsumeUnicodeNoSurrogates(64)
            r = ws.call("ws_edit", {"path": "a.py", "old_str": old, "new_str": text})  # type: ignore[attr-defined]
        assert r.details.get("error") != "internal", r.text
        if not r.ok:
            assert snapshot(root) == before, r.text
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    from _common import run

    run(test_one_input)
