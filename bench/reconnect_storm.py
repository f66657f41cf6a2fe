"""Benchmark: a reconnect storm (issue 30): a web process killed mid-game, beside a bare `websockets` server.

Not a test. On PostgreSQL and Redis it provisions one room with SCREENS screens and one electronic
speciality with TERMINALS terminals (bench/screens.py's and bench/terminal_fanout.py's provisioning), starts
the web server as deploy/ runs it (gunicorn, WORKERS `config.web_worker.HallUvicornWorker` workers on one
port) and connects every screen's and terminal's socket from CLIENTS client processes. Once every socket is
open and has its snapshot (a screen's as its socket's first frame, ``/ws/screens/<token>/?snapshot=1``,
from the web process's cache; a terminal's too, its speciality's part, ``?device=…&token=…&snapshot=1``,
then its own part through the device API a moment later, off the path of showing the ball, unless the
frame's ``own_seq`` says the part it has is current: as the pages do; the first load's own parts all
loaded before the play), the driver publishes a ball every BALL_EVERY seconds on both rooms' streams
(``halls.events.emit_many`` in one transaction, as the draw step). After WARMUP seconds it kills one web
worker (SIGKILL: no drain; gunicorn starts another one, the sibling takes the sockets meanwhile). Every
client of that worker sees its socket drop and comes back as the pages do (halls/stream.js, and
bingo/electronic/static/electronic/terminal_stream.js): a random delay below a ceiling that doubles from 1 s
(full jitter), then the socket, then the snapshot (its first frame; a terminal then POSTs its own part
within OWN_SPREAD seconds; a socket without that frame within SOCKET_SNAPSHOT seconds: the whole
snapshot over HTTP); a socket closed 1013 with the reason "retry-after=S" (a
process refusing it for now) comes back at a random moment within S seconds, without doubling.

In the same run, the same clients connect to WORKERS bare `websockets` processes on one port (SO_REUSEPORT)
that relay the same frames from a Redis pub/sub channel and send each new connection its stream's last frame
(its "snapshot"); one of them is killed the same way: the baseline.

It reports, for each side: how long the first connects took (every socket open with its snapshot), the
sockets that dropped at the kill, and for them the time from the kill to the socket open again ("back") and
to showing the current ball ("shown": a snapshot, or the bare server's last frame, loaded after the
reopen); and nothing lost: every client's last seq (events and snapshots) against the last published seq
of its stream. Targets (issue 30): every socket back and showing the current ball within 10 s, within 2x
of the bare server's, nothing lost.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench_storm REDIS_URL=redis://127.0.0.1:6379/7 \\
        flock /tmp/hall-bench.lock .venv/bin/python bench/reconnect_storm.py --screens 2000 --terminals 2000

``--quick``: 300 + 300. The last line sums it up: ``screens=… terminals=… dropped=… back_max_s=…
shown_p99_s=… shown_max_s=… lost=… baseline_shown_max_s=… ratio=…``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import select
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/hall_bench_storm")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/7")

import netsim  # noqa: E402  (bench/netsim.py: percentiles, processes' CPU)
import screens as base  # noqa: E402  (bench/screens.py: processes, provisioning)
import terminal_fanout  # noqa: E402  (bench/terminal_fanout.py: the terminals' provisioning)

from bingo.electronic.simulator import PATHS, HttpConnection  # noqa: E402  (pure: no Django)

PYTHON = sys.executable
BALL_EVERY = 3.0
FIRST_CEILING = 1.0  # the pages' first back-off ceiling (halls/stream.js MIN_BACKOFF_MS)
MOST_CEILING = 15.0
CLOSE_TRY_LATER = 1013  # with "retry-after=S": back within S seconds, the ceiling not doubled
SNAPSHOTS_IN_FLIGHT = 64  # per client process: the load generator stays light
SOCKET_SNAPSHOT = 5.0  # terminal_stream.js SOCKET_SNAPSHOT_MS: no snapshot frame by then, over HTTP
OWN_SPREAD = 3.0  # terminal_stream.js OWN_SPREAD_MS: after a reconnect's frame, the own part's POST within it
HANDSHAKE = (
    "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
    "Origin: http://127.0.0.1:{port}\r\n\r\n"
)


# --- a client: one screen or terminal, reconnecting as the pages do -----------------------------------------


class Wire(asyncio.Protocol):
    """One connection (minimal RFC 6455 client: text frames)."""

    def __init__(self, owner: Client) -> None:
        self.owner = owner
        self.buffer = bytearray()
        loop = asyncio.get_running_loop()
        self.opened: asyncio.Future[float] = loop.create_future()
        self.closed: asyncio.Future[float] = loop.create_future()
        self.transport: asyncio.Transport | None = None
        self.close_code = 0  # the server's close frame's code (0: none heard)
        self.close_reason = ""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        request = HANDSHAKE.format(path=self.owner.path, port=self.owner.port)
        self.transport.write(request.encode())

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(ConnectionError("closed before the handshake"))
        if not self.closed.done():
            self.closed.set_result(time.time())

    def data_received(self, data: bytes) -> None:
        now = time.time()
        self.buffer += data
        if not self.opened.done():
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            status = bytes(self.buffer[:end]).split(b"\r\n", 1)[0]
            del self.buffer[: end + 4]
            if b" 101 " not in status:
                self.opened.set_exception(ConnectionError(status.decode(errors="replace")))
                if self.transport is not None:
                    self.transport.close()
                return
            self.opened.set_result(now)
        buf = self.buffer
        while len(buf) >= 2:
            opcode, length, offset = buf[0] & 0x0F, buf[1] & 0x7F, 2
            if length == 126:
                if len(buf) < 4:
                    return
                length, offset = int.from_bytes(buf[2:4], "big"), 4
            elif length == 127:
                if len(buf) < 10:
                    return
                length, offset = int.from_bytes(buf[2:10], "big"), 10
            if len(buf) < offset + length:
                return
            payload = bytes(buf[offset : offset + length])
            del buf[: offset + length]
            if opcode == 0x1:
                self.owner.on_text(payload, now)
            elif opcode == 0x9 and self.transport is not None:
                self.transport.write(bytes([0x8A, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)
            elif opcode == 0x8 and self.transport is not None:
                if len(payload) >= 2:
                    self.close_code = int.from_bytes(payload[:2], "big")
                    self.close_reason = payload[2:].decode(errors="replace")
                self.transport.close()


def retry_after(wire: Wire | None) -> float | None:
    """The seconds of a close 1013's reason "retry-after=S" (HallStream.retryAfter), or None."""
    if wire is None or wire.close_code != CLOSE_TRY_LATER or not wire.close_reason.startswith("retry-after="):
        return None
    try:
        seconds = float(wire.close_reason.partition("=")[2])
    except ValueError:
        return None
    return seconds if 0 <= seconds <= 60 else None


