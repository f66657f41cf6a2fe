"""The SAS bridge's end-to-end rig: a simulated SAS machine (machines.sasbridge.egm) and the bridge
(machines.sasbridge.bridge) as real processes joined by a pty, the bridge talking to the live server
(tests/e2e/conftest.py's uvicorn) through a TCP relay the test can cut and restore (the hall link).

Every call here blocks (pipes, HTTP to the bridge's /status): the async tests call them through
`asyncio.to_thread`, never on the event loop the live server's broadcasts need.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


class Egm:
    """The simulated machine: a child process on a pty of its own, driven by JSON lines."""

    def __init__(self, *, address: int = 1, denom_cents: int = 20, seed: int = 31) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "machines.sasbridge.egm",
                "--address",
                str(address),
                "--denom-cents",
                str(denom_cents),
                "--seed",
                str(seed),
            ],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.pty = json.loads(self.proc.stdout.readline())["pty"]
        self.lock = threading.Lock()

    def cmd(self, cmd: str, **args: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        with self.lock:
            self.proc.stdin.write(json.dumps({"cmd": cmd, **args}) + "\n")
            self.proc.stdin.flush()
            reply: dict[str, Any] = json.loads(self.proc.stdout.readline())
        return reply

    def status(self) -> dict[str, Any]:
        return self.cmd("status")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.cmd("quit")
        stop(self.proc)


def stop(proc: subprocess.Popen[Any], sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


class Relay:
    """A TCP relay on 127.0.0.1 between the bridge and the live server: `cut()` drops every connection and
    refuses new ones (the hall unreachable) until `restore()`."""

    def __init__(self, target_port: int) -> None:
        self.target = target_port
        self.port = free_port()
        self.cut_now = threading.Event()
        self.closing = threading.Event()
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        listener = None
        while not self.closing.is_set():
            if self.cut_now.is_set():
                if listener is not None:
                    listener.close()
                    listener = None
                time.sleep(0.05)
                continue
            if listener is None:
                listener = socket.socket()
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                listener.bind(("127.0.0.1", self.port))
                listener.listen(8)
                listener.settimeout(0.05)
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target))
            with self.lock:
                self.conns += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()
        if listener is not None:
            listener.close()

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        sel = selectors.DefaultSelector()
        sel.register(a, selectors.EVENT_READ, b)
        sel.register(b, selectors.EVENT_READ, a)
        try:
            while not self.cut_now.is_set() and not self.closing.is_set():
                for key, _ in sel.select(0.05):
                    data = key.fileobj.recv(65536)  # type: ignore[union-attr]
                    if not data:
                        return
                    key.data.sendall(data)
        except OSError:
            return
        finally:
            sel.close()
            for s in (a, b):
                with contextlib.suppress(OSError):
                    s.close()

    def cut(self) -> None:
        self.cut_now.set()
        with self.lock:
            for s in self.conns:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
            self.conns.clear()

    def restore(self) -> None:
        self.cut_now.clear()

    def close(self) -> None:
        self.closing.set()
        self.cut()
        self.thread.join(5)


class Bridge:
    """The bridge process; `restart` keeps its journal (the same file), as a board's reboot would. Its device
    token is in a file beside the journal, readable by its owner only (``--token-file``), as installed."""

    def __init__(
        self,
        *,
        pty: str,
        hall_port: int,
        asset: str,
        token: str,
        venue: int,
        journal: Path,
        software_version: str,
        log: Path,
        extra: tuple[str, ...] = (),
    ) -> None:
        self.metrics_port = free_port()
        token_file = journal.with_name(journal.name + ".token")
        descriptor = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(token + "\n")
        self.args = [
            sys.executable,
            "-m",
            "machines.sasbridge.bridge",
            "--line",
            f"framed:{pty}",
            "--address",
            "1",
            "--denom-cents",
            "20",
            "--group",
            "1",
            "--hall",
            f"ws://127.0.0.1:{hall_port}",
            "--asset",
            asset,
            "--token-file",
            str(token_file),
            "--venue",
            str(venue),
            "--software-version",
            software_version,
            "--journal",
            str(journal),
            "--metrics-port",
            str(self.metrics_port),
            "--poll-every",
            "0.01",
            "--response-timeout",
            "0.3",
            "--meters-every",
            "1.0",
            *extra,
        ]
        self.log_path = log
        self.proc = self._start()

    def _start(self) -> subprocess.Popen[bytes]:
        log = self.log_path.open("ab")
        return subprocess.Popen(self.args, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)

    def restart(self, sig: int = signal.SIGKILL, down: float = 1.5) -> None:
        """Killed, and started again after `down` seconds (a reboot: the machine sees its link down)."""
        stop(self.proc, sig)
        time.sleep(down)
        self.proc = self._start()

    def status(self) -> dict[str, Any]:
        url = f"http://127.0.0.1:{self.metrics_port}/status"
        with urllib.request.urlopen(url, timeout=5) as response:
            data: dict[str, Any] = json.loads(response.read())
        return data

    def counter(self, name: str) -> int:
        return int(self.status()["counters"].get(name, 0))

    def metrics(self) -> str:
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as response:
            return str(response.read().decode())

    def close(self) -> None:
        stop(self.proc)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]


def wait_for(
    condition: Callable[[], Any],
    timeout: float,
    what: str,
    every: float = 0.1,
    detail: Callable[[], str] = lambda: "",
) -> Any:
    """Blocking poll of `condition` (called through asyncio.to_thread); its truthy value."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        try:
            value = condition()
            if value:
                return value
        except (OSError, ValueError) as exc:  # the bridge's /status not up yet
            last_error = exc
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {timeout:g} s waiting for {what} ({last_error}). {detail()}"
            )
        time.sleep(every)


def environ_ok() -> bool:
    return os.path.exists("/dev/ptmx")
