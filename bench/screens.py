"""Benchmark: hall screens on one host (issue 9, "Screens"), beside a bare `websockets` broadcast.

Not a test. On PostgreSQL and Redis it provisions one room with SCREENS screens and POOLS pools of its
venue, starts PROCESSES uvicorn web processes (config.asgi on the Redis pub/sub channel layer, one port
each) and connects the screens over real WebSockets from CLIENTS client processes (a minimal asyncio
WebSocket client, so the load generator stays light), spread evenly over the web processes. Then, for
WARMUP + SECONDS, the driver (this process) runs the hall's publishing path: every 0.25 s one pool
contribution per pool and `jackpots.services.screen_events.publish_meters` (one `pool.meters` event
for all the pools), and every 3 s a `ball.drawn` event through `halls.events.emit` in its own
transaction (the draw service's publish path, with a ball's payload). It records when each event is
handed to the channel layer (`halls.events.publish`, after commit) and every client records when each
event arrives.

In the same run, the same clients connect to PROCESSES bare `websockets` servers that relay the same
frames (the product's texts, renumbered) from a Redis pub/sub channel with `websockets.broadcast`, at
the same pace: the baseline.

For both it reports delivery latency (publish -> client, p50/p99/max over every delivery of the events
published after the warm-up), lost deliveries (an event a connected screen never got), and the server
processes' CPU (psutil, user + system) per delivery. Heads (halls.fanout, every 10 s) are sent by the
product and cost CPU but are not counted as deliveries. From the CPU per delivery it derives how many
screens one fully busy process (one core) would serve at this pace.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench_screens REDIS_URL=redis://127.0.0.1:6379/3 \\
        .venv/bin/python bench/screens.py --screens 2000 --processes 2 --seconds 60

``--quick``: 300 screens, 4 s warm-up + 12 s a side, under a minute. The last line is the summary:
``screens=2000 processes=2 p50_ms=… p99_ms=… lost=0 cpu_us_per_delivery=… baseline_p99_ms=…``.
Targets (issue 9): 2,000 screens on 2 processes, 0 lost, p99 within 2x of the baseline's, <= 50 µs of
server CPU per delivery.

``--acks`` (issue 28): a second product run in which every screen acknowledges every event it receives (as
halls/stream.js does: seq, render time, digest, frame, game, balls), the web processes writing the acks in
batches (halls.ack_batcher). It reports the server CPU the acks add per ack (the web processes' CPU per second
with acks minus without, over the acks per second), and the acks sent and written; the summary gains
``ack_per_s=… acks_sent=… acks_written=… cpu_us_per_ack=…``. Target: <= 20 µs of server CPU per ack.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import uuid
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/hall_bench_screens")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/3")

from netsim import cpu_seconds, ensure_database, free_port, wait_listening  # noqa: E402 (bench/netsim.py)

from halls.eventtypes import EventType  # noqa: E402 (pure: the one list of event types)

BALL_DRAWN = EventType.BALL_DRAWN

PYTHON = sys.executable
VENUE_LICENCE = "BENCH-SCREENS"
METER_EVERY = 0.25  # the meter publisher's beat
BALL_EVERY = 3.0  # a ball every 3 s
DRAIN = 3.0  # seconds after the last event before the clients stop
ACK_FLUSH = 1.0  # a screen sends its pending acks within this (halls/ack.js FLUSH_MS), a ball's at once
# A web process: uvicorn as deployed (uvloop, httptools, websockets-sansio), quiet.
UVICORN = [PYTHON, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1", "--lifespan", "off"]
UVICORN += ["--log-level", "warning", "--no-access-log"]


# --- a minimal WebSocket client (RFC 6455, text frames, answers pings) -----------------------------------


HANDSHAKE = (
    "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{extensions}\r\n"
)
# What browsers offer: the server then compresses every frame, separately for every socket.
DEFLATE = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"


class ScreenClient(asyncio.Protocol):
    """One screen: records (seq, arrival time) of every event; heads and other frames are counted."""

    def __init__(self, path: str, port: int, deflate: bool, acks: bool = False) -> None:
        self.request = HANDSHAKE.format(path=path, port=port, extensions=DEFLATE if deflate else "").encode()
        self.acks = acks  # acknowledge every event, as halls/stream.js does (issue 28)
        self.acked = 0
        self.frames_sent = 0  # the WebSocket messages that carried them
        self.pending: list[list[Any]] = []
        self.flusher: asyncio.TimerHandle | None = None
        self.inflate: Any = None  # a zlib decompressor once the server agreed to compress
        self.buffer = bytearray()
        self.opened: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None
        self.seqs: list[int] = []
        self.times: list[float] = []
        self.others = 0
        self.closed_at = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are not asyncio.Transport subclasses
        self.transport.write(self.request)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed_at = time.time()
        if not self.opened.done():
            self.opened.set_exception(ConnectionError("closed before the handshake"))

    def data_received(self, data: bytes) -> None:
        now = time.time()
        self.buffer += data
        if not self.opened.done():
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buffer[:end])
            status = head.split(b"\r\n", 1)[0]
            del self.buffer[: end + 4]
            if b" 101 " not in status:
                self.opened.set_exception(ConnectionError(status.decode(errors="replace")))
                return
            if b"permessage-deflate" in head.lower():
                self.inflate = zlib.decompressobj(-zlib.MAX_WBITS)
            self.opened.set_result(now)
        buf = self.buffer
        while len(buf) >= 2:
            compressed, opcode, length, offset = buf[0] & 0x40, buf[0] & 0x0F, buf[1] & 0x7F, 2
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
            if compressed and self.inflate is not None:
                payload = self.inflate.decompress(payload + b"\x00\x00\xff\xff")
            if opcode == 0x1:
                at = payload.find(b'"seq":', 0, 80)
                if at >= 0:
                    seq = int(payload[at + 6 : payload.index(b",", at)])
                    self.seqs.append(seq)
                    self.times.append(now)
                    if self.acks:
                        self.acknowledge(seq, payload)
                else:
                    self.others += 1
            elif opcode == 0x9 and self.transport is not None:  # ping: pong (masked, with a zero key)
                self.transport.write(bytes([0x8A, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)
            elif opcode == 0x8 and self.transport is not None:
                self.transport.close()

    def acknowledge(self, seq: int, payload: bytes) -> None:
        """The screen's ack of what it showed, sent as halls/ack.js' Outbox does: with the pending ones at
        once for a ball, else within a second; one masked text frame (a zero mask) of "acks"."""
        event = json.loads(payload)
        data = event.get("data") or {}
        ball = data.get("ball") if event.get("type") == BALL_DRAWN else None
        digest = hashlib.sha256(payload).hexdigest()[:16]
        row = [
            seq,
            int(time.time() * 1000),
            digest,
            event.get("type", ""),
            data.get("game"),
            [ball] if ball else [],
        ]
        self.pending.append(row)
        self.acked += 1
        if ball:
            self.flush()
        elif self.flusher is None:
            self.flusher = asyncio.get_running_loop().call_later(ACK_FLUSH, self.flush)

    def flush(self) -> None:
        if self.flusher is not None:
            self.flusher.cancel()
            self.flusher = None
        if self.transport is None or not self.pending:
            return
        text = json.dumps({"type": "acks", "acks": self.pending}, separators=(",", ":")).encode()
        self.pending = []
        size = len(text)
        length = bytes([0x80 | size]) if size < 126 else bytes([0x80 | 126]) + size.to_bytes(2, "big")
        self.transport.write(b"\x81" + length + b"\0\0\0\0" + text)
        self.frames_sent += 1


async def run_clients(spec: dict[str, Any]) -> None:
    """Connect every (port, path) of the spec, say "ready", listen until SIGTERM, then write the results."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    gate = asyncio.Semaphore(50)
    clients: list[ScreenClient | None] = []

    async def open_one(port: int, path: str) -> ScreenClient | None:
        for _ in range(3):
            async with gate:
                try:
                    _, client = await loop.create_connection(
                        lambda: ScreenClient(path, port, spec["deflate"], spec.get("acks", False)),
                        "127.0.0.1",
                        port,
                    )
                    await asyncio.wait_for(client.opened, 20)
                    return client
                except (OSError, ConnectionError, TimeoutError):
                    await asyncio.sleep(0.5)
        return None

    clients = list(await asyncio.gather(*(open_one(port, path) for port, path in spec["targets"])))
    print(f"ready {sum(c is not None for c in clients)} {sum(c is None for c in clients)}", flush=True)
    await stop.wait()
    out: dict[str, Any] = {"conns": []}
    for client in clients:
        if client is None:
            out["conns"].append(None)
            continue
        out["conns"].append(
            {
                "opened": client.opened.result(),
                "closed": client.closed_at,
                "seqs": client.seqs,
                "times": client.times,
                "others": client.others,
                "acked": client.acked,
                "ack_frames": client.frames_sent,
            }
        )
        if client.transport is not None:
            client.transport.abort()
    Path(spec["out"]).write_text(json.dumps(out))


