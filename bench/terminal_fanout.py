"""Benchmark: 2,000 player terminals on one host (issue 13, "Speed"), beside a bare `websockets` broadcast.

Not a test. On PostgreSQL and Redis it provisions one electronic speciality with TERMINALS terminals
(bingo.electronic.provisioning, through the services; new device tokens every run), starts PROCESSES uvicorn
web processes (config.asgi on the Redis channel layer, one port each) and connects every terminal's socket
(``ws/electronic/terminal/?device=…&token=…``, the terminal page's) from CLIENTS client processes (a
minimal asyncio WebSocket client, so the load generator stays light), spread over the web processes. Then,
for WARMUP + SECONDS, the driver (this process) runs the draw's publishing path: every BALL_EVERY seconds,
in one transaction, an ``egame.ball`` on the speciality's room stream and, for OWN of the terminals (a
random share each ball: those whose card won something), a ``terminal.prize`` and ``terminal.balance`` on
their own streams (``halls.events.emit_many``, as the draw step does). It records when each event is
handed to the channel layer (``halls.events.publish``, after commit) and every client records when each
frame arrives.

Recovery: DROP of the terminals close their socket once at a random moment and reconnect a second later;
on reconnect, on a gap in either stream's seq and on a head ahead of the last event, a client reloads its
terminal's snapshot over HTTP (the device API's ``snapshot``), as the page does. An event a terminal
missed is LOST unless a snapshot loaded after it covered its seq (RECOVERED).

In the same run, the same clients connect to PROCESSES bare `websockets` servers that relay the same ball
frames from a Redis pub/sub channel with `websockets.broadcast`, at the same pace: the baseline.

It reports ball -> terminal latency (publish -> arrival, p50/p99/max, every delivery after the warm-up) for
both, lost and recovered messages, the per-terminal messages (each terminal must get exactly the events
published on its own stream: none when nothing of it changed), and the server processes' CPU per delivery.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench_terminals REDIS_URL=redis://127.0.0.1:6379/6 \\
        flock /tmp/hall-bench.lock .venv/bin/python bench/terminal_fanout.py --terminals 2000 --seconds 60

``--quick``: 300 terminals, 4 s warm-up + 12 s a side. The last line is the summary:
``terminals=2000 processes=2 p50_ms=… p99_ms=… lost=0 recovered=… own_extra=0 baseline_p99_ms=… ratio=…``.
Target (issue 13): p99 within 2x of the baseline's, nothing lost, no per-terminal message for a terminal
that did not change.
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
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/hall_bench_terminals")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/6")

import screens as base  # noqa: E402  (bench/screens.py: processes, CPU, the bare server)

from bingo.electronic.simulator import PATHS, HttpConnection  # noqa: E402  (pure: no Django)
from halls.eventtypes import EventType  # noqa: E402

PYTHON = sys.executable
VENUE_LICENCE = "BENCH-TERMINALS"
DRAIN = 3.0
SNAPSHOTS_IN_FLIGHT = 24  # per client process (one per web process): HALL_WEB_MAX_REQUESTS
HEAD_GRACE = 1.0
RULES: dict[str, Any] = {
    "family": "electronic",
    "layout": "90",
    "card_price": "0.50",
    "purchase_sizes": [1, 2, 3, 6],
    "max_cards": 36,
    "pace_seconds": "1",
    "sale_seconds": 30,
    "prizes": [
        {"code": "linea", "name": "Línea", "type": "line", "percent": "10"},
        {"code": "bingo", "name": "Bingo", "type": "bingo", "percent": "50"},
    ],
}
HANDSHAKE = (
    "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
    "Origin: http://127.0.0.1:{port}\r\n\r\n"
)


# --- a terminal's socket (minimal RFC 6455 client: text frames, answers pings) ------------------------------


class TerminalSocket(asyncio.Protocol):
    """One connection: records (stream, seq, type, arrival) of every event and the heads."""

    def __init__(self, owner: TerminalClient, path: str, port: int) -> None:
        self.owner = owner
        self.request = HANDSHAKE.format(path=path, port=port).encode()
        self.buffer = bytearray()
        self.opened: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None
        self.closed = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.transport.write(self.request)

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
            elif opcode == 0x9 and self.transport is not None:  # ping: pong (masked, with a zero key)
                self.transport.write(bytes([0x8A, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)
            elif opcode == 0x8 and self.transport is not None:
                self.transport.close()


_gates: dict[int, asyncio.Semaphore] = {}


def snapshot_gate() -> asyncio.Semaphore:
    """Snapshots in flight from one client process at most: as many as a web process serves at once
    (config.http_limit); more would only wait in its event loop."""
    loop = id(asyncio.get_running_loop())
    if loop not in _gates:
        _gates[loop] = asyncio.Semaphore(SNAPSHOTS_IN_FLIGHT)
    return _gates[loop]


class TerminalClient:
    """A terminal: its socket (reconnected after a drop), the events it got, the snapshots it loaded."""

    def __init__(self, spec: dict[str, Any], port: int, path: str, http_base: str | None) -> None:
        self.spec, self.port, self.path = spec, port, path
        self.http = (
            HttpConnection(http_base, f"CashDevice {spec['device']}:{spec['token']}") if http_base else None
        )
        self.events: list[tuple[str, int, str, float]] = []  # stream, seq, type, arrival
        self.last: dict[str, int] = {}
        self.covered: dict[str, int] = {}  # stream -> highest seq a snapshot covered
        self.snapshots: list[float] = []
        self.snapshot_failures = 0
        self.socket: TerminalSocket | None = None
        self.drops: list[tuple[float, float]] = []  # (closed, reopened)
        self.loading = False
        self.heads = 0
        self.heads_ahead = 0  # heads still ahead after HEAD_GRACE: a snapshot each

    def on_text(self, payload: bytes, now: float) -> None:
        frame = json.loads(payload)
        stream, seq = frame.get("stream"), frame.get("seq")
        if frame.get("type") == "stream.head":
            self.heads += 1
            head = frame.get("head")
            if isinstance(head, int) and head > self.known(stream):
                # Read once committed, maybe before the event came through the layer: the snapshot only
                # if the event is still missing a second later (as the simulated terminals do).
                asyncio.get_running_loop().call_later(HEAD_GRACE, self._check_head, stream, head)
            return
        if not isinstance(seq, int):
            return
        self.events.append((stream, seq, str(frame.get("type")), now))
        last = max(self.last.get(stream, 0), self.covered.get(stream, 0))
        if last and seq > last + 1:
            self.reload()
        self.last[stream] = max(self.last.get(stream, 0), seq)

    def known(self, stream: str) -> int:
        return max(self.last.get(stream, 0), self.covered.get(stream, 0))

    def _check_head(self, stream: str, head: int) -> None:
        if head > self.known(stream) and not self.loading:  # a snapshot in flight covers it
            self.heads_ahead += 1
            self.reload()

    def reload(self) -> None:
        if self.http is None or self.loading:
            return
        self.loading = True
        asyncio.get_running_loop().create_task(self._load())

    async def _load(self) -> None:
        assert self.http is not None
        try:
            async with snapshot_gate():
                body = b"{}"  # no card inserted: the terminal's part of the snapshot
                status, data = await self.http.request("POST", PATHS["snapshot"], body)
            if status == 200 and isinstance(data, dict) and isinstance(data.get("seqs"), dict):
                for stream, seq in data["seqs"].items():
                    self.covered[stream] = max(self.covered.get(stream, 0), int(seq))
                self.snapshots.append(time.time())
            else:
                self.snapshot_failures += 1
        finally:
            self.loading = False

    async def connect(self, gate: asyncio.Semaphore) -> bool:
        loop = asyncio.get_running_loop()
        for _ in range(3):
            async with gate:
                try:
                    _, sock = await loop.create_connection(
                        lambda: TerminalSocket(self, self.path, self.port), "127.0.0.1", self.port
                    )
                    await asyncio.wait_for(sock.opened, 30)
                    self.socket = sock
                    self.reload()  # the page loads its snapshot once its socket is open
                    return True
                except (OSError, ConnectionError, TimeoutError):
                    await asyncio.sleep(0.5)
        return False

    async def drop_once(self, at: float, gate: asyncio.Semaphore) -> None:
        """Close the socket at `at` (epoch seconds), reconnect a second later and reload the snapshot."""
        await asyncio.sleep(max(0.0, at - time.time()))
        if self.socket is None or self.socket.transport is None:
            return
        closed = time.time()
        self.socket.transport.close()
        await asyncio.sleep(1.0)
        if await self.connect(gate):
            self.drops.append((closed, time.time()))

    def result(self) -> dict[str, Any]:
        return {
            "device": self.spec["device"],
            "own": self.spec.get("own"),
            "events": self.events,
            "covered": self.covered,
            "snapshots": self.snapshots,
            "snapshot_failures": self.snapshot_failures,
            "drops": self.drops,
            "heads": self.heads,
            "heads_ahead": self.heads_ahead,
            "alive": self.socket is not None and not self.socket.closed.done(),
        }


async def run_clients(spec: dict[str, Any]) -> None:
    """Connect every terminal of the spec, say "ready", drop the chosen ones once, listen until SIGTERM."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    gate = asyncio.Semaphore(50)
    clients = [TerminalClient(t, t["port"], t["path"], t.get("http")) for t in spec["terminals"]]
    t0 = time.monotonic()
    ok = await asyncio.gather(*(c.connect(gate) for c in clients))
    opened = time.monotonic() - t0
    while any(c.loading for c in clients):  # loaded before the drive starts: not in the measured window
        await asyncio.sleep(0.1)
    print(f"ready {sum(ok)} {len(ok) - sum(ok)} {opened:.1f} {time.monotonic() - t0:.1f}", flush=True)
    ready = time.time()
    drops = [
        loop.create_task(c.drop_once(ready + t["drop_after"], gate))
        for c, t in zip(clients, spec["terminals"], strict=True)
        if t.get("drop_after")
    ]
    await stop.wait()
    for task in drops:
        task.cancel()
    Path(spec["out"]).write_text(json.dumps({"terminals": [c.result() for c in clients]}))
    for c in clients:
        if c.socket is not None and c.socket.transport is not None:
            c.socket.transport.abort()


