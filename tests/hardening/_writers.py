"""Writer processes for test_concurrent_writers.py: ``python _writers.py ROLE JSON-ARGS``.

Each prints one JSON line at the end: what it did (edits reported applied, refusals, lines it
wrote). Roles:

- ``kli``: a kli Workspace of its own inserting ``{tag}{i}`` after the line ``{marker}`` with
  one tool (``edit``, ``ws_edit`` or ``ws_patch``), retrying a refused edit after a re-read;
- ``editor``: an editor's save, no lock: read the file, add ``e{i}`` at its end, write a new
  file beside it and rename it over;
- ``appender``: ``open(path, "a")`` and one line ``p{i}`` per open, no lock.
"""

from __future__ import annotations

import json
import os
import sys
import time


def _kli(root: str, tool: str, marker: str, tag: str, count: int, start_at: float) -> dict:
    from kli.tools import Workspace
    from kli.tools.file.anchors import line_hash

    ws = Workspace(root)
    applied: list[str] = []
    refused: dict[str, int] = {}
    while time.time() < start_at:
        time.sleep(0.001)
    for i in range(count):
        line = f"{tag}{i}"
        for _attempt in range(200):
            if tool == "edit":
                r = ws.call("read", {"path": "f.txt"})
                rows = [row for row in r.text.split("\n") if row.endswith(f"|{marker}")]
                n = int(rows[0].split(":")[0])
                r = ws.call("edit", {"input": f"@@ f.txt\n+ {n}:{line_hash(marker)}\n~{line}\n"})
            elif tool == "ws_edit":
                ws.call("ws_read", {"path": "f.txt"})
                r = ws.call(
                    "ws_edit",
                    {"path": "f.txt", "old_str": f"{marker}\n", "new_str": f"{marker}\n{line}\n"},
                )
            else:
                with open(os.path.join(root, "f.txt")) as fh:
                    lines = fh.read().split("\n")
                n = lines.index(marker) + 1
                patch = f"--- a/f.txt\n+++ b/f.txt\n@@ -{n} +{n},2 @@\n {marker}\n+{line}\n"
                r = ws.call("ws_patch", {"patch": patch})
            if r.ok:
                applied.append(line)
                break
            key = str(r.details.get("error"))
            refused[key] = refused.get(key, 0) + 1
    return {"applied": applied, "refused": refused}


def _editor(path: str, count: int, start_at: float) -> dict:
    written: list[str] = []
    while time.time() < start_at:
        time.sleep(0.001)
    for i in range(count):
        with open(path) as fh:
            text = fh.read()
        tmp = f"{path}.editor~"
        with open(tmp, "w") as fh:
            fh.write(text + f"e{i}\n")
        os.replace(tmp, path)
        written.append(f"e{i}")
        time.sleep(0.0005)
    return {"written": written}


def _appender(path: str, count: int, start_at: float) -> dict:
    written: list[str] = []
    while time.time() < start_at:
        time.sleep(0.001)
    for i in range(count):
        with open(path, "a") as fh:
            fh.write(f"p{i}\n")
        written.append(f"p{i}")
        time.sleep(0.0002)
    return {"written": written}


def main() -> None:
    role, args = sys.argv[1], json.loads(sys.argv[2])
    if role == "kli":
        out = _kli(**args)
    elif role == "editor":
        out = _editor(**args)
    else:
        out = _appender(**args)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