# --- the bare baseline server -------------------------------------------------------------------------------


async def run_bare_server(port: int, channel: str) -> None:
    """A bare `websockets` server: every frame of the Redis channel goes to every connection."""
    import redis.asyncio as aioredis
    from websockets.asyncio.server import broadcast, serve

    connections: set[Any] = set()

    async def handler(connection: Any) -> None:
        connections.add(connection)
        try:
            await connection.wait_closed()
        finally:
            connections.discard(connection)

    client = aioredis.Redis.from_url(os.environ["REDIS_URL"])
    pubsub = client.pubsub()
    await pubsub.subscribe(channel)
    async with serve(handler, "127.0.0.1", port):
        async for message in pubsub.listen():
            if message["type"] == "message":
                broadcast(connections, message["data"].decode())


def use_uvloop() -> None:
    try:
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    except ImportError:
        pass


# --- processes --------------------------------------------------------------------------------------------


def stop_all(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- provisioning and the product's publishing path ---------------------------------------------------------


def provision(screens: int, pools: int) -> tuple[int, list[str], list[int]]:
    """The room, its screens' tokens and the venue's pools (created on the first run, then reused)."""
    from halls.models import Jurisdiction, Room, Screen, Venue
    from jackpots.models import Pool
    from jackpots.services import pools as pool_services
    from jackpots.services.pools import LevelSpec

    venue, _ = Venue.objects.get_or_create(
        licence_number=VENUE_LICENCE, defaults={"name": "Bench bingo", "jurisdiction": Jurisdiction.AN10}
    )
    room, _ = Room.objects.get_or_create(venue=venue, name="Sala bench")
    have = Screen.objects.filter(room=room, active=True).count()
    Screen.objects.bulk_create(
        [Screen(venue=venue, room=room, name=f"Pantalla {have + i + 1}") for i in range(screens - have)]
    )
    tokens = list(
        Screen.objects.filter(room=room, active=True).order_by("pk").values_list("token", flat=True)
    )
    pool_ids = []
    for i in range(1, pools + 1):
        pool = Pool.objects.filter(code=f"BENCH-SCREENS-{i}").first()
        if pool is None:
            pool = pool_services.create_pool(
                name=f"Progresivo {i}",
                code=f"BENCH-SCREENS-{i}",
                jurisdiction=venue.jurisdiction,
                authorisation_ref="BENCH",
                rule_pack="",
                venue=venue,
                levels=[
                    LevelSpec(name="Grand", seed=Decimal("1000"), contribution_rate=Decimal("0.05")),
                    LevelSpec(name="Minor", seed=Decimal("50"), contribution_rate=Decimal("0.01")),
                ],
                carousel_bet=None,
                actor="bench",
            )
            pool_services.add_member(
                pool=pool, source_type="machine", source_id="m1", venue=venue, actor="bench"
            )
        pool_ids.append(pool.pk)
    return room.pk, tokens[:screens], pool_ids


@dataclass
class Published:
    seq: int
    kind: str
    at: float
    text: str


@dataclass
class Schedule:
    """When each event was handed on (seq -> time) and its text."""

    events: list[Published] = field(default_factory=list)
    measured_from: float = 0.0
    ticks: list[float] = field(default_factory=list)  # the publishing ticks' work (s): contributions + meters


def drive_product(room_id: int, pool_ids: list[int], warmup: float, seconds: float) -> Schedule:
    from django.db import transaction

    from halls import events
    from halls.eventtypes import BallDrawn, EventType
    from jackpots.services import contributions, screen_events
    from jackpots.sources import PoolSource

    schedule = Schedule()
    handed_on = events.publish

    def timed_publish(event: events.Event) -> None:
        at = time.time()
        handed_on(event)
        schedule.events.append(Published(event.seq, event.type, at, event.encode()))

    events.publish = timed_publish
    stream = f"room.{room_id}"
    screen_events.reset_poll_state()
    # The publisher keeps 0.25 s between the END of a publication and the next; ticking every 0.25 s
    # from their starts, a tick would now and then come too early and be skipped (about 3 a second):
    # the bench wants 4 a second, as the issue measured.
    screen_events.MIN_INTERVAL = 0.2
    ordinal = 0
    start = time.time()
    schedule.measured_from = start + warmup
    tick = 0
    while time.time() < start + warmup + seconds:
        began = time.monotonic()
        for pool_id in pool_ids:
            contributions.contribute(
                pool=pool_id,
                source=PoolSource.of("machine", "m1"),
                bet=Decimal("1.00"),
                idempotency_key=uuid.uuid4().hex,
                actor="bench",
            )
        screen_events.publish_meters()
        if tick % round(BALL_EVERY / METER_EVERY) == 0:
            ordinal = ordinal % 90 + 1
            data = BallDrawn(
                game=1,
                number=1,
                state="drawing",
                ordinal=ordinal,
                ball=ordinal,
                colour="red",
                source="rng",
                drawn_at=datetime(2026, 11, 23, 17, tzinfo=UTC),
            )
            with transaction.atomic():
                events.emit(stream, EventType.BALL_DRAWN, data)
        schedule.ticks.append(time.monotonic() - began)
        tick += 1
        time.sleep(max(0.0, start + tick * METER_EVERY - time.time()))
    events.publish = handed_on
    return schedule


def drive_bare(channel: str, texts: list[Published], warmup: float, seconds: float) -> Schedule:
    """The product's frames, renumbered, published at the same pace on the bare servers' channel."""
    import redis

    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    schedule = Schedule()
    start = time.time()
    schedule.measured_from = start + warmup
    for n, sample in enumerate(texts, start=1):
        due = start + (sample.at - texts[0].at)
        time.sleep(max(0.0, due - time.time()))
        text = sample.text.replace(f'"seq":{sample.seq},', f'"seq":{n},', 1)
        at = time.time()
        client.publish(channel, text)
        schedule.events.append(Published(n, sample.kind, at, text))
    return schedule


# --- a run -------------------------------------------------------------------------------------------------


@dataclass
class Result:
    deliveries: int
    lost: int
    p50_ms: float
    p99_ms: float
    max_ms: float
    cpu_s: float
    client_cpu_s: float
    window_s: float
    dead: int
    acked: int = 0  # acks the screens sent over the whole run (warm-up included)

    @property
    def cpu_us_per_delivery(self) -> float:
        return self.cpu_s / self.deliveries * 1e6 if self.deliveries else float("nan")


def start_clients(
    ports: list[int], paths: list[str], count: int, workdir: Path, tag: str, deflate: bool, acks: bool = False
) -> list[Any]:
    """CLIENTS processes holding the screens (screen i on port i % len(ports)); returns [(proc, out)]."""
    targets = [(ports[i % len(ports)], paths[i]) for i in range(len(paths))]
    procs = []
    for c in range(count):
        out = workdir / f"{tag}-clients-{c}.json"
        spec = {"targets": targets[c::count], "out": str(out), "deflate": deflate, "acks": acks}
        spec_path = workdir / f"{tag}-clients-{c}.spec.json"
        spec_path.write_text(json.dumps(spec))
        proc = subprocess.Popen(
            [PYTHON, __file__, "--client", str(spec_path)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            env=os.environ.copy(),
        )
        procs.append((proc, out))
    deadline = time.monotonic() + 120
    for proc, _ in procs:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        line = proc.stdout.readline().decode().split() if ready else []
        if not line or line[0] != "ready":
            stop_all([p for p, _ in procs])
            raise RuntimeError(f"a client process did not connect in time: {line}")
        if int(line[2]):
            print(f"  {line[2]} screens of a client process could not connect")
    return procs


def collect(
    procs: list[Any], schedule: Schedule, server_cpu: float, client_cpu: float, window: float
) -> Result:
    import numpy as np

    time.sleep(DRAIN)
    for proc, _ in procs:
        proc.send_signal(signal.SIGTERM)
    for proc, _ in procs:
        proc.wait(60)
    published = {e.seq: e.at for e in schedule.events if e.at >= schedule.measured_from}
    latencies: list[Any] = []
    lost = deliveries = dead = acked = 0
    for _, out in procs:
        for conn in json.loads(out.read_text())["conns"]:
            if conn is None:
                lost += len(published)
                dead += 1
                continue
            acked += conn.get("acked", 0)
            got = {s: t for s, t in zip(conn["seqs"], conn["times"], strict=True) if s in published}
            lost += len(published) - len(got)
            deliveries += len(got)
            dead += bool(conn["closed"])
            latencies.append(np.array([t - published[s] for s, t in got.items()]))
    lat = np.concatenate(latencies) * 1000 if latencies else np.array([float("nan")])
    return Result(
        deliveries=deliveries,
        lost=lost,
        p50_ms=float(np.percentile(lat, 50)),
        p99_ms=float(np.percentile(lat, 99)),
        max_ms=float(lat.max()),
        cpu_s=server_cpu,
        client_cpu_s=client_cpu,
        window_s=window,
        dead=dead,
        acked=acked,
    )


def measure(
    servers: list[subprocess.Popen[bytes]],
    ports: list[int],
    paths: list[str],
    args: argparse.Namespace,
    workdir: Path,
    tag: str,
    drive: Any,
) -> tuple[Result, Schedule]:
    """Connect the clients, drive, and measure the servers' CPU over the measured part of the drive."""
    for port in ports:
        wait_listening(port)
    t0 = time.monotonic()
    clients = start_clients(ports, paths, args.clients, workdir, tag, args.deflate, tag.endswith("acks"))
    print(f"  {len(paths)} screens connected in {time.monotonic() - t0:.1f} s")
    server_pids = server_processes(servers)
    client_pids = [p.pid for p, _ in clients]
    import threading

    marks: dict[str, float] = {}

    def mark_after_warmup() -> None:
        time.sleep(args.warmup)
        marks["t0"], marks["server0"], marks["client0"] = (
            time.time(),
            cpu_seconds(server_pids),
            cpu_seconds(client_pids),
        )

    timer = threading.Thread(target=mark_after_warmup, daemon=True)
    timer.start()
    try:
        schedule = drive()
        timer.join()
        window = time.time() - marks["t0"]
        server_cpu = cpu_seconds(server_pids) - marks["server0"]
        client_cpu = cpu_seconds(client_pids) - marks["client0"]
        return collect(clients, schedule, server_cpu, client_cpu, window), schedule
    finally:
        stop_all([proc for proc, _ in clients])


def server_processes(servers: list[subprocess.Popen[bytes]]) -> list[int]:
    """The servers' pids and their children's (gunicorn's workers)."""
    import psutil

    pids = []
    for proc in servers:
        pids.append(proc.pid)
        with contextlib.suppress(psutil.Error):
            pids += [child.pid for child in psutil.Process(proc.pid).children(recursive=True)]
    return pids


def start_gunicorn(port: int, workers: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """The web server as deploy/ runs it: gunicorn, `workers` HallUvicornWorker workers on one port."""
    cmd = [
        PYTHON, "-m", "gunicorn", "config.asgi:application", "-c", "config/gunicorn.py",
        "--worker-class", "config.web_worker.HallUvicornWorker", "--workers", str(workers),
        "--bind", f"127.0.0.1:{port}", "--graceful-timeout", "10", "--log-level", "warning",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**env, "HALL_DB_POOL": "16", "WEB_CONCURRENCY": str(workers)})
    wait_listening(port, timeout=120)
    time.sleep(3.0)  # every worker booted (the port answers from the first)
    return proc


def count_acks(room_id: int, since: float) -> int:
    from django.db import connection

    from halls.models import DisplayAck

    try:
        return DisplayAck.objects.filter(
            stream=f"room.{room_id}", received_at__gte=datetime.fromtimestamp(since, tz=UTC)
        ).count()
    finally:
        connection.close()


def measure_acks(
    args: argparse.Namespace,
    env: dict[str, str],
    room_id: int,
    pool_ids: list[int],
    paths: list[str],
    workdir: Path,
    product_ports: list[int],
    without: Result,
) -> dict[str, str]:
    """The product again, the screens acknowledging every event: the server CPU the acks add, per ack (the
    web processes' CPU over the same measured window, with acks minus without, over the acks received in it;
    the acks are written by the web processes themselves, halls.ack_batcher -> halls.services.acks; the
    database's own CPU is not counted), and how many of the acks sent were written."""
    started = time.time()
    servers = [subprocess.Popen([*UVICORN, "--port", str(port)], cwd=ROOT, env=env) for port in product_ports]
    try:
        result, _ = measure(
            servers,
            product_ports,
            paths,
            args,
            workdir,
            "product-acks",
            lambda: drive_product(room_id, pool_ids, args.warmup, args.seconds),
        )
    finally:
        stop_all(servers)  # the batchers' last writes are done or dropped by now
    report("product with acks", result, args.screens, args.processes)
    written = count_acks(room_id, started)
    acks_per_s = result.deliveries / result.window_s if result.window_s else 0.0
    extra_cores = result.cpu_s / result.window_s - without.cpu_s / without.window_s
    per_ack = extra_cores / acks_per_s * 1e6 if acks_per_s else float("nan")
    print(
        f"  acks: {acks_per_s:.0f}/s in the measured window ({result.acked} sent over the run, "
        f"{written} written); "
        f"server CPU {extra_cores:+.3f} cores over the run without acks = {per_ack:.1f} µs per ack"
    )
    return {
        "ack_per_s": f"{acks_per_s:.0f}",
        "acks_sent": str(result.acked),
        "acks_written": str(written),
        "ack_p99_ms": f"{result.p99_ms:.1f}",
        "ack_lost": str(result.lost),
        "cpu_us_per_ack": f"{per_ack:.1f}",
    }


def report(name: str, r: Result, screens: int, processes: int) -> None:
    rate = r.deliveries / r.window_s if r.window_s else 0.0
    print(
        f"  {name}: {r.deliveries} deliveries ({rate:.0f}/s), lost {r.lost}, closed sockets {r.dead}, "
        f"latency p50 {r.p50_ms:.1f} ms p99 {r.p99_ms:.1f} ms max {r.max_ms:.1f} ms; "
        f"server CPU {r.cpu_s / r.window_s:.2f} cores over {processes} processes = "
        f"{r.cpu_us_per_delivery:.1f} µs per delivery; clients {r.client_cpu_s / r.window_s:.2f} cores"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--screens", type=int, default=2000)
    parser.add_argument("--processes", type=int, default=2, help="web processes (and bare servers)")
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument("--pools", type=int, default=3, help="pools whose meters tick 4 times a second")
    parser.add_argument("--seconds", type=float, default=60.0, help="measured seconds of each side")
    parser.add_argument("--warmup", type=float, default=6.0)
    parser.add_argument("--port-base", type=int, default=0, help="first port (0: free ports)")
    parser.add_argument("--quick", action="store_true", help="300 screens, 4 + 12 s a side (under a minute)")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument(
        "--deflate",
        action="store_true",
        help="clients offer permessage-deflate, as browsers do (see the note)",
    )
    parser.add_argument(
        "--acks",
        action="store_true",
        help="a second product run, every screen acknowledging every event (issue 28): server CPU per ack",
    )
    parser.add_argument(
        "--gunicorn",
        action="store_true",
        help="the product through deploy's server: gunicorn with PROCESSES uvicorn workers on one port",
    )
    parser.add_argument("--client", help=argparse.SUPPRESS)
    parser.add_argument("--bare-server", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.client:
        use_uvloop()
        asyncio.run(run_clients(json.loads(Path(args.client).read_text())))
        return
    if args.bare_server:
        use_uvloop()
        asyncio.run(run_bare_server(int(args.bare_server[0]), args.bare_server[1]))
        return
    if args.quick:
        args.screens, args.seconds, args.warmup = min(args.screens, 300), min(args.seconds, 12.0), 4.0

    ensure_database(os.environ["DATABASE_URL"])
    prefix = f"benchscreens{uuid.uuid4().hex[:8]}"
    os.environ["CHANNEL_PREFIX"] = prefix  # the driver's layer and the web processes' share it
    env = {**os.environ, "CONN_MAX_AGE": "60", "HALL_LOG_LEVEL": "WARNING"}
    subprocess.run([PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    room_id, tokens, pool_ids = provision(args.screens, args.pools)
    from django.db import connection

    connection.close()
    paths = [f"/ws/screens/{token}/" for token in tokens]

    def ports(offset: int) -> list[int]:
        if args.port_base:
            return [args.port_base + offset + i for i in range(args.processes)]
        return [free_port() for _ in range(args.processes)]

    workdir = Path(tempfile.mkdtemp(prefix="bench-screens-"))
    print(
        f"{args.screens} screens on {args.processes} web processes, {args.clients} client processes, "
        f"{len(pool_ids)} pools, {args.warmup:.0f} s warm-up + {args.seconds:.0f} s measured "
        f"(work dir {workdir})"
    )
    print(f"load before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")

    product_ports = ports(0)
    if args.gunicorn:
        product_ports = product_ports[:1]
        servers = [start_gunicorn(product_ports[0], args.processes, env)]
    else:
        servers = [
            subprocess.Popen([*UVICORN, "--port", str(port)], cwd=ROOT, env=env) for port in product_ports
        ]
    try:
        product, schedule = measure(
            servers,
            product_ports,
            paths,
            args,
            workdir,
            "product",
            lambda: drive_product(room_id, pool_ids, args.warmup, args.seconds),
        )
    finally:
        stop_all(servers)
    sizes = [len(e.text) for e in schedule.events]
    kinds = {k: sum(e.kind == k for e in schedule.events) for k in sorted({e.kind for e in schedule.events})}
    print(f"  events published: {kinds}, {min(sizes)}-{max(sizes)} bytes")
    report("product", product, args.screens, args.processes)
    import numpy as np

    tick_p50, tick_p99 = (float(np.percentile(schedule.ticks, q)) * 1000 for q in (50, 99))
    print(f"  publishing tick (contributions + meters + ball): p50 {tick_p50:.0f} ms, p99 {tick_p99:.0f} ms")
    with_acks = None
    if args.acks:
        with_acks = measure_acks(args, env, room_id, pool_ids, paths, workdir, ports(0), product)

    baseline = None
    if not args.no_baseline:
        channel = f"{prefix}-bare"
        bare_ports = ports(args.processes)
        bare = [
            subprocess.Popen([PYTHON, __file__, "--bare-server", str(port), channel], cwd=ROOT, env=env)
            for port in bare_ports
        ]
        try:
            baseline, _ = measure(
                bare,
                bare_ports,
                paths,
                args,
                workdir,
                "bare",
                lambda: drive_bare(channel, schedule.events, args.warmup, args.seconds),
            )
        finally:
            stop_all(bare)
        report("bare websockets", baseline, args.screens, args.processes)

    print(f"load after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    per_screen = product.deliveries / product.window_s / args.screens if product.window_s else 0.0
    per_core = 1e6 / (product.cpu_us_per_delivery * per_screen) if per_screen else float("nan")
    print(
        f"  at {per_screen:.2f} events a second per screen, one web process at a full core would serve "
        f"about {per_core:.0f} screens (from the CPU per delivery)"
    )
    summary = (
        f"screens={args.screens} processes={args.processes} p50_ms={product.p50_ms:.1f} "
        f"p99_ms={product.p99_ms:.1f} lost={product.lost} "
        f"cpu_us_per_delivery={product.cpu_us_per_delivery:.1f}"
    )
    if baseline is not None:
        summary += (
            f" baseline_p50_ms={baseline.p50_ms:.1f} baseline_p99_ms={baseline.p99_ms:.1f}"
            f" baseline_lost={baseline.lost} baseline_cpu_us_per_delivery={baseline.cpu_us_per_delivery:.1f}"
        )
    summary += f" screens_per_core={per_core:.0f} tick_p50_ms={tick_p50:.0f} gunicorn={int(args.gunicorn)}"
    if with_acks is not None:
        summary += " " + " ".join(f"{k}={v}" for k, v in with_acks.items())
    print(summary)


if __name__ == "__main__":
    main()