_gates: dict[int, asyncio.Semaphore] = {}


def snapshot_gate() -> asyncio.Semaphore:
    loop = id(asyncio.get_running_loop())
    if loop not in _gates:
        _gates[loop] = asyncio.Semaphore(SNAPSHOTS_IN_FLIGHT)
    return _gates[loop]


class Client:
    """A screen or a terminal: its socket, reopened after a drop with the pages' jittered back-off, then its
    snapshot (product: over HTTP; bare: the first frame the server sends)."""

    def __init__(self, spec: dict[str, Any], bare: bool, rng: random.Random) -> None:
        self.spec, self.bare, self.rng = spec, bare, rng
        self.port, self.path, self.stream = spec["port"], spec["path"], spec["stream"]
        self.http: HttpConnection | None = None
        if not bare:
            self.http = HttpConnection(f"http://127.0.0.1:{self.port}", spec.get("authorization", ""))
        self.seqs: list[int] = []  # events of the followed stream
        self.covered = 0  # highest seq a snapshot covered
        self.wire: Wire | None = None
        self.attempt = 0
        self.first_shown = 0.0
        self.drops: list[list[float]] = []  # [closed, reopened, shown, connects tried, refused]
        self.waiting_first = False  # bare: the next frame is the snapshot
        self.failures = 0
        self.stopping = False
        # Counters (issue 30: where the reconnect time goes): connects tried, and refused (an HTTP answer
        # other than 101, by status; a close before the snapshot, by code), before and since the first show.
        self.attempts = 0
        self.refusals: dict[str, int] = {}
        self.first_attempts = 0  # connects tried until the first snapshot shown
        self.framed: asyncio.Event | None = None  # a terminal's snapshot frame came on this socket
        self.own_parts = 0  # a terminal's own parts loaded (the POST after its snapshot frame)
        self.own_seq: int | None = None  # a terminal's own stream's seq as its last own part said
        self.own_current = False  # the last snapshot frame's own_seq is own_seq: no POST (as the page)
        self.own_skipped = 0
        self.settled = False  # a terminal's own part loaded once (as its page's first load)

    def on_text(self, payload: bytes, now: float) -> None:
        try:
            frame = json.loads(payload)
        except ValueError:
            return
        seq = frame.get("seq")
        if frame.get("type") == "stream.snapshot" and self.spec["kind"] == "terminal":
            # The terminal's socket's first frame: its speciality's part, the room stream's seq in "seqs".
            seq = (frame.get("seqs") or {}).get(self.stream)
            if isinstance(seq, int):
                own = frame.get("own_seq")
                self.own_current = isinstance(own, int) and own == self.own_seq
                self.covered = max(self.covered, seq)
                self._shown(now)
                if self.framed is not None:
                    self.framed.set()
            return
        if frame.get("stream") != self.stream or not isinstance(seq, int):
            return
        if frame.get("type") == "stream.snapshot":  # the product's screen: its socket's first frame
            self.covered = max(self.covered, seq)
            self._shown(now)
            return
        if self.waiting_first:  # the bare server's last frame: the "snapshot"
            self.waiting_first = False
            self.covered = max(self.covered, seq)
            self._shown(now)
            return
        self.seqs.append(seq)

    def ready(self) -> bool:
        """Shown, and a product terminal's own part loaded: the first load's POSTs are over."""
        return bool(self.first_shown) and (self.bare or self.spec["kind"] != "terminal" or self.settled)

    def _shown(self, now: float) -> None:
        self.attempt = 0
        if not self.first_shown:
            self.first_shown = now
            self.first_attempts = self.attempts
        elif self.drops and not self.drops[-1][2]:
            self.drops[-1][2] = now

    def refused(self, why: str) -> None:
        self.refusals[why] = self.refusals.get(why, 0) + 1
        if self.drops and not self.drops[-1][2]:
            self.drops[-1][4] += 1

    async def snapshot(self) -> bool:
        assert self.http is not None
        async with snapshot_gate():
            if self.spec["kind"] == "screen":
                status, data = await self.http.request("GET", self.spec["snapshot"])
            else:
                status, data = await self.http.request("POST", PATHS["snapshot"], b"{}")
        if status != 200 or not isinstance(data, dict):
            return False
        seq = data.get("seq") if self.spec["kind"] == "screen" else (data.get("seqs") or {}).get(self.stream)
        if not isinstance(seq, int):
            return False
        if self.spec["kind"] == "terminal":  # no event of its own stream in this bench: the POST's seq
            own = (data.get("seqs") or {}).get((data.get("streams") or {}).get("terminal"))
            self.own_seq = own if isinstance(own, int) else None
        self.covered = max(self.covered, seq)
        self._shown(time.time())
        return True

    async def snapshot_frame(self, wire: Wire) -> bool:
        """A terminal asking for its socket's snapshot frame: whether it came within SOCKET_SNAPSHOT s."""
        if self.framed is None:
            return False
        closed: asyncio.Future[Any] = asyncio.ensure_future(asyncio.shield(wire.closed))
        framed: asyncio.Future[Any] = asyncio.ensure_future(self.framed.wait())
        await asyncio.wait({closed, framed}, timeout=SOCKET_SNAPSHOT, return_when=asyncio.FIRST_COMPLETED)
        closed.cancel()
        framed.cancel()
        return self.framed.is_set()

    @staticmethod
    async def sleep_unless_closed(wire: Wire, seconds: float) -> None:
        if seconds > 0:
            await asyncio.wait([asyncio.shield(wire.closed)], timeout=seconds)

    def pause(self, wire: Wire | None = None) -> float:
        """The pages' delay before the next connect (HallStream.backoff): after a 1013 with its
        "retry-after=S", a random moment within S; otherwise below a ceiling doubling per failed try."""
        retry = retry_after(wire)
        if retry is not None:
            return self.rng.uniform(0.0, retry)
        ceiling = min(MOST_CEILING, FIRST_CEILING * 2**self.attempt)
        self.attempt += 1
        return self.rng.uniform(0.0, ceiling)

    async def run(self, ready: asyncio.Event) -> None:
        """Open, load the snapshot, wait for the socket to drop; again after a pause, until stopped."""
        loop = asyncio.get_running_loop()
        while not self.stopping:
            # Before the connection: the bare server's first frame may come with the handshake's answer,
            # handled before create_connection returns.
            self.waiting_first = self.bare
            was_first = not self.first_shown
            self.framed = asyncio.Event() if self.spec.get("socket_snapshot") else None
            self.attempts += 1
            if self.drops and not self.drops[-1][2]:
                self.drops[-1][3] += 1
            try:
                _, wire = await loop.create_connection(lambda: Wire(self), "127.0.0.1", self.port)
                await asyncio.wait_for(wire.opened, 60)
            except (OSError, ConnectionError, TimeoutError) as exc:
                status = str(exc).split(" ")
                self.refused(f"http {status[1]}" if str(exc).startswith("HTTP/") else type(exc).__name__)
                self.failures += 1
                await asyncio.sleep(self.pause())
                continue
            self.wire = wire
            if self.drops and not self.drops[-1][1]:
                self.drops[-1][1] = time.time()
            if not self.bare and self.spec["kind"] != "screen":  # a screen's comes on its socket
                await asyncio.sleep(0)  # as the page: a 1013 right after the opening loads nothing
                framed = await self.snapshot_frame(wire)
                if framed and self.own_current:  # its own part is current: no POST (as the page)
                    self.own_skipped += 1
                else:
                    if framed:  # shown; the own part a moment later (at once on the first connect)
                        await self.sleep_unless_closed(
                            wire, 0.0 if was_first else self.rng.uniform(0, OWN_SPREAD)
                        )
                    while not wire.closed.done() and not await self.snapshot():
                        if wire.closed.done():
                            break
                        await asyncio.sleep(self.pause())
                    if framed and not wire.closed.done():
                        self.own_parts += 1
                if self.first_shown and not wire.closed.done():
                    self.settled = True  # the terminal's frame and its own part
            closed = await wire.closed
            self.wire = None
            if self.stopping:
                return
            if self.drops and not self.drops[-1][2]:  # closed before showing anything: a refusal
                self.drops[-1][1] = 0.0
                self.refused(f"close {wire.close_code}")
            elif not self.first_shown:
                self.refused(f"close {wire.close_code}")
            else:
                self.drops.append([closed, 0.0, 0.0, 0, 0])  # closed, back, shown, attempts, refusals
            await asyncio.sleep(self.pause(wire))

    def result(self) -> dict[str, Any]:
        return {
            "kind": self.spec["kind"],
            "stream": self.stream,
            "last": max([self.covered, *self.seqs]),
            "seqs": self.seqs,
            "covered": self.covered,
            "first_shown": self.first_shown,
            "drops": self.drops,
            "failures": self.failures,
            "attempts": self.attempts,
            "first_attempts": self.first_attempts,
            "refusals": self.refusals,
            "own_parts": self.own_parts,
            "own_skipped": self.own_skipped,
        }


