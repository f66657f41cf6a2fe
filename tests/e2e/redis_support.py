"""A private Redis server for outage tests: started on a free port, killed and restarted on that port, or
paused (SIGSTOP) and resumed. The shared Redis of the test run is never touched."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import redis

from tests.ports import free_port

REDIS_SERVER = "redis-server"


class PrivateRedis:
    """One ``redis-server`` with no persistence: a kill loses everything it held, as a crash would."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.starts += 1
        log = (self.directory / f"redis-{self.starts}.log").open("wb")
        args = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.proc = subprocess.Popen(
            [REDIS_SERVER, *args, "--dir", str(self.directory)], stdout=log, stderr=subprocess.STDOUT
        )
        log.close()
        client = redis.Redis(port=self.port, socket_timeout=1)
        deadline = time.monotonic() + 10
        while True:
            try:
                if client.ping():
                    break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        client.close()

    def kill(self) -> None:
        """SIGKILL: every connection is reset and every key is gone."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(5)
        self.proc = None

    def pause(self) -> None:
        """SIGSTOP: the server keeps its sockets (and the kernel accepts new ones) but answers nothing."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGCONT)

    def stop(self) -> None:
        if self.proc is not None:
            os.kill(self.proc.pid, signal.SIGCONT)  # a paused server cannot handle its SIGTERM
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
            self.proc = None
