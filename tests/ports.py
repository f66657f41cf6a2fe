"""A free TCP port on 127.0.0.1: bound by the OS, then released, so nobody listens there until the test
starts something on it (or, left alone, a port where nothing answers)."""

from __future__ import annotations

import socket


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
