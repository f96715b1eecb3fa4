"""The native first pass of ``search`` and ``ws_grep``: per-file matching-line counts, and the
verdicts and listing that spare the caller its own walk and sniffs.

Contract::

    locate(jail) -> (path of kli-scan or rg, why any before it did not serve) | (None, why not)
    start(jail, translation, top, max_bytes=..., name_glob=...) -> Running | str (why not)
    Running.finish(deadline) -> Counts | str (why not)      (asked again: the same answer)
    listing_for(running, jail, pattern) -> Listing | None   (kli-scan's, for walk(listed=))
    sniff(real, cap) -> "binary" | "large" | None

Two programs serve, the first one there: **kli-scan** (``native/kli-scan``, built by
``native/build.sh`` from Debian's packaged crates of ripgrep — ``ignore``, ``grep-searcher``,
``grep-regex`` — and installed with this package as ``native/kli-scan``) and **rg** (the
``ripgrep`` wheel's binary). Both read the pattern as translated by ``rgpattern`` (the
``regex`` crate's syntax) over the bytes as they are.

kli-scan walks ``top`` once, in parallel, and writes a record per regular file and symlink
(``_records``): the file's count of matching lines when it read it whole as text, "binary"
when a NUL lies before ``BINARY_SNIFF`` (exactly search's own sniff), "large" over
``max_bytes``, a file left to the caller (a NUL further on, unreadable), a symlink (never
followed), and at the end how many entries it met. Names are their exact bytes (NUL-separated
records): nothing in a name can forge a record, so the verdicts are always used
(``Counts.exact_names``), and the listing stands in for the caller's walk where that walk
would visit the folder whole (``listing_for``, ``walk.walk(listed=)``: the jail's rules —
globs, temporary files, symlinks inside the root only — are applied to it there).

rg runs ``rg --count --include-zero`` over the folder ``top`` (root-relative, "" for the
root) and returns, for every file rg read to its end as text, its count of matching
lines, keyed by the root-relative path. A file rg does not list — one holding a NUL byte
anywhere, one over ``max_bytes``, a symlink (rg follows none), one it could not read — is
for the caller to search as before; so is every file whose lines the caller shows. The
caller keeps its own walk (the jail's rules, the glob, the bounds) and only looks rg's counts
up for the files that walk gave.

``Counts.verdicts`` from rg say why it left a file out, where its ``--debug`` log says so: "binary"
(rg stopped at a NUL byte before offset ``BINARY_SNIFF``: exactly the files search's own sniff
calls binary; a NUL further on is no verdict, the caller reads the file as before) or "large"
(over ``max_bytes``). rg 14 reports binary files in no other output short of ``--json``; the
log costs rg one line per such file. The log is line-based and names files as they are, so a
file name holding a newline could forge a line: the caller uses the verdicts only when its
walk saw every name rg saw and none held a newline (``WalkResult.newline_names`` False);
names rg prints lossily (not UTF-8: U+FFFD) are left out. Without a verdict the caller sniffs.

The rg binary is the one the ``ripgrep`` wheel installed into this interpreter's own
environment (its ``RECORD``, found in this interpreter's site-packages, never through
``sys.path``, which holds the workspace root in a kernel, nor ``PATH``); kli-scan is the one
beside this module. Either one that resolves under the workspace root is refused, since an
agent can write there — unless it lies in the kernel's own Python installation there (a
project's ``.venv/``), which is control state no tool writes (``Jail.interpreter_control``),
and whose modules the tools import too. Both run with an empty environment; rg with
``--no-config`` (no ``RIPGREP_CONFIG_PATH``), ``-uu`` (no ignore file of any kind is read:
``.gitignore``, ``.ignore``, ``.rgignore``, the global git excludes — today's search reads none
either, so the answers stay the same) and ``--encoding none`` (no BOM sniffing: a UTF-16 file
holds NULs and stays binary, as for search); kli-scan reads no ignore file and no encoding by
construction.
"""

from __future__ import annotations

import functools
import os
import re
import select
import stat
import subprocess
import sysconfig
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from kli.tools.core.jail import Jail
from kli.tools.core.textfile import BINARY_SNIFF, OPEN_FLAGS
from kli.tools.file import walk as walk_mod
from kli.tools.file.rgpattern import Translation
from kli.tools.file.walk import VCS_DIRS, Listing

