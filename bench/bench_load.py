"""Load: several agents attached to one kli kernel, each calling tools as fast as it can.

    python bench/bench_load.py                      # 4 agents, 60 s (the on-demand run)
    python bench/bench_load.py --duration 10        # what the CI test runs

Each agent is its own process with its own ``kli.client`` connection (loopback ZMQ only) and
makes a mix of calls on a shared tree: ``read`` of a source file, ``search`` and ``ws_grep``
over the tree, and a racing ``edit`` on one shared file — it reads the file, picks a line, and
replaces it with a line carrying a unique token. Other agents' edits change lines between the
read and the edit, so many edits are stale and must be refused.

Checked at the end (``run`` returns them, the script exits 1 when one fails):
- no reply lost (every call answered within its timeout) or mismatched (each reply is the
  answer to its own request: a read names its file's marker line, a search its pattern);
- every stale edit refused rather than applied: each applied edit's anchor matched the file it
  was applied to (its reported ``before``), the applied edits form one chain from the initial
  file to the final one (each one's ``before`` is another's ``after``: no update lost, no other
  write), and no refused edit's token is in the final file;
- the kernel's memory flat after a warm-up (RSS at the end vs at the end of the warm-up).
The run is bounded in time (``--duration``) and count (``--max-calls`` per agent).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SRC_FILES = 40
SHARED_LINES = 12
CALL_TIMEOUT = 60.0
WARMUP_FRACTION = 0.3
# The kernel's RSS may grow this much after the warm-up (the shared file and the event ring
# still grow a little).
RSS_TOLERANCE_MIB = 24.0
OPS = (("read", 35), ("search", 20), ("ws_grep", 10), ("edit", 35))


# -- the agent process -----------------------------------------------------------------------

def _pick(rng: random.Random) -> str:
    total = sum(w for _, w in OPS)
    x = rng.uniform(0, total)
    for name, w in OPS:
        x -= w
        if x <= 0:
            return name
    return OPS[-1][0]


def agent_main(args: argparse.Namespace) -> None:
    from kli import client

    rng = random.Random(args.agent * 7919)
    agent = client.connect(args.connection_file, label=f"load-{args.agent}", timeout=CALL_TIMEOUT)
    print("ready", flush=True)
    sys.stdin.readline()  # "go"
    lat: dict[str, list[float]] = {name: [] for name, _ in OPS}
    applied: list[dict[str, Any]] = []
    refused: list[str] = []
    other_errors: list[str] = []
    mismatched: list[str] = []
    lost: list[str] = []
    calls = 0
    seq = 0
    end = time.monotonic() + args.duration
    row = re.compile(r"^(\d+):([0-9a-f]{2})\|", re.MULTILINE)

    def timed(op: str, tool: str, targs: dict[str, Any]) -> Any:
        nonlocal calls
        calls += 1
        t0 = time.perf_counter()
        try:
            r = agent.call(tool, targs, timeout=CALL_TIMEOUT)
        except client.KernelError as exc:
            lost.append(f"{tool}: {exc}")
            return None
        lat[op].append(time.perf_counter() - t0)
        return r

    while time.monotonic() < end and calls < args.max_calls:
        op = _pick(rng)
        if op == "read":
            n = rng.randrange(SRC_FILES)
            r = timed(op, "read", {"path": f"src/m{n:02d}.py"})
            if r is not None and (not r.ok or f"# marker m{n:02d}" not in r.text):
                mismatched.append(f"read m{n:02d}: {r.text[:120]}")
        elif op == "search":
            n = rng.randrange(SRC_FILES)
            r = timed(op, "search", {"pattern": f"def f{n:02d}_", "path": "src/**/*.py"})
            if r is not None and (not r.ok or f"src/m{n:02d}.py (1 matching line)" not in r.text):
                mismatched.append(f"search f{n:02d}: {r.text[:120]}")
        elif op == "ws_grep":
            n = rng.randrange(SRC_FILES)
            # Each pattern differs (an alternative that never matches): the slmcode loop guard
            # answers a repeated identical call with a nudge, which is not what is measured.
            r = timed(op, "ws_grep", {"pattern": f"marker m{n:02d}$|^never{calls}$", "path": "src"})
            if r is not None and f"src/m{n:02d}.py:1:" not in r.text:
                mismatched.append(f"ws_grep m{n:02d}: {r.text[:120]}")
        else:
            r = timed("read", "read", {"path": "shared.txt"})
            if r is None or not r.ok:
                continue
            anchors = row.findall(r.text)
            if not anchors:
                mismatched.append("read shared.txt: no anchors")
                continue
            line, hh = rng.choice(anchors)
            seq += 1
            token = f"TOKEN-a{args.agent}-{seq}"
            r = timed(op, "edit", {"input": f"@@ shared.txt\n= {line}:{hh}\n~{token}\n"})
            if r is None:
                continue
            if r.ok:
                change = r.details["files"][0]
                applied.append({"token": token, "line": int(line), "hh": hh,
                                "before": change["before"], "after": change["after"]})
            elif r.details.get("error") in ("stale_anchor", "stale") or "stale" in r.text:
                # stale: the file changed under the edit, or another agent's change was still
                # being put in place (held open for writing): refused, nothing written
                refused.append(token)
            else:
                other_errors.append(r.text[:200])
    agent.close()
    Path(args.out).write_text(json.dumps({
        "agent": args.agent, "calls": calls, "latencies": lat, "applied": applied,
        "refused": refused, "other_errors": other_errors, "mismatched": mismatched,
        "lost": lost,
    }))


# -- the driver ------------------------------------------------------------------------------

def _shared_text() -> str:
    return "".join(f"shared line {i}\n" for i in range(SHARED_LINES))


def _make_tree(root: Path) -> None:
    (root / "src").mkdir(parents=True)
    (root / ".kli").mkdir()
    # Only the file gates: nothing in this run can execute a command or code.
    (root / ".kli" / "settings.json").write_text(
        json.dumps({"capabilities": ["file/read", "file/write", "file/edit"]}))
    for n in range(SRC_FILES):
        body = [f"# marker m{n:02d}", "import os", ""]
        for k in range(30):
            body += [f"def f{n:02d}_{k}(x):" if k == 0 else f"def g{n:02d}_{k}(x):",
                     f"    return x + {k}", ""]
        (root / "src" / f"m{n:02d}.py").write_text("\n".join(body) + "\n")
    (root / "shared.txt").write_text(_shared_text())


def run(duration: float = 60.0, agents: int = 4, max_calls: int = 200_000,
        quiet: bool = False) -> dict[str, Any]:
    """Run the load; return the measurements and the checks (see the module docstring)."""
    import psutil
    from jupyter_client.manager import KernelManager

    tmp = Path(tempfile.mkdtemp(prefix="kli-load-"))
    root = tmp / "root"
    _make_tree(root)
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(tmp / "xdg")
    env.pop("PYTEST_CURRENT_TEST", None)
    km = KernelManager(kernel_name="kli")
    km.start_kernel(cwd=str(root), env=env)
    procs: list[subprocess.Popen[str]] = []
    try:
        kc = km.client()
        kc.start_channels()
        kc.wait_for_ready(timeout=60)
        kernel = psutil.Process(km.provisioner.pid)  # type: ignore[union-attr]
        outs = [tmp / f"agent{i}.json" for i in range(agents)]
        for i in range(agents):
            procs.append(subprocess.Popen(
                [sys.executable, __file__, "--agent", str(i), "--connection-file",
                 km.connection_file, "--duration", str(duration), "--max-calls", str(max_calls),
                 "--out", str(outs[i])],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
        for p in procs:
            assert p.stdout is not None
            line = p.stdout.readline().strip()
            if line != "ready":
                raise RuntimeError(f"an agent failed to attach: {line!r}")
        started = time.monotonic()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        rss: list[tuple[float, float]] = []
        while any(p.poll() is None for p in procs):
            rss.append((time.monotonic() - started, kernel.memory_info().rss / 2**20))
            time.sleep(0.25)
            if time.monotonic() - started > duration + 120:
                raise RuntimeError("agents did not stop in time")
        wall = time.monotonic() - started
        for p in procs:
            if p.returncode != 0:
                raise RuntimeError(f"an agent exited with {p.returncode}")
        reports = [json.loads(o.read_text()) for o in outs]
        final = (root / "shared.txt").read_text()
        kc.stop_channels()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
        km.shutdown_kernel(now=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return _summarise(reports, _shared_text(), final, rss, wall, duration, agents, quiet)


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def _chain(initial: str, final: str, applied: list[dict[str, Any]]) -> tuple[bool, int]:
    """Whether the applied edits lead, one after another, from ``initial`` to ``final``; and
    how many were on that chain."""
    by_before = {e["before"]: e for e in applied}
    if len(by_before) != len(applied):
        return False, 0
    text, steps = initial, 0
    while text in by_before and steps <= len(applied):
        text = by_before[text]["after"]
        steps += 1
    return text == final and steps == len(applied), steps


def _summarise(reports: list[dict[str, Any]], initial: str, final: str,
               rss: list[tuple[float, float]], wall: float, duration: float, agents: int,
               quiet: bool) -> dict[str, Any]:
    from kli.tools.file.anchors import line_hash

    applied = [e for r in reports for e in r["applied"]]
    refused = [t for r in reports for t in r["refused"]]
    final_lines = set(final.split("\n"))
    stale_applied = [e["token"] for e in applied
                     if line_hash(e["before"].split("\n")[e["line"] - 1]) != e["hh"]]
    leaked = [t for t in refused if t in final_lines]
    chained, steps = _chain(initial, final, applied)
    warm = [m for t, m in rss if t >= WARMUP_FRACTION * duration] or [m for _, m in rss]
    rss_warm, rss_end = warm[0], warm[-1]
    rss_peak = max(m for _, m in rss)
    all_lat = [x for r in reports for v in r["latencies"].values() for x in v]
    per_op = {name: [x for r in reports for x in r["latencies"][name]] for name, _ in OPS}
    calls = sum(r["calls"] for r in reports)
    result = {
        "agents": agents, "duration_s": round(wall, 1), "calls": calls,
        "calls_per_s": round(calls / wall, 1),
        "median_ms": round(statistics.median(all_lat) * 1000, 2) if all_lat else None,
        "p99_ms": round(_pct(all_lat, 0.99) * 1000, 2) if all_lat else None,
        "per_op": {name: {"n": len(v), "median_ms": round(statistics.median(v) * 1000, 2) if v else None,
                          "p99_ms": round(_pct(v, 0.99) * 1000, 2) if v else None}
                   for name, v in per_op.items()},
        "edits_applied": len(applied), "edits_refused_stale": len(refused),
        "edits_other_errors": sum(len(r["other_errors"]) for r in reports),
        "other_error_samples": [e for r in reports for e in r["other_errors"]][:3],
        "lost": [x for r in reports for x in r["lost"]],
        "mismatched": [x for r in reports for x in r["mismatched"]],
        "stale_but_applied": stale_applied, "refused_but_present": leaked,
        "chain_steps": steps,
        "rss_warm_mib": round(rss_warm, 1), "rss_end_mib": round(rss_end, 1),
        "rss_peak_mib": round(rss_peak, 1),
    }
    checks = {
        "no reply lost": not result["lost"],
        "no reply mismatched": not result["mismatched"],
        "every applied edit's anchor matched the file it changed": not stale_applied,
        "applied edits chain from the initial file to the final one": chained,
        "no refused edit's token in the file": not leaked,
        "stale edits happened and were refused": len(refused) > 0,
        "no other edit errors": result["edits_other_errors"] == 0,
        f"kernel RSS flat after warm-up (+{RSS_TOLERANCE_MIB:g} MiB)":
            rss_end - rss_warm <= RSS_TOLERANCE_MIB,
    }
    result["checks"] = checks
    if not quiet:
        _print_table(result)
    return result


def _print_table(r: dict[str, Any]) -> None:
    print(f"\n{r['agents']} agents, {r['duration_s']} s, {r['calls']} calls, "
          f"{r['calls_per_s']} calls/s (all agents together)\n")
    print("| op | calls | median ms | p99 ms |")
    print("|---|---:|---:|---:|")
    for name, v in r["per_op"].items():
        print(f"| {name} | {v['n']} | {v['median_ms']} | {v['p99_ms']} |")
    print(f"| all | {r['calls']} | {r['median_ms']} | {r['p99_ms']} |")
    print(f"\nedits applied {r['edits_applied']}, refused as stale {r['edits_refused_stale']}, "
          f"other errors {r['edits_other_errors']}; {r['chain_steps']} edits chain initial → final")
    print(f"kernel RSS: {r['rss_warm_mib']} MiB after warm-up, {r['rss_end_mib']} MiB at the end, "
          f"peak {r['rss_peak_mib']} MiB")
    for name, ok in r["checks"].items():
        print(f"  [{'ok' if ok else 'FAIL'}] {name}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--agents", type=int, default=4)
    ap.add_argument("--max-calls", type=int, default=200_000, help="per agent")
    ap.add_argument("--json", help="write the result here")
    ap.add_argument("--agent", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--connection-file", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.agent is not None:
        agent_main(args)
        return
    result = run(args.duration, args.agents, args.max_calls)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    sys.exit(0 if all(result["checks"].values()) else 1)


if __name__ == "__main__":
    main()