# --- provisioning and the product's publishing path ---------------------------------------------------------


def provision(count: int) -> tuple[int, list[dict[str, Any]]]:
    """The speciality's room and each terminal (device, new token, own stream); no player card (the page's
    socket and snapshot need none)."""
    from django.contrib.auth import get_user_model

    from bingo.electronic import provisioning
    from bingo.electronic.models import Speciality
    from bingo.electronic.services import specialities
    from halls.models import Jurisdiction, Role, Room, StaffRole, Venue

    venue, _ = Venue.objects.get_or_create(
        licence_number=VENUE_LICENCE, defaults={"name": "Bench terminals", "jurisdiction": Jurisdiction.AN10}
    )
    operator, _ = get_user_model().objects.get_or_create(username="bench-operator")
    StaffRole.objects.get_or_create(user=operator, venue=venue, role=Role.OPERATOR)
    room, _ = Room.objects.get_or_create(venue=venue, name="Sala electrónica bench")
    speciality = Speciality.objects.filter(room=room).first() or specialities.create_speciality(
        room=room, code="BENCH", name="Bench 90", rules=RULES, authorisation_ref="BENCH", actor=operator
    )
    names = [f"Bench T{i:05d}" for i in range(1, count + 1)]
    terminals = provisioning.ensure_terminals(speciality=speciality, names=names, actor=operator)
    profiles = provisioning.issue_credentials(
        terminals=terminals, cards_of=dict.fromkeys((t.pk for t in terminals), ""), actor=operator
    )
    out = [
        {"device": p.device_id, "token": p.token, "card": p.card_number, "terminal": t.pk, "own": t.stream}
        for p, t in zip(profiles, terminals, strict=True)
    ]
    return room.pk, out


