"""A free TCP port on loopback, for the servers tests start.

``bind(("127.0.0.1", 0))`` hands out a port from the kernel's ephemeral range, the range every
outgoing connection (and every other worker's ``bind(0)``) draws from too: between the test
closing its probe socket and the server binding the port, another process could be handed the
same one, and the server then fails to start. So the port is drawn at random below that range,
never twice by one process, and checked free.
"""

from __future__ import annotations

import random
import socket

_handed: set[int] = set()
_rng = random.SystemRandom()


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as fh:
            return int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def free_port() -> int:
    high = _ephemeral_low() - 1
    low = max(1024, high - 12000)
    for _ in range(200):
        port = _rng.randint(low, high)
        if port in _handed:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed.add(port)
        return port
    with socket.socket() as s:  # a crowded range: the kernel's choice, as before
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
