"""Waiting for what a test expects to become true (a browser's DOM, a file, a kernel's state)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_until(check: Callable[[], Any], what: str, timeout: float = 20.0,
               every: float = 0.05) -> None:
    """Poll ``check`` every ``every`` seconds until it is true; AssertionError naming ``what``
    after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(every)