@dataclass
class Published:
    stream: str
    seq: int
    kind: str
    at: float
    text: str


@dataclass
class Schedule:
    events: list[Published] = field(default_factory=list)
    measured_from: float = 0.0


def drive_product(room_id: int, terminals: list[dict[str, Any]], args: argparse.Namespace) -> Schedule:
    """A ball every BALL_EVERY s on the room stream, and for OWN of the terminals a prize and a balance on
    their own streams, in one transaction (the draw step's shape), through halls.events."""
    from django.db import transaction

    from halls import events
    from halls.eventtypes import EGameBall, EventType, TerminalBalance, TerminalPrize

    schedule = Schedule()
    handed_on = events.publish

    def timed_publish(event: events.Event) -> None:
        at = time.time()
        handed_on(event)
        schedule.events.append(Published(event.stream, event.seq, event.type, at, event.encode()))

    events.publish = timed_publish
    rng = random.Random(13)
    stream = f"room.{room_id}"
    start = time.time()
    schedule.measured_from = start + args.warmup
    tick = 0
    try:
        while time.time() < start + args.warmup + args.seconds:
            ordinal = tick % 90 + 1
            batch: list[tuple[str, EventType, Any]] = [
                (
                    stream,
                    EventType.EGAME_BALL,
                    EGameBall(
                        speciality=1,
                        game=1 + tick // 90,
                        number=1 + tick // 90,
                        state="drawing",
                        ordinal=ordinal,
                        ball=ordinal,
                        drawn_at=datetime.now(UTC),
                    ),
                )
            ]
            for t in rng.sample(terminals, round(len(terminals) * args.own)):
                balance = Decimal("21.50")
                batch.append(
                    (
                        t["own"],
                        EventType.TERMINAL_PRIZE,
                        TerminalPrize(
                            terminal=t["terminal"],
                            game=1 + tick // 90,
                            code="linea",
                            name="Línea",
                            ordinal=ordinal,
                            card=1,
                            amount=Decimal("1.50"),
                            balance=balance,
                        ),
                    )
                )
                batch.append(
                    (
                        t["own"],
                        EventType.TERMINAL_BALANCE,
                        TerminalBalance(terminal=t["terminal"], balance=balance),
                    )
                )
            with transaction.atomic():
                events.emit_many(batch)
            tick += 1
            time.sleep(max(0.0, start + tick * args.ball_every - time.time()))
    finally:
        events.publish = handed_on
    return schedule