async def run_clients(spec: dict[str, Any]) -> None:
    """Run every client of the spec; say "ready" once all show their first snapshot; stop on SIGTERM."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    rng = random.Random(spec["seed"])
    clients = [Client(target, spec["bare"], rng) for target in spec["targets"]]
    started = time.time()
    ready = asyncio.Event()
    tasks = [loop.create_task(c.run(ready)) for c in clients]
    # Every client shown and settled (a terminal's own part loaded too, as its page's first load does): the
    # first load's POSTs are over before the play and the kill.
    while not stop.is_set() and not all(c.ready() for c in clients):
        await asyncio.sleep(0.2)
    shown = [c.first_shown for c in clients if c.first_shown]
    print(f"ready {len(shown)} {max(shown, default=started) - started:.1f}", flush=True)
    await stop.wait()
    for c in clients:
        c.stopping = True
    for task in tasks:
        task.cancel()
    Path(spec["out"]).write_text(json.dumps({"started": started, "clients": [c.result() for c in clients]}))
    for c in clients:
        if c.wire is not None and c.wire.transport is not None:
            c.wire.transport.abort()


# --- the bare baseline: processes on one port, each stream's last frame to a new connection ------------


async def run_bare_server(port: int, channel: str, routes: dict[str, str]) -> None:
    """A bare `websockets` server: each frame of the Redis channel to every connection of its stream; a new
    connection gets its stream's last frame at once (what the product's snapshot gives)."""
    import redis.asyncio as aioredis
    from websockets.asyncio.server import broadcast, serve

    following: dict[str, set[Any]] = {}
    last: dict[str, str] = {}

    def stream_of(path: str) -> str:
        for prefix, stream in routes.items():
            if path.startswith(prefix):
                return stream
        return ""

    async def handler(connection: Any) -> None:
        stream = stream_of(connection.request.path)
        members = following.setdefault(stream, set())
        members.add(connection)
        try:
            if stream in last:
                await connection.send(last[stream])
            await connection.wait_closed()
        finally:
            members.discard(connection)

    client = aioredis.Redis.from_url(os.environ["REDIS_URL"])
    pubsub = client.pubsub()
    await pubsub.subscribe(channel)
    async with serve(handler, "127.0.0.1", port, reuse_port=True, compression=None, ping_interval=None):
        async for message in pubsub.listen():
            if message["type"] == "message":
                text = message["data"].decode()
                stream = json.loads(text)["stream"]
                last[stream] = text
                broadcast(following.get(stream, ()), text)


# --- the product's and the bare side's publishing ----------------------------------------------------------


@dataclass
class Published:
    stream: str
    seq: int
    at: float
    text: str


@dataclass
class Schedule:
    events: list[Published] = field(default_factory=list)
    killed_at: float = 0.0


def drive_product(streams: list[str], seconds: float, kill_after: float, kill: Any) -> Schedule:
    """A ball every BALL_EVERY s on both rooms' streams in one transaction; `kill` after `kill_after` s."""
    from django.db import transaction

    from halls import events
    from halls.eventtypes import BallDrawn, EGameBall, EventType

    schedule = Schedule()
    handed_on = events.publish

    def timed_publish(event: events.Event) -> None:
        at = time.time()
        handed_on(event)
        schedule.events.append(Published(event.stream, event.seq, at, event.encode()))

    events.publish = timed_publish
    start = time.time()
    tick = 0
    try:
        while time.time() < start + seconds:
            ordinal = tick % 90 + 1
            drawn = datetime.now(UTC)
            ball = BallDrawn(
                game=1, number=1, state="drawing", ordinal=ordinal, ball=ordinal, colour="red", source="rng",
                drawn_at=drawn,
            )  # fmt: skip
            eball = EGameBall(
                speciality=1, game=1, number=1, state="drawing", ordinal=ordinal, ball=ordinal, drawn_at=drawn
            )
            with transaction.atomic():
                events.emit_many(
                    [(streams[0], EventType.BALL_DRAWN, ball), (streams[1], EventType.EGAME_BALL, eball)]
                )
            tick += 1
            while time.time() < start + tick * BALL_EVERY:
                if not schedule.killed_at and time.time() >= start + kill_after:
                    schedule.killed_at = time.time()
                    kill()
                time.sleep(0.02)
    finally:
        events.publish = handed_on
    return schedule


