"""A cheap look at a file the first pass did not settle: is it binary, is it over the cap.

Contract::

    sniff(real, cap) -> "binary" | "large" | None
    sniff_meanwhile(running, root, rels, cap, deadline) -> {rel: sniff's answer}
"""

from __future__ import annotations

import os
import re
import stat
import time

from kli.tools.core.textfile import BINARY_SNIFF, OPEN_FLAGS
from kli.tools.file.firstpass.run import Running

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
# One C-speed test per name (sniff_meanwhile's loop meets every file of the tree).
_LIKELY_BINARY_NAME = re.compile(
    "(?:" + "|".join(re.escape(s) for s in sorted(LIKELY_BINARY)) + r")\Z", re.IGNORECASE
)


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
