"""What the network benches share: simulated installations' HTTP connections, the scratch database, the
processes' CPU, ports, percentiles and the web processes' timing of the paths they measure.

Not a test and not the product: imported by the scripts beside it (the network benches, the screens' and
the terminals' benches, the electronic sales bench), which run with this directory on ``sys.path``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


class Http:
    """One client's keep-alive HTTP/1.1 connection to a web process (reopened when the server closes it).
    `headers`: sent with every request (a link credential's Authorization, a session cookie)."""

    def __init__(self, port: int, headers: dict[str, str] | None = None) -> None:
        self.port = port
        self.headers = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.lock = asyncio.Lock()

    async def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        async with self.lock:
            for attempt in range(3):
                try:
                    return await self._once(method, path, body)
                except (OSError, asyncio.IncompleteReadError, ValueError):
                    self.close()
                    if attempt == 2:
                        raise
                    await asyncio.sleep(0.2)
        raise AssertionError

    async def _once(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self.reader is not None
        data = body if isinstance(body, bytes) else b""
        if body is not None and not isinstance(body, bytes):
            data = json.dumps(body, separators=(",", ":")).encode()
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{self.headers}"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
        ).encode()
        self.writer.write(head + data)
        await self.writer.drain()
        status_line = await self.reader.readline()
        if not status_line:
            raise OSError("closed")
        status = int(status_line.split()[1])
        length, keep, is_json = 0, True, False
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _sep, value = line.decode("latin-1").partition(":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == "content-length":
                length = int(value)
            elif name == "connection" and value == "close":
                keep = False
            elif name == "content-type":
                is_json = value.startswith("application/json")
        payload = await self.reader.readexactly(length) if length else b""
        if not keep:
            self.close()
        if is_json and payload:
            return status, json.loads(payload)
        return status, payload

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


# --- the scratch database and the processes -----------------------------------------------------------------


def ensure_database(url: str, *, fresh: bool = False) -> None:
    """The database of `url` exists (dropped and made again with `fresh`)."""
    import psycopg

    name = url.rsplit("/", 1)[1].split("?")[0]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if fresh:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of the processes (and their reaped children) so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
    return total / ticks


def children(pid: int) -> list[int]:
    """`pid` and its descendants."""
    found = [pid]
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                found += [int(c) for c in (task / "children").read_text().split()]
    return found[:1] + [p for c in found[1:] for p in children(c)]


def postgres_cpu(dbname: str) -> float:
    """CPU of the PostgreSQL backends serving `dbname` now (the pooled ones live for the whole run)."""
    import psycopg

    admin = os.environ["DATABASE_URL"].rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        pids = [r[0] for r in conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", [dbname])]
    return cpu_seconds(pids)


_TAKEN: set[int] = set()


def free_port() -> int:
    """A free port on 127.0.0.1: the OS's choice, or the first free one of HALL_BENCH_PORTS ("23000-23999")
    when it is set (a shared machine where each bench keeps to its own range)."""
    wanted = os.environ.get("HALL_BENCH_PORTS", "")
    if not wanted:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return int(s.getsockname()[1])
    low, high = (int(part) for part in wanted.split("-", 1))
    for port in range(low, high + 1):
        if port in _TAKEN:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _TAKEN.add(port)  # handed out: not again in this process
        return port
    raise RuntimeError(f"no free port in HALL_BENCH_PORTS={wanted}")


def wait_listening(port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"nothing listens on port {port}")


_HELD: list[Any] = []  # the bench lock's open file: closing it (a local collected) would release the lock


def hold_lock(path: str) -> None:
    """Wait for the machine's bench lock, held until this process exits (one bench measures at a time)."""
    import fcntl

    waited = time.perf_counter()
    held = open(path, "a")  # noqa: SIM115 (held until the process exits)
    fcntl.flock(held, fcntl.LOCK_EX)
    _HELD.append(held)  # kept: before, the file was closed on return and the lock released at once
    print(f"holding {path} (waited {time.perf_counter() - waited:.0f} s for it)", flush=True)


# --- figures ------------------------------------------------------------------------------------------------


def percentile(ordered: list[float], q: float) -> float:
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(values: list[float]) -> dict[str, float]:
    """n, p50, p99 and max of durations in seconds, in milliseconds."""
    ordered = sorted(values)
    return {
        "n": len(ordered),
        "p50": percentile(ordered, 0.5) * 1000,
        "p99": percentile(ordered, 0.99) * 1000,
        "max": (ordered[-1] if ordered else float("nan")) * 1000,
    }


def line(name: str, figures: dict[str, float], extra: str = "") -> None:
    print(
        f"{name:<26} n={figures['n']:<6} p50={figures['p50']:8.1f} ms  p99={figures['p99']:8.1f} ms  "
        f"max={figures['max']:8.1f} ms{extra}",
        flush=True,
    )


class Spans:
    """Inside a web process: functions wrapped so each call's time is kept under a label, written as JSON
    to a file on SIGUSR1 (the bench reads them at its end: where the server's time went)."""

    def __init__(self) -> None:
        self.spans: dict[str, list[float]] = {}
        self.guard = threading.Lock()

    def time(self, owner: Any, name: str, label: str) -> None:
        inner: Callable[..., Any] = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                took = time.perf_counter() - t0
                with self.guard:
                    self.spans.setdefault(label, []).append(took)

        setattr(owner, name, wrapper)

    def dump_on_signal(self, out: str, profile: CpuProfile | None = None) -> None:
        import signal

        def dump(*_: Any) -> None:
            with self.guard:
                Path(out).write_text(json.dumps(self.spans))
            if profile is not None:
                profile.dump(out)

        signal.signal(signal.SIGUSR1, dump)


class CpuProfile:
    """cProfile on the threads' CPU time (time.thread_time) of the calls of methods wrapped by `profile`,
    all calls summed in one profile per label; dumped as pstats files (`<out>.<label>.pstats`) on SIGUSR1
    beside the spans. For finding where a web process's CPU goes (BENCH_PROFILE=1): it slows the calls."""

    def __init__(self) -> None:
        import pstats

        self.guard = threading.Lock()
        self.stats: dict[str, pstats.Stats] = {}

    def profile(self, owner: Any, name: str, label: str) -> None:
        import cProfile
        import pstats

        inner: Callable[..., Any] = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            prof = cProfile.Profile(time.thread_time)
            prof.enable()
            try:
                return inner(*args, **kwargs)
            finally:
                prof.disable()
                with self.guard:
                    if label in self.stats:
                        self.stats[label].add(prof)
                    else:
                        self.stats[label] = pstats.Stats(prof)

        setattr(owner, name, wrapper)

    def dump(self, out: str) -> None:
        with self.guard:
            for label, stats in self.stats.items():
                stats.dump_stats(f"{out}.{label}.pstats")


def print_timings(paths: list[Path], title: str) -> None:
    merged: dict[str, list[float]] = {}
    for path in paths:
        if path.exists():
            for label, values in json.loads(path.read_text()).items():
                merged.setdefault(label, []).extend(values)
    print(f"\n{title} (inside the web processes, whole run, ms):")
    for label, values in sorted(merged.items(), key=lambda kv: -sum(kv[1])):
        f = ms(values)
        print(
            f"  {label:<44} n={f['n']:<7} total={sum(values):7.1f} s  "
            f"p50={f['p50']:7.2f}  p99={f['p99']:7.2f}"
        )