# The version-control folders the walk skips (kli.tools.file.walk.VCS_DIRS): rg skips them
# too, so it does not read what the walk never gives.
_VCS_GLOBS = tuple(f"!{name}/" for name in sorted(VCS_DIRS))
# Set in the environment (to anything but "" or "0"), search and ws_grep run without rg.
OFF_ENV = "KLI_SEARCH_NO_RG"
# Set to "rg", search and ws_grep take rg even where kli-scan was built.
ENGINE_ENV = "KLI_SEARCH_ENGINE"
SCAN = "kli-scan"
_SIZE_LIMIT = "256M"  # rg's compiled-regex limits: the explicit Unicode sets are large


@dataclass(frozen=True)
class Counts:
    """rg's answer: ``lines[rel]`` matching lines of each text file it read whole."""

    lines: dict[str, int]
    seconds: float
    verdicts: dict[str, str]  # rel -> "binary" | "large", from rg's log (module docstring)
    # The verdicts name every file left out as binary or large, by its exact bytes (kli-scan's
    # records): nothing can forge them, the caller needs no check of the walk's names.
    exact_names: bool = False
    # kli-scan's listing of the folder (every file and symlink whose name the glob admits):
    # it stands in for the caller's walk (``walk.walk(listed=)``). None from rg.
    listing: Listing | None = None
    program: str = "rg"  # which first pass answered: "kli-scan" or "rg"
    note: str = ""  # why kli-scan did not serve, when rg answered


@functools.lru_cache(maxsize=1)
def _installed() -> tuple[str | None, str]:
    where = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    dists = list(metadata.distributions(name="ripgrep", path=sorted(where)))
    if not dists:
        return None, "the ripgrep package is not installed in this environment"
    dist = dists[0]
    for entry in dist.files or ():
        if entry.name in ("rg", "rg.exe") and entry.parent.name in ("bin", "Scripts"):
            path = os.path.realpath(str(dist.locate_file(entry)))
            try:
                st = os.stat(path)
            except OSError:
                return None, f"the ripgrep package's rg ({path}) is missing"
            if not stat.S_ISREG(st.st_mode) or not os.access(path, os.X_OK):
                return None, f"the ripgrep package's rg ({path}) is not an executable file"
            return path, ""
    return None, "the ripgrep package lists no rg binary"


@functools.lru_cache(maxsize=1)
def _scan_built() -> tuple[str | None, str]:
    path = os.path.join(os.path.dirname(os.path.realpath(__file__)), "native", SCAN)
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        return None, (f"{SCAN} was not built with this installation (it needs cargo and "
                      "Debian's ripgrep crates: native/build.sh)")
    return path, ""


def locate(jail: Jail) -> tuple[str | None, str]:
    """The first pass to run for ``jail`` and why any before it did not serve: kli-scan
    (built into this package, ``native/``), else rg (the ``ripgrep`` wheel), else (None, why
    not). ``OFF_ENV`` set to anything but ""
    or "0" switches both off (the Python-only path: benchmarks, a suspected difference);
    ``ENGINE_ENV`` set to "rg" passes kli-scan by (the rg path's tests, benchmarks)."""
    if os.environ.get(OFF_ENV, "") not in ("", "0"):
        return None, f"rg switched off ({OFF_ENV} is set)"
    whys = []
    for find in (_scan_built, _installed):
        if find is _scan_built and os.environ.get(ENGINE_ENV, "") == "rg":
            whys.append(f"{SCAN} passed by ({ENGINE_ENV}=rg)")
            continue
        path, why = find()
        if path is None:
            whys.append(why)
            continue
        inside = path == jail.root or path.startswith(jail.root.rstrip("/") + "/")
        if inside and jail.interpreter_control(path) is None:
            whys.append(f"{os.path.basename(path)} lies under the workspace root, where tools "
                        "can write; not used")
            continue
        return path, "; ".join(whys)
    return None, "; ".join(whys)