def drive_bare(channel: str, texts: list[Published], kill_after: float, kill: Any) -> Schedule:
    """The product's frames, renumbered per stream, at the same pace, on the bare servers' channel."""
    import redis

    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    schedule = Schedule()
    start = time.time()
    numbers: dict[str, int] = {}
    for sample in texts:
        while time.time() < start + (sample.at - texts[0].at):
            if not schedule.killed_at and time.time() >= start + kill_after:
                schedule.killed_at = time.time()
                kill()
            time.sleep(0.02)
        n = numbers[sample.stream] = numbers.get(sample.stream, 0) + 1
        text = sample.text.replace(f'"seq":{sample.seq},', f'"seq":{n},', 1)
        at = time.time()
        client.publish(channel, text)
        schedule.events.append(Published(sample.stream, n, at, text))
    time.sleep(max(0.0, BALL_EVERY - (time.time() - schedule.events[-1].at)))
    return schedule


# --- a run ------------------------------------------------------------------------------------------------


def quantile(values: list[float], q: float) -> float:
    found: float = netsim.percentile(sorted(values), q)
    return found


@dataclass
class Result:
    connect_s: float
    sockets: int
    dropped: int
    back: list[float]
    shown: list[float]
    not_back: int
    lost: int
    missing: int
    first_attempts: list[float] = field(default_factory=list)  # per client, until its first snapshot
    storm_attempts: list[float] = field(default_factory=list)  # per dropped client, until shown again
    storm_refused: list[float] = field(default_factory=list)
    refusals: dict[str, int] = field(default_factory=dict)  # every refusal of the run, by kind

    def counters(self) -> str:
        def spread(values: list[float]) -> str:
            return (
                f"sum {sum(values):.0f} p50 {quantile(values, 0.5):.0f} p99 {quantile(values, 0.99):.0f} "
                f"max {max(values, default=0):.0f}"
            )

        kinds = ", ".join(f"{k} x{n}" for k, n in sorted(self.refusals.items())) or "none"
        return (
            f"connects per client to the first snapshot: {spread(self.first_attempts)}; after the kill, per "
            f"dropped client: connects {spread(self.storm_attempts)}, refused {spread(self.storm_refused)}; "
            f"refusals: {kinds}"
        )

    def line(self) -> str:
        return (
            f"first connects {self.connect_s:.1f} s for {self.sockets} sockets; dropped {self.dropped}, "
            f"not back {self.not_back}; back p50 {quantile(self.back, 0.5):.2f} s max "
            f"{max(self.back, default=float('nan')):.2f} s; shown p50 {quantile(self.shown, 0.5):.2f} "
            f"p99 {quantile(self.shown, 0.99):.2f} max {max(self.shown, default=float('nan')):.2f} s; "
            f"lost {self.lost} (events neither received nor covered by a snapshot: {self.missing})"
        )