def drive_bare(channel: str, balls: list[Published], warmup: float) -> Schedule:
    """The product's ball frames, renumbered, published at the same pace on the bare servers' channel."""
    import redis

    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    schedule = Schedule()
    start = time.time()
    schedule.measured_from = start + warmup
    for n, sample in enumerate(balls, start=1):
        time.sleep(max(0.0, start + (sample.at - balls[0].at) - time.time()))
        text = sample.text.replace(f'"seq":{sample.seq},', f'"seq":{n},', 1)
        at = time.time()
        client.publish(channel, text)
        schedule.events.append(Published(sample.stream, n, sample.kind, at, text))
    return schedule


# --- a run -------------------------------------------------------------------------------------------------


@dataclass
class Result:
    deliveries: int = 0  # ball frames delivered in the measured window
    latencies: list[float] = field(default_factory=list)
    lost: int = 0  # events a terminal never got nor had covered by a later snapshot
    recovered: int = 0  # events missed on the socket, covered by a snapshot
    own_expected: int = 0
    own_got: int = 0
    own_extra: int = 0  # own-stream frames a terminal got beyond what was published for it
    foreign: int = 0  # frames of another terminal's stream
    untouched_with_own: int = 0  # terminals that got an own frame though nothing was published for them
    snapshots: int = 0
    heads_ahead: int = 0  # heads still ahead of the last event after HEAD_GRACE
    snapshot_failures: int = 0
    drops: int = 0
    dead: int = 0
    cpu_s: float = 0.0
    window_s: float = 0.0

    def pct(self, q: float) -> float:
        import numpy as np

        return float(np.percentile(np.array(self.latencies) * 1000, q)) if self.latencies else float("nan")

    @property
    def cpu_us_per_delivery(self) -> float:
        return self.cpu_s / self.deliveries * 1e6 if self.deliveries else float("nan")