class Running:
    """An rg started by ``start``; ``finish`` waits for its counts."""

    def __init__(self, proc: subprocess.Popen[bytes], out: Any, log: Any, top: str,
                 started: float, max_bytes: int, scan: bool = False, note: str = ""):
        self.proc, self.out, self.log, self.top = proc, out, log, top
        self.started, self.max_bytes = started, max_bytes
        self.scan = scan  # kli-scan's records, not rg's counts and log
        self.name = SCAN if scan else "rg"
        self._result: Counts | str | None = None
        self.note = note  # why kli-scan did not serve (``locate``), when this is rg

    def finish(self, deadline: float) -> Counts | str:
        """rg's counts, or why there are none (its error, out of time: it is then killed).
        Asked again, the same answer."""
        if self._result is None:
            self._result = self._finish(deadline)
        return self._result

    def listing(self, deadline: float) -> Listing | None:
        """kli-scan's listing of the folder (waiting for it), or None (rg, or no answer)."""
        got = self.finish(deadline) if self.scan else None
        return got.listing if isinstance(got, Counts) else None

    def _finish(self, deadline: float) -> Counts | str:
        try:
            code = _wait(self.proc, deadline)
            if code is None:
                self.cancel()
                return "rg ran out of the search's time"
            self.log.seek(0)
            # The log is read a line at a time: on a tree of 420,000 files it is ~28 MB,
            # which read whole (bytes, text, lines) would triple search's peak memory.
            log = (raw.decode("utf-8", "surrogateescape").rstrip("\n") for raw in self.log)
            if code not in (0, 1) or (self.scan and code != 0):  # rg's 1: no line matched
                err = [x for x in log if x.strip() and not x.startswith(_DEBUG)]
                return f"{self.name} refused the pattern ({err[-1] if err else f'exit {code}'})"
            self.out.seek(0)
            if self.scan:
                lines, verdicts, listing = _records(self.out.read(), self.top)
                return Counts(lines, time.monotonic() - self.started, verdicts,
                              exact_names=True, listing=listing, program=SCAN)
            lines = _parse(self.out.read(), self.top)  # the bytes are dropped once parsed
            verdicts = _verdicts(log, self.top, self.max_bytes)
            return Counts(lines, time.monotonic() - self.started, verdicts, note=self.note)
        finally:
            self.out.close()
            self.log.close()

    def done(self) -> bool:
        """Whether rg has exited (``finish`` would not wait)."""
        return self.proc.poll() is not None

    def cancel(self) -> None:
        """Stop rg (the search no longer needs it)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.out.close()
        self.log.close()


def listing_for(running: Running | None, jail: Jail, pattern: str,
                started: float) -> Listing | None:
    """The listing that stands in for the walk of ``pattern`` (``walk.walk(listed=)``): kli-scan's,
    waited for until the walk's time bound (begun at ``started``) ends, when it was started over
    the folder that walk visits whole; else None (the caller walks, rg or not running
    meanwhile)."""
    if running is None or not running.scan:
        return None
    if walk_mod.whole_folder(jail, pattern) != running.top:
        return None
    return running.listing(started + walk_mod.MAX_SECONDS)


def _wait(proc: subprocess.Popen[bytes], deadline: float) -> int | None:
    """rg's exit status, or None at the deadline. Waits on a pidfd where there is one:
    ``Popen.wait(timeout=)`` polls with sleeps of up to 50 ms, which a fast search would feel."""
    left = max(deadline - time.monotonic(), 0.05)
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is not None:
        try:
            fd = pidfd_open(proc.pid)
        except OSError:  # already reaped, or no pidfd in this kernel
            pass
        else:
            try:
                ready, _, _ = select.select([fd], [], [], left)
            finally:
                os.close(fd)
            return proc.wait() if ready else None
    try:
        return proc.wait(timeout=left)
    except subprocess.TimeoutExpired:
        return None


def start(
    jail: Jail,
    translation: Translation,
    top: str,
    *,
    max_bytes: int,
    name_glob: str | None = None,
) -> Running | str:
    """Start rg (see the module docstring) so the caller can walk meanwhile; a string says why
    rg cannot serve (not installed, under the root, no start)."""
    rg, why = locate(jail)
    if rg is None:
        return why
    scan = os.path.basename(rg) == SCAN
    if scan:
        # Past the walk's entry bound the caller walks itself (and stops there): no need to
        # read the rest of a huge tree first.
        args = [rg, "--max-filesize", str(max_bytes), "--sniff", str(BINARY_SNIFF),
                "--max-entries", str(walk_mod.MAX_ENTRIES)]
        for name in sorted(VCS_DIRS):
            args += ["--skip-dir", name]
        if name_glob:
            args += ["--name", name_glob]
    else:
        args = [
            rg, "--no-config", "-uu", "--encoding", "none", "--count", "--include-zero",
            "--null", "--no-messages", "--debug", "--max-filesize", str(max_bytes),
            "--regex-size-limit", _SIZE_LIMIT, "--dfa-size-limit", _SIZE_LIMIT,
        ]
        for glob in _VCS_GLOBS:
            args += ["--glob", glob]
        if name_glob:
            args += ["--glob", name_glob]
    args += ["--regexp", translation.pattern, "--", top or "."]
    # The output and the log go to unnamed temporary files, not pipes: rg must never stall on
    # a full pipe while the caller walks.
    out = tempfile.TemporaryFile()
    log = tempfile.TemporaryFile()
    try:
        proc = subprocess.Popen(
            args, cwd=jail.root, env={}, stdin=subprocess.DEVNULL, stdout=out,
            stderr=log, close_fds=True,
        )
    except OSError as exc:
        out.close()
        log.close()
        return f"rg could not start ({exc})"
    return Running(proc, out, log, top, time.monotonic(), max_bytes, scan, why)


_RECORD = re.compile(r"([^\0]*)\0([0-9]+)\n")
_RECORD_DOT = re.compile(r"\./([^\0]*)\0([0-9]+)\n")


def _parse(out: bytes, top: str) -> dict[str, int]:
    """``PATH\\0COUNT\\n`` records (a path may hold a newline, never a NUL), paths decoded as
    ``os.fsdecode`` does; rg given "." prints "./PATH"."""
    text = out.decode("utf-8", "surrogateescape")
    del out
    lines: dict[str, int] = {}
    for m in (_RECORD if top else _RECORD_DOT).finditer(text):
        lines[m.group(1)] = int(m.group(2))
    return lines


def _records(out: bytes, top: str
             ) -> tuple[dict[str, int], dict[str, str], Listing | None]:
    """kli-scan's ``KIND\\0PATH\\0NUMBER\\0`` records (native/kli-scan/src/main.rs): C (text
    read whole: NUMBER matching lines), B (a NUL at offset NUMBER, before the sniff's end),
    L (NUMBER bytes, over the cap), U (a file it left to the caller), S (a symlink), V (last:
    NUMBER entries met). Paths are the names' bytes, decoded as ``os.fsdecode``. The listing
    is None when the V record is missing (kli-scan did not finish)."""
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    del out
    lines: dict[str, int] = {}
    verdicts: dict[str, str] = {}
    files: list[str] = []
    symlinks: list[str] = []
    visited = -1
    kinds, paths, numbers = fields[0:-1:3], fields[1::3], fields[2::3]
    for kind, path, number in zip(kinds, paths, numbers, strict=False):
        if kind == "C":
            lines[path] = int(number)
        elif kind == "B":
            verdicts[path] = "binary"
        elif kind == "L":
            verdicts[path] = "large"
        elif kind == "S":
            symlinks.append(path)
            continue
        elif kind == "V":
            visited = int(number)
            continue
        files.append(path)
    listing = None if visited < 0 else Listing(top, files, symlinks, visited)
    return lines, verdicts, listing


_DEBUG = "rg: DEBUG|"
# rg 14.1's --debug lines for a file it stops reading at a NUL byte (grep_printer's summary
# printer: --count) and for one it skips by --max-filesize (the ignore crate's walk):
#   rg: DEBUG|grep_printer::summary|SRC:LINE: ignoring PATH: found binary data at offset N
#   rg: DEBUG|ignore::walk|SRC:LINE: ignoring PATH: N bytes
# rg's own suffix is the last one on the line, whatever PATH holds. Plain string operations
# per line: a regex over the log cost ~5 µs a line (16,800 lines on the benchmark tree).
_BINARY_HEAD = _DEBUG + "grep_printer::summary|"
_BINARY_TAIL = ": found binary data at offset "
_LARGE_HEAD = _DEBUG + "ignore::walk|"
_IGNORING = ": ignoring "


def _verdicts(log: Iterable[str], top: str, max_bytes: int) -> dict[str, str]:
    """rel -> "binary" | "large" from the lines of rg's ``--debug`` log (module docstring)."""
    cut = len(_IGNORING) + (0 if top else 2)  # rg given "." prints "./PATH"
    got: dict[str, str] = {}
    for line in log:
        if line.startswith(_BINARY_HEAD):
            head, _, offset = line.rpartition(_BINARY_TAIL)
            if not offset.isdigit() or int(offset) >= BINARY_SNIFF:
                continue
            verdict = "binary"
        elif line.startswith(_LARGE_HEAD) and line.endswith(" bytes"):
            head, _, size = line[:-6].rpartition(": ")
            if not size.isdigit() or int(size) <= max_bytes:
                continue
            verdict = "large"
        else:
            continue
        at = head.find(_IGNORING)  # the first: rg's SRC:LINE holds none
        if at < 0:
            continue
        path = head[at + cut:]
        if "\ufffd" not in path:  # a name rg printed lossily (not UTF-8) gets no verdict
            got[path] = verdict
    return got


# Names that are nearly always binary: what ``sniff_meanwhile`` looks at while rg runs. Only an
# order of work: every verdict is the file's own bytes, whatever its name.
LIKELY_BINARY = frozenset({
    ".pyc", ".pyo", ".so", ".pyd", ".dll", ".dylib", ".a", ".o", ".obj", ".exe", ".bin",
    ".dat", ".gz", ".bz2", ".xz", ".zst", ".zip", ".whl", ".jar", ".tar", ".7z", ".png",
    ".jpg", ".jpeg", ".gif", ".ico", ".webp", ".avif", ".bmp", ".tif", ".tiff", ".pdf",
    ".woff", ".woff2", ".ttf", ".otf", ".eot", ".npy", ".npz", ".pkl", ".pickle", ".pt",
    ".pth", ".onnx", ".h5", ".hdf5", ".parquet", ".feather", ".arrow", ".db", ".sqlite",
    ".sqlite3", ".mo", ".class", ".wasm", ".mp3", ".mp4", ".wav", ".ogg", ".flac",
})


def sniff_meanwhile(running: Running, root: str, rels: list[str], cap: int,
                    deadline: float) -> dict[str, str | None]:
    """``sniff`` the files of ``rels`` whose name is in ``LIKELY_BINARY`` while ``running``
    has not finished (nor the deadline passed), keyed by rel: the files rg will not list are
    mostly those, and each needs this look. Done here, it fills time the caller would spend
    waiting for rg (and a second core rg's tail leaves idle) instead of following it."""
    got: dict[str, str | None] = {}
    root = root.rstrip("/") + "/"
    clock = time.monotonic
    likely = _LIKELY_BINARY_NAME.search
    for index, rel in enumerate(rels):
        if index & 63 == 0 and (running.done() or clock() > deadline):
            break
        if likely(rel) is not None:
            got[rel] = sniff(root + rel, cap)
    return got


# One C-speed test per name (the loop above meets every file of the tree).
_LIKELY_BINARY_NAME = re.compile(
    "(?:" + "|".join(re.escape(s) for s in sorted(LIKELY_BINARY)) + r")\Z", re.IGNORECASE
)


def sniff(real: str, cap: int) -> str | None:
    """What a look at the file's size and first bytes settles, without the full guarded open:
    ``"large"`` (over ``cap``), ``"binary"`` (a NUL in its first ``BINARY_SNIFF`` bytes), or
    None (search it the usual way). A symlink is not opened here (``O_NOFOLLOW``), a FIFO
    swapped in cannot block (``O_NONBLOCK``) and is let go after the ``fstat``, and nothing
    read is shown: a file whose lines are shown always goes through the guarded open, jail
    check included."""
    try:
        fd = os.open(real, OPEN_FLAGS | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        if st.st_size > cap:
            return "large"
        return "binary" if b"\0" in os.read(fd, BINARY_SNIFF) else None
    except OSError:
        return None
    finally:
        os.close(fd)