def start_clients(
    targets: list[dict[str, Any]], count: int, workdir: Path, tag: str, bare: bool
) -> list[Any]:
    procs = []
    for i in range(count):
        out = workdir / f"{tag}-{i}.json"
        spec = {
            "targets": targets[i::count],
            "out": str(out),
            "bare": bare,
            "seed": 1000 + i,
        }
        path = workdir / f"{tag}-{i}-spec.json"
        path.write_text(json.dumps(spec))
        procs.append(
            (
                subprocess.Popen(
                    [PYTHON, __file__, "--client", str(path)], cwd=ROOT, stdout=subprocess.PIPE, text=True
                ),
                out,
            )
        )
    return procs


def wait_ready(procs: list[Any], timeout: float) -> float:
    """Every client process's "ready" line; the slowest's seconds to all shown."""
    slowest = 0.0
    deadline = time.monotonic() + timeout
    for proc, _ in procs:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SystemExit("clients not ready in time")
            readable, _, _ = select.select([proc.stdout], [], [], left)
            if readable:
                line = proc.stdout.readline()
                if line.startswith("ready"):
                    slowest = max(slowest, float(line.split()[2]))
                    break
                if not line:
                    raise SystemExit("a client process ended")
    return slowest


def collect(procs: list[Any], schedule: Schedule, connect_s: float) -> dict[str, Result]:
    """Every client's result: all of them ("all"), and the screens' and the terminals' apart."""
    for proc, _ in procs:
        proc.send_signal(signal.SIGTERM)
    for proc, _ in procs:
        proc.wait(timeout=120)
    clients = [c for _, out in procs for c in json.loads(out.read_text())["clients"]]
    found = {"all": summed(clients, schedule, connect_s)}
    for kind in ("screen", "terminal"):
        found[kind] = summed([c for c in clients if c["kind"] == kind], schedule, connect_s)
    own = [c.get("own_parts", 0) for c in clients if c["kind"] == "terminal"]
    found["terminal"].refusals["(own parts loaded)"] = sum(own)
    skipped = [c.get("own_skipped", 0) for c in clients if c["kind"] == "terminal"]
    found["terminal"].refusals["(own parts current, no POST)"] = sum(skipped)
    return found


