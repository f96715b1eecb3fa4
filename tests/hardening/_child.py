"""Helpers run in a child process (``python _child.py NAME ARGS_JSON``) so a fault — a file
size limit, a descriptor limit, SIGKILL — hits the child and never the test runner."""

from __future__ import annotations

import json
import os
import resource
import signal
import sys


def edit_two_files_with_limit(root: str, limit: str, value: int, patch_kind: str) -> None:
    from kli.tools import Workspace
    from kli.tools.file.anchors import line_hash

    ws = Workspace(root)
    ws.call("read", {"path": "a.txt"})
    ws.call("read", {"path": "b.txt"})
    ws.call("ws_read", {"path": "a.txt"})
    ws.call("ws_read", {"path": "b.txt"})
    a_first = open(os.path.join(root, "a.txt")).read().split("\n")[0]
    b_first = open(os.path.join(root, "b.txt")).read().split("\n")[0]
    big = "B" * 200_000
    if limit == "fsize":
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of death
        resource.setrlimit(resource.RLIMIT_FSIZE, (value, value))
    elif limit == "nofile":  # ``value`` descriptors more than are open now
        cap = len(os.listdir("/proc/self/fd")) + value
        resource.setrlimit(resource.RLIMIT_NOFILE, (cap, cap))
    if patch_kind == "edit":
        r = ws.call("edit", {"input": f"@@ a.txt\n= 1:{line_hash(a_first)}\n~small\n"
                                      f"@@ b.txt\n= 1:{line_hash(b_first)}\n~{big}\n"})
    else:
        patch = (f"--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-{a_first}\n+small\n"
                 f"--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-{b_first}\n+{big}\n")
        r = ws.call("ws_patch", {"patch": patch})
    print(json.dumps({"ok": r.ok, "text": r.text[:2000], "error": r.details.get("error")}))


def write_forever(root: str, size: int) -> None:
    """Alternate the whole content of big.txt between all-'A' and all-'B' until killed."""
    from kli.tools import Workspace

    ws = Workspace(root)
    n = 0
    print("ready", flush=True)
    while True:
        ch = "AB"[n % 2]
        r = ws.call("write", {"path": "big.txt", "content": ch * size})
        assert r.ok, r.text
        n += 1




def bash_output(root: str, nbytes: int) -> None:
    """Run ``yes | head -c NBYTES`` through the bash tool; report the child's peak memory."""
    import time

    from kli.tools import Workspace

    ws = Workspace(root)
    ws.call("bash", {"command": "true"})
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    r = ws.call("bash", {"command": f"yes | head -c {nbytes}", "timeout": 300})
    elapsed = time.monotonic() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"ok": r.ok, "text_len": len(r.text), "tail": r.text[-600:],
                      "seconds": elapsed, "base_kib": base, "peak_kib": peak,
                      "details": {k: v for k, v in r.details.items() if isinstance(v, (int, str, bool))}}))


if __name__ == "__main__":
    name = sys.argv[1]
    args = json.loads(sys.argv[2])
    globals()[name](**args)
