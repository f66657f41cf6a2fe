"""A thermal printer on the network, faked: a real TCP server on a thread that keeps what each connection
wrote."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class FakePrinter:
    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(10)
        self.port = int(self.server.getsockname()[1])
        self.jobs: list[bytes] = []
        self.done = threading.Semaphore(0)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.stopping = False

    @property
    def address(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while not self.stopping:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            if self.stopping:
                conn.close()
                return
            with conn:
                conn.settimeout(10)
                chunks = []
                while chunk := conn.recv(65536):
                    chunks.append(chunk)
            self.jobs.append(b"".join(chunks))
            self.done.release()

    def job(self, timeout: float = 10) -> bytes:
        """The next whole job (the bytes of one connection, up to its close)."""
        assert self.done.acquire(timeout=timeout), "the printer received nothing"
        return self.jobs[-1]


@contextmanager
def fake_printer() -> Iterator[FakePrinter]:
    printer = FakePrinter()
    printer.thread.start()
    try:
        yield printer
    finally:
        printer.stopping = True
        socket.create_connection(("127.0.0.1", printer.port), timeout=5).close()  # wakes accept()
        printer.thread.join(timeout=10)
        printer.server.close()