def summed(clients: list[dict[str, Any]], schedule: Schedule, connect_s: float) -> Result:
    last: dict[str, int] = {}
    for event in schedule.events:
        last[event.stream] = max(last.get(event.stream, 0), event.seq)
    published: dict[str, list[int]] = {}
    for event in schedule.events:
        published.setdefault(event.stream, []).append(event.seq)
    dropped = back_missing = lost = missing = 0
    back: list[float] = []
    shown: list[float] = []
    first_attempts = [float(c["first_attempts"]) for c in clients]
    storm_attempts: list[float] = []
    storm_refused: list[float] = []
    refusals: dict[str, int] = {}
    for c in clients:
        for kind, n in c["refusals"].items():
            refusals[kind] = refusals.get(kind, 0) + n
        if c["last"] < last.get(c["stream"], 0):
            lost += 1
        got = set(c["seqs"])
        missing += sum(1 for seq in published.get(c["stream"], ()) if seq not in got and seq > c["covered"])
        drops = [d for d in c["drops"] if d[0] >= schedule.killed_at - 0.5]
        if not drops:
            continue
        dropped += 1
        storm_attempts.append(float(sum(d[3] for d in drops)))
        storm_refused.append(float(sum(d[4] for d in drops)))
        first, final = drops[0], drops[-1]
        if not final[1] or not final[2]:
            back_missing += 1
            continue
        back.append(first[1] - schedule.killed_at if first[1] else final[1] - schedule.killed_at)
        shown.append(final[2] - schedule.killed_at)
    return Result(
        connect_s, len(clients), dropped, back, shown, back_missing, lost, missing,
        first_attempts, storm_attempts, storm_refused, refusals,
    )  # fmt: skip


def sockets_of(pid: int, port: int) -> int:
    import psutil

    try:
        found = psutil.Process(pid).net_connections(kind="tcp")
    except psutil.Error:
        return 0
    return sum(1 for c in found if c.status == psutil.CONN_ESTABLISHED and c.laddr.port == port)


def kill_busiest(pids: list[int], port: int, what: str) -> None:
    """SIGKILL the process holding the most connections on `port` (the worst case: most reconnect)."""
    held = {pid: sockets_of(pid, port) for pid in pids}
    victim = max(held, key=lambda pid: held[pid])
    os.kill(victim, signal.SIGKILL)
    print(f"  killed {what} {victim}: connections held {held}", flush=True)


def kill_one_worker(master: subprocess.Popen[bytes], port: int) -> Any:
    import psutil

    def kill() -> None:
        kill_busiest([p.pid for p in psutil.Process(master.pid).children()], port, "web worker")

    return kill