def start_clients(targets: list[dict[str, Any]], count: int, workdir: Path, tag: str) -> list[Any]:
    procs = []
    for c in range(count):
        out = workdir / f"{tag}-clients-{c}.json"
        spec_path = workdir / f"{tag}-clients-{c}.spec.json"
        spec_path.write_text(json.dumps({"terminals": targets[c::count], "out": str(out)}))
        proc = subprocess.Popen(
            [PYTHON, __file__, "--client", str(spec_path)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            env=os.environ.copy(),
        )
        procs.append((proc, out))
    deadline = time.monotonic() + 600  # connecting, then every terminal's first snapshot
    for proc, _ in procs:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        line = proc.stdout.readline().decode().split() if ready else []
        if not line or line[0] != "ready":
            base.stop_all([p for p, _ in procs])
            raise RuntimeError(f"a client process did not connect in time: {line}")
        if int(line[2]):
            print(f"  {line[2]} terminals of a client process could not connect")
        print(f"  a client process: its sockets open in {line[3]} s, their snapshots loaded in {line[4]} s")
    return procs


def collect(procs: list[Any], schedule: Schedule, product: bool) -> Result:
    time.sleep(DRAIN)
    for proc, _ in procs:
        proc.send_signal(signal.SIGTERM)
    for proc, _ in procs:
        proc.wait(60)
    measured = [e for e in schedule.events if e.at >= schedule.measured_from]
    balls = {(e.stream, e.seq): e.at for e in measured if e.kind == EventType.EGAME_BALL}
    own_by_stream: dict[str, set[int]] = {}  # every own-stream event published (warm-up included)
    for e in schedule.events:
        if e.stream.startswith("terminal."):
            own_by_stream.setdefault(e.stream, set()).add(e.seq)
    r = Result()
    for _, out in procs:
        for t in json.loads(out.read_text())["terminals"]:
            r.snapshots += len(t["snapshots"])
            r.heads_ahead += t.get("heads_ahead", 0)
            r.snapshot_failures += t["snapshot_failures"]
            r.drops += len(t["drops"])
            r.dead += not t["alive"]
            covered = {s: int(v) for s, v in t["covered"].items()}
            got: set[tuple[str, int]] = set()
            extra = 0
            for stream, seq, _kind, arrival in t["events"]:
                key = (stream, seq)
                if key in got:
                    continue
                got.add(key)
                if key in balls:
                    r.deliveries += 1
                    r.latencies.append(arrival - balls[key])
                if stream.startswith("terminal."):
                    if stream != t["own"]:
                        r.foreign += 1
                    elif seq not in own_by_stream.get(stream, ()):
                        extra += 1  # nothing was published for it under that seq
            wanted = list(balls)
            if product:
                mine = own_by_stream.get(t["own"], set())
                wanted += [(t["own"], s) for s in mine]
                r.own_expected += len(mine)
                got_own = sum(1 for s in mine if (t["own"], s) in got)
                r.own_got += got_own
                r.own_extra += extra
                if not mine and any(e[0] == t["own"] for e in t["events"]):
                    r.untouched_with_own += 1
            for key in wanted:
                if key in got:
                    continue
                if product and covered.get(key[0], 0) >= key[1]:
                    r.recovered += 1
                else:
                    r.lost += 1
    return r


def measure(
    servers: list[subprocess.Popen[bytes]],
    targets: list[dict[str, Any]],
    args: argparse.Namespace,
    workdir: Path,
    tag: str,
    drive: Any,
    product: bool,
) -> tuple[Result, Schedule]:
    for port in {t["port"] for t in targets}:
        base.wait_listening(port)
    t0 = time.monotonic()
    clients = start_clients(targets, args.clients, workdir, tag)
    print(f"  {len(targets)} terminals connected in {time.monotonic() - t0:.1f} s")
    server_pids = [p.pid for p in servers]
    marks: dict[str, float] = {}

    def mark_after_warmup() -> None:
        time.sleep(args.warmup)
        marks["t0"], marks["cpu0"] = time.time(), base.cpu_seconds(server_pids)

    timer = threading.Thread(target=mark_after_warmup, daemon=True)
    timer.start()
    try:
        schedule = drive()
        timer.join()
        window = time.time() - marks["t0"]
        cpu = base.cpu_seconds(server_pids) - marks["cpu0"]
        result = collect(clients, schedule, product)
        result.cpu_s, result.window_s = cpu, window
        return result, schedule
    finally:
        base.stop_all([proc for proc, _ in clients])


def report(name: str, r: Result, processes: int) -> None:
    print(
        f"  {name}: {r.deliveries} ball deliveries, latency p50 {r.pct(50):.1f} ms p99 {r.pct(99):.1f} ms "
        f"max {max(r.latencies, default=float('nan')) * 1000:.1f} ms; lost {r.lost}, recovered {r.recovered} "
        f"({r.drops} drops, {r.heads_ahead} heads ahead, {r.snapshots} snapshots, "
        f"{r.snapshot_failures} failed), closed {r.dead}; "
        f"server CPU {r.cpu_s / r.window_s if r.window_s else 0:.2f} cores over {processes} processes = "
        f"{r.cpu_us_per_delivery:.1f} µs per ball delivery"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--terminals", type=int, default=2000)
    parser.add_argument("--processes", type=int, default=2, help="web processes (and bare servers)")
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument("--seconds", type=float, default=60.0, help="measured seconds of each side")
    parser.add_argument("--warmup", type=float, default=6.0)
    parser.add_argument("--ball-every", type=float, default=1.0, help="seconds between balls")
    parser.add_argument(
        "--own", type=float, default=0.01, help="share of terminals told something (a prize) per ball"
    )
    parser.add_argument("--drop", type=float, default=0.02, help="share of terminals that drop once")
    parser.add_argument("--quick", action="store_true", help="300 terminals, 4 + 12 s a side")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--client", help=argparse.SUPPRESS)
    parser.add_argument("--bare-server", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    # Progress lines as they come, also into a file.
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]

    if args.client:
        base.use_uvloop()
        asyncio.run(run_clients(json.loads(Path(args.client).read_text())))
        return
    if args.bare_server:
        base.use_uvloop()
        asyncio.run(base.run_bare_server(int(args.bare_server[0]), args.bare_server[1]))
        return
    if args.quick:
        args.terminals, args.seconds, args.warmup = min(args.terminals, 300), min(args.seconds, 12.0), 4.0

    base.ensure_database(os.environ["DATABASE_URL"])
    prefix = f"benchterm{uuid.uuid4().hex[:8]}"
    os.environ["CHANNEL_PREFIX"] = prefix
    env = {**os.environ, "CONN_MAX_AGE": "0", "HALL_LOG_LEVEL": "WARNING"}  # as deploy/ runs the web
    subprocess.run([PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    t0 = time.monotonic()
    room_id, terminals = provision(args.terminals)
    from django.db import connection

    connection.close()
    print(f"provisioned {len(terminals)} terminals in {time.monotonic() - t0:.1f} s")
    workdir = Path(tempfile.mkdtemp(prefix="bench-terminals-"))
    print(
        f"{args.terminals} terminals on {args.processes} web processes, {args.clients} client processes, "
        f"a ball every {args.ball_every} s, {args.own:.0%} told something per ball, "
        f"{args.drop:.0%} drop once, "
        f"{args.warmup:.0f} s warm-up + {args.seconds:.0f} s measured (work dir {workdir})"
    )
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rng = random.Random(7)

    def targets(ports: list[int], product: bool) -> list[dict[str, Any]]:
        out = []
        for i, t in enumerate(terminals):
            port = ports[i % len(ports)]
            path = f"/ws/electronic/terminal/?device={t['device']}&token={t['token']}" if product else "/"
            drop_after = 0.0  # seconds after the clients are ready (the drive starts then)
            if product and rng.random() < args.drop:
                drop_after = args.warmup + rng.uniform(0, args.seconds * 0.8)
            out.append(
                {
                    **t,
                    "port": port,
                    "path": path,
                    "http": f"http://127.0.0.1:{port}" if product else None,
                    "drop_after": drop_after,
                }
            )
        return out

    product_ports = [base.free_port() for _ in range(args.processes)]
    servers = [subprocess.Popen([*base.UVICORN, "--port", str(p)], cwd=ROOT, env=env) for p in product_ports]
    try:
        product, schedule = measure(
            servers,
            targets(product_ports, True),
            args,
            workdir,
            "product",
            lambda: drive_product(room_id, terminals, args),
            True,
        )
    finally:
        base.stop_all(servers)
    kinds = {k: sum(e.kind == k for e in schedule.events) for k in sorted({e.kind for e in schedule.events})}
    print(f"  events published: {kinds}")
    report("product", product, args.processes)
    print(
        f"  per-terminal messages: expected {product.own_expected}, got {product.own_got}, extra "
        f"{product.own_extra}, another terminal's {product.foreign}, untouched terminals that got one "
        f"{product.untouched_with_own}"
    )
    baseline = None
    if not args.no_baseline:
        channel = f"{prefix}-bare"
        bare_ports = [base.free_port() for _ in range(args.processes)]
        bare = [
            subprocess.Popen([PYTHON, __file__, "--bare-server", str(p), channel], cwd=ROOT, env=env)
            for p in bare_ports
        ]
        balls = [e for e in schedule.events if e.kind == EventType.EGAME_BALL]
        try:
            baseline, _ = measure(
                bare,
                targets(bare_ports, False),
                args,
                workdir,
                "bare",
                lambda: drive_bare(channel, balls, args.warmup),
                False,
            )
        finally:
            base.stop_all(bare)
        report("bare websockets", baseline, args.processes)
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    summary = (
        f"terminals={args.terminals} processes={args.processes} p50_ms={product.pct(50):.1f} "
        f"p99_ms={product.pct(99):.1f} lost={product.lost} recovered={product.recovered} "
        f"own_extra={product.own_extra} foreign={product.foreign} "
        f"cpu_us_per_delivery={product.cpu_us_per_delivery:.1f}"
    )
    if baseline is not None:
        summary += (
            f" baseline_p50_ms={baseline.pct(50):.1f} baseline_p99_ms={baseline.pct(99):.1f}"
            f" baseline_lost={baseline.lost} ratio={product.pct(99) / baseline.pct(99):.2f}"
        )
    print(summary)


if __name__ == "__main__":
    main()
