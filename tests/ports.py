"""A free TCP port on 127.0.0.1: bound by the OS, then released, so nobody listens there until the test
starts something on it (or, left alone, a port where nothing answers).

``HALL_TEST_PORTS=FIRST-LAST`` (e.g. ``18850-18899``) takes the port from that range instead of the OS's
ephemeral ones: the first of the range, from a random start, that can be bound (a shared machine whose users
each have a range of their own)."""

from __future__ import annotations

import os
import random
import socket


def free_port_in(spec: str) -> int:
    """A port of the range `FIRST-LAST` that can be bound now, from a random start (raises if none)."""
    first, _, last = spec.partition("-")
    low, high = int(first), int(last or first)
    ports = list(range(low, high + 1))
    start = random.randrange(len(ports))
    for port in ports[start:] + ports[:start]:
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in HALL_TEST_PORTS={spec}")


def free_port() -> int:
    spec = os.environ.get("HALL_TEST_PORTS", "").strip()
    if spec:
        return free_port_in(spec)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