def wait_serving(port: int, path: str, workers: int, timeout: float = 300.0) -> None:
    """Every worker booted: gunicorn binds before its workers have loaded Django, and a worker's first
    requests are slow; answered 200 by as many distinct workers (by pid, from the connections) as started."""
    import httpx

    deadline = time.monotonic() + timeout
    answered = 0
    while time.monotonic() < deadline and answered < 10 * workers:
        try:
            if httpx.get(f"http://127.0.0.1:{port}{path}", timeout=10.0).status_code == 200:
                answered += 1
                continue
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    time.sleep(2.0)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--screens", type=int, default=2000)
    parser.add_argument("--terminals", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2, help="web processes (and bare servers)")
    parser.add_argument("--clients", type=int, default=4, help="client processes")
    parser.add_argument("--kill-after", type=float, default=7.0, help="seconds of play before the kill")
    parser.add_argument("--seconds", type=float, default=30.0, help="seconds of play in all")
    parser.add_argument("--port", type=int, default=0, help="the product's port (the bare one: +1)")
    parser.add_argument("--quick", action="store_true", help="300 screens and 300 terminals")
    parser.add_argument(
        "--preload",
        action="store_true",
        help="gunicorn --preload: the killed worker's replacement forks with Django loaded (it boots for "
        "20 s of CPU otherwise, beside the sibling that takes the storm)",
    )
    parser.add_argument("--client", help=argparse.SUPPRESS)
    parser.add_argument("--bare-server", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        base.use_uvloop()
        asyncio.run(run_clients(json.loads(Path(args.client).read_text())))
        return
    if args.bare_server:
        base.use_uvloop()
        port, channel, routes = args.bare_server
        asyncio.run(run_bare_server(int(port), channel, json.loads(routes)))
        return
    if args.quick:
        args.screens, args.terminals = min(args.screens, 300), min(args.terminals, 300)

    base.ensure_database(os.environ["DATABASE_URL"])
    prefix = f"benchstorm{uuid.uuid4().hex[:8]}"
    os.environ["CHANNEL_PREFIX"] = prefix
    env = {**os.environ, "CONN_MAX_AGE": "60", "HALL_LOG_LEVEL": "WARNING", "HALL_DB_POOL": "16"}
    subprocess.run([PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    from django.db import connection

    screen_room, tokens, _ = base.provision(args.screens, 0)
    terminal_room, terminals = terminal_fanout.provision(args.terminals)
    connection.close()
    streams = [f"room.{screen_room}", f"room.{terminal_room}"]
    port = args.port or base.free_port()
    bare_port = args.port + 1 if args.port else base.free_port()

    def targets(at: int) -> list[dict[str, Any]]:
        out = [
            {
                "kind": "screen",
                "port": at,
                "path": f"/ws/screens/{token}/?snapshot=1",
                "snapshot": f"/screens/{token}/snapshot/",
                "stream": streams[0],
            }
            for token in tokens
        ]
        out += [
            {
                "kind": "terminal",
                "port": at,
                "path": f"/ws/electronic/terminal/?device={t['device']}&token={t['token']}&snapshot=1",
                "socket_snapshot": True,
                "authorization": f"CashDevice {t['device']}:{t['token']}",
                "stream": streams[1],
            }
            for t in terminals
        ]
        random.Random(5).shuffle(out)
        return out

    workdir = Path(tempfile.mkdtemp(prefix="bench-storm-"))
    print(
        f"{args.screens} screens + {args.terminals} terminals on {args.workers} web processes, "
        f"{args.clients} client processes; kill after {args.kill_after:.0f} s of {args.seconds:.0f} s "
        f"{'(gunicorn --preload) ' if args.preload else ''}"
        f"(work dir {workdir})"
    )
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    # --- the product: gunicorn as deploy/ runs it ---
    web = subprocess.Popen(
        [
            PYTHON, "-m", "gunicorn", "config.asgi:application", "-c", "config/gunicorn.py",
            "--worker-class", "config.web_worker.HallUvicornWorker", "--workers", str(args.workers),
            "--bind", f"127.0.0.1:{port}", "--graceful-timeout", "10", "--log-level", "warning",
            *(["--preload"] if args.preload else []),
        ],
        cwd=ROOT, env={**env, "WEB_CONCURRENCY": str(args.workers)},
    )  # fmt: skip
    try:
        base.wait_listening(port, timeout=120)
        wait_serving(port, f"/screens/{tokens[0]}/snapshot/", args.workers)
        t0 = time.monotonic()
        procs = start_clients(targets(port), args.clients, workdir, "product", bare=False)
        connect_s = wait_ready(procs, timeout=900)
        print(f"  product: every socket open with its snapshot after {time.monotonic() - t0:.1f} s")
        cpu_before = netsim.cpu_seconds(netsim.children(web.pid))
        schedule = drive_product(streams, args.seconds, args.kill_after, kill_one_worker(web, port))
        time.sleep(3.0)
        # The web processes' CPU over the play and the storm (the killed worker's reaped by its master).
        product_cpu = netsim.cpu_seconds(netsim.children(web.pid)) - cpu_before
        products = collect(procs, schedule, connect_s)
        product = products["all"]
    finally:
        web.send_signal(signal.SIGTERM)
        try:
            web.wait(timeout=30)
        except subprocess.TimeoutExpired:
            web.kill()
    print(f"  product: {product.line()}; web CPU during the play {product_cpu:.1f} s")
    print(f"  product: {product.counters()}")
    for kind in ("screen", "terminal"):
        print(f"  product {kind}s: {products[kind].line()}")
        print(f"  product {kind}s: {products[kind].counters()}")

    # --- the bare baseline ---
    channel = f"{prefix}-bare"
    routes = json.dumps({"/ws/screens/": streams[0], "/ws/electronic/terminal/": streams[1]})
    bare = [
        subprocess.Popen(
            [PYTHON, __file__, "--bare-server", str(bare_port), channel, routes], cwd=ROOT, env=env
        )
        for _ in range(args.workers)
    ]
    try:
        base.wait_listening(bare_port, timeout=60)
        time.sleep(1.0)
        # The streams' first frames, so a new connection has something to show.
        import redis

        first = [
            e for e in schedule.events if e.seq == min(x.seq for x in schedule.events if x.stream == e.stream)
        ]
        t0 = time.monotonic()
        procs = start_clients(targets(bare_port), args.clients, workdir, "bare", bare=True)
        publisher = redis.Redis.from_url(os.environ["REDIS_URL"])
        for event in first:  # as seq 0: what a new connection is sent until the first ball
            publisher.publish(channel, event.text.replace(f'"seq":{event.seq},', '"seq":0,', 1))
        connect_s = wait_ready(procs, timeout=900)
        print(f"  bare: every socket open with its last frame after {time.monotonic() - t0:.1f} s")

        def kill_bare() -> None:
            kill_busiest([p.pid for p in bare], bare_port, "bare server")

        bare_pids = [p.pid for p in bare]
        cpu_before = netsim.cpu_seconds(bare_pids)
        baseline_schedule = drive_bare(channel, schedule.events, args.kill_after, kill_bare)
        time.sleep(3.0)
        baseline_cpu = netsim.cpu_seconds(bare_pids) - cpu_before  # the killed one's up to its death
        baselines = collect(procs, baseline_schedule, connect_s)
        baseline = baselines["all"]
    finally:
        base.stop_all(bare)
    print(f"  bare: {baseline.line()}; servers' CPU during the play {baseline_cpu:.1f} s")
    print(f"  bare: {baseline.counters()}")
    for kind in ("screen", "terminal"):
        print(f"  bare {kind}s: {baselines[kind].line()}")
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    shown_max = max(product.shown, default=float("nan"))
    bare_max = max(baseline.shown, default=float("nan"))
    print(
        f"screens={args.screens} terminals={args.terminals} connect_s={product.connect_s:.1f} "
        f"dropped={product.dropped} not_back={product.not_back} "
        f"back_max_s={max(product.back, default=float('nan')):.2f} "
        f"shown_p99_s={quantile(product.shown, 0.99):.2f} shown_max_s={shown_max:.2f} lost={product.lost} "
        f"baseline_connect_s={baseline.connect_s:.1f} baseline_dropped={baseline.dropped} "
        f"baseline_shown_max_s={bare_max:.2f} baseline_lost={baseline.lost} ratio={shown_max / bare_max:.2f} "
        f"cpu_s={product_cpu:.1f} baseline_cpu_s={baseline_cpu:.1f}"
    )
    for kind in ("screen", "terminal"):
        mine, bare_kind = products[kind], baselines[kind]
        kind_max = max(mine.shown, default=float("nan"))
        kind_bare = max(bare_kind.shown, default=float("nan"))
        print(
            f"{kind}s: dropped={mine.dropped} not_back={mine.not_back} "
            f"back_max_s={max(mine.back, default=float('nan')):.2f} "
            f"shown_p99_s={quantile(mine.shown, 0.99):.2f} shown_max_s={kind_max:.2f} lost={mine.lost} "
            f"missing={mine.missing} baseline_dropped={bare_kind.dropped} "
            f"baseline_shown_max_s={kind_bare:.2f} baseline_lost={bare_kind.lost} "
            f"ratio={kind_max / kind_bare:.2f}"
        )


if __name__ == "__main__":
    main()
