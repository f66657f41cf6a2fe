"""Benchmark: the RNG draw step through a real Celery worker, and each ball on a real screen (issue 9).

Not a test. On PostgreSQL (``DATABASE_URL``; ``--fresh`` drops and recreates that database) and Redis
(``REDIS_URL``, a database number of its own: the bench purges its ``draws`` and ``celery`` queues) it
makes a venue with one room per game, sells CARDS cards in each game (series made by the series service,
then sold in bulk: one SaleOperation per series and the SoldCard rows by bulk_create, like
``sales.sell_range`` writes them but without its per-range checks, which take minutes at 100,000 cards),
closes the sales through the service, and starts:

- a Celery worker as in production (``celery -A config worker -Q draws,celery --pool=prefork -c 2 -O fair``;
  ``--pool solo`` for one process), through this module's app: the product's app plus timing signals;
- a uvicorn process serving ``config.asgi`` and one WebSocket screen client per game, on the room's screen.

Then, in the same run:

1. the baseline: a bare Celery chain on the same worker and queue, each step a trivial task whose only work
   is to enqueue the next step with the draw's countdown (what a draw step costs with nothing to do);
2. the draw: ``games.start_draw`` and the real ``draw_next_ball`` chain at ``--pace`` seconds a ball.

Measured in the worker (task_prerun → task_postrun, including the fixup's connection handling): each task's
duration, and its lateness (start - due, due being the ETA the countdown gave it). Measured at the screen:
ball due (the ETA of the task that draws it) → the event received by the WebSocket client. Per-ball winner
detection, when the draw step records it, is inside the task and so inside these figures. Nobody claims,
so each game draws all 90 balls; the duration is also given for the steps up to the first ball that
completes a sold card (where a played game ends with its Bingo), from the cards' packed numbers.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench_draw REDIS_URL=redis://127.0.0.1:6379/7 \\
        flock /tmp/hall-bench.lock .venv/bin/python bench/draw_step.py [--quick] [--cards N] [--games G] \\
        [--verifiable on|off|both] [--ports 8700-8799]

With ``--verifiable both`` (the default) it makes G games with the draw committed (HALL_VERIFIABLE_DRAWS on:
each ball the seed's, bingo.draws) and G without, alternating, and compares their draw steps. The screen of
a committed game acknowledges every ball it shows (issue 28: its seq, time and digest, halls.acks), as a hall
screen does, so "on" is the draw with commitment and acknowledgements on; the other screen sends nothing.

Targets (issue 9): task p99 <= 50 ms; ball due -> screen p99 <= 250 ms. The last line is the summary:
``cards=… task_p50_ms=… task_p99_ms=… due_to_screen_p99_ms=… baseline_chain_p99_ms=…`` where the baseline
figure is the chain step's due → done p99 (lateness + duration), the floor a step on this worker pays.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

PYTHON = sys.executable
QUEUES = ("draws", "celery")
PORTS = range(8700, 8800)
TIMINGS_ENV = "DRAW_BENCH_TIMINGS"
CHAIN_TASK = "bench.draw_step.chain_step"
DRAW_TASK = "bingo.traditional.tasks.draw_next_ball"
WARMUP_BALLS = 8
CARDS_PER_SERIES = 6000  # bingo.traditional.services.series.MAX_STRIPS strips of 6


# --- worker side: imported by the worker as ``-A draw_step`` ----------------------------------------------
# The product's Celery app with its settings and tasks, plus the baseline task and timing signals. In the
# bench's own process these signals never fire (it runs no task).

from celery import signals  # noqa: E402

from config.celery import app  # noqa: E402
from halls import acks  # noqa: E402
from halls.eventtypes import EventType  # noqa: E402


@app.task(name=CHAIN_TASK, ignore_result=True)
def chain_step(step: int, last: int, pace: float) -> int:
    """The baseline step: nothing but enqueue the next one, with the countdown the draw uses."""
    if step < last:
        chain_step.apply_async(args=(step + 1, last, pace), countdown=pace, queue="draws")
    return step


_started: dict[str, tuple[float, float, float]] = {}


@signals.task_prerun.connect
def _task_started(task_id: str, **kwargs: Any) -> None:
    _started[task_id] = (time.time(), time.perf_counter(), time.process_time())


@signals.worker_init.connect
def _watch_task_ends(**kwargs: Any) -> None:
    # Connected here, after the Django fixup connected its own: the duration includes its postrun work.
    signals.task_postrun.connect(_task_ended, weak=False)


def _task_ended(task_id: str, task: Any, args: Any = (), retval: Any = None, **kwargs: Any) -> None:
    ended, cpu = time.perf_counter(), time.process_time()
    wall, began, cpu_began = _started.pop(task_id, (time.time(), ended, cpu))
    directory = os.environ.get(TIMINGS_ENV)
    if not directory:
        return
    eta = task.request.eta
    row = {
        "task": task.name,
        "args": list(args or ()),
        "retval": retval if isinstance(retval, int | None) else str(retval),
        "due": datetime.fromisoformat(eta).timestamp() if isinstance(eta, str) else None,
        "start": wall,
        "ms": (ended - began) * 1000,
        "cpu_ms": (cpu - cpu_began) * 1000,  # the worker process's CPU (all its threads) during the task
        "pid": os.getpid(),
    }
    with open(Path(directory) / f"timings-{os.getpid()}.jsonl", "a") as out:
        out.write(json.dumps(row) + "\n")


# --- bench side -------------------------------------------------------------------------------------------


def ensure_database(url: str, *, fresh: bool) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1].split("?")[0]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if fresh:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def load() -> str:
    one, five, fifteen = Path("/proc/loadavg").read_text().split()[:3]
    return f"{one}/{five}/{fifteen}"


def free_port(ports: range = PORTS) -> int:
    for port in ports:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {ports.start}-{ports.stop - 1}")


@dataclass
class Hall:
    games: list[int]  # measured, one after another
    verifiable: dict[int, bool]  # game id -> drawn from a committed seed (bingo.draws) or with `secrets`
    warmups: list[
        int
    ]  # drawn for a few balls first (one game per mode), so no measured step is a worker's first
    screens: dict[int, str]  # game id -> its room's screen token


def build_hall(run: str, cards: int, games: int, pace: Decimal, modes: list[bool]) -> Hall:
    """A venue with one room per game, each game with ``cards`` cards sold and its sales closed; with two
    modes, ``games`` games of each, alternating (commitment on, off, on, ...)."""
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.db import connection

    from bingo.traditional.services import series as series_services
    from halls.models import Jurisdiction, Venue

    venue = Venue.objects.create(
        name=f"Bench draw {run}",
        licence_number=f"BENCH-DRAW-{run}",
        jurisdiction=Jurisdiction.ML,
        line_percent=Decimal("10"),
        bingo_percent=Decimal("50"),
    )
    actor = User.objects.create_user(f"bench-draw-{run}")
    ball_set = series_services.create_ball_set(venue=venue, name="Bench", actor=actor)
    hall = Hall(games=[], verifiable={}, warmups=[], screens={})
    for mode in modes:  # a warm-up game per mode: each path's first use is paid before the measured games
        settings.HALL_VERIFIABLE_DRAWS = mode
        # Full size: a worker process's first detector over `cards` cards grows its heap (~70 ms of CPU
        # once); with a small warm-up, the first measured game (always "on") paid it.
        warmup, _ = make_game(
            venue, f"Calentamiento {len(hall.warmups) + 1}", cards, Decimal("0.1"), ball_set, actor, hall
        )
        hall.warmups.append(warmup)
    for _ in range(games):
        for mode in modes:
            # Read when the game is created: on, its seed is committed and its balls are the seed's.
            settings.HALL_VERIFIABLE_DRAWS = mode
            number = len(hall.games) + 1
            game_id, timings = make_game(venue, f"Sala {number}", cards, pace, ball_set, actor, hall)
            hall.games.append(game_id)
            hall.verifiable[game_id] = mode
            print(
                f"game {game_id} (commitment {'on' if mode else 'off'}): {cards:,} cards; series made in "
                f"{timings[0]:.1f} s, sold (in bulk) in {timings[1]:.1f} s, "
                f"sales closed in {timings[2]:.1f} s",
                flush=True,
            )
    connection.close()
    return hall


def make_game(
    venue: Any, name: str, cards: int, pace: Decimal, ball_set: Any, actor: Any, hall: Hall
) -> tuple[int, tuple[float, float, float]]:
    from bingo.traditional.models import DrawSource
    from bingo.traditional.services import games as game_services
    from bingo.traditional.services import series as series_services
    from halls.models import Room, Screen
    from halls.services import sessions

    room = Room.objects.create(venue=venue, name=name, ball_pace_seconds=pace)
    screen = Screen.objects.create(venue=venue, room=room, name="Pantalla")
    sessions.open_session(
        room=room, actor=actor, blower_ok=True, reserve_ok=True, reader_ok=True,
        inspection_balls=list(range(1, 91)),
    )  # fmt: skip
    game = game_services.create_game(
        room=room, actor=actor, draw_source=DrawSource.RNG, pace_seconds=pace, ball_set=ball_set
    )
    game_services.open_sales(game=game, actor=actor)
    t0 = time.perf_counter()
    series: list[Any] = []
    left = cards
    while left > 0:
        size = min(left, CARDS_PER_SERIES)
        series.append(
            series_services.create_series(
                venue=venue, code=f"R{room.pk}S{len(series) + 1}", face_value=Decimal("1.00"),
                strips=math.ceil(size / 6), actor=actor,
            )
        )  # fmt: skip
        left -= size
    t1 = time.perf_counter()
    sell_in_bulk(game, series, cards, actor)
    t2 = time.perf_counter()
    game_services.close_sales(game=game, actor=actor)
    t3 = time.perf_counter()
    hall.screens[game.pk] = screen.token
    return game.pk, (t1 - t0, t2 - t1, t3 - t2)


def sell_in_bulk(game: Any, series: list[Any], cards: int, actor: Any) -> None:
    """Sell the first ``cards`` cards of the series: the rows sales.sell_range writes, in bulk."""
    from django.db import transaction
    from django.utils import timezone

    from bingo.traditional.models import Card, SaleKind, SaleOperation, SoldCard
    from bingo.traditional.services.readmodels import sales_totals
    from bingo.traditional.services.steps import record, step
    from halls.eventtypes import EventType, SalesChanged

    left = cards
    with transaction.atomic():
        for s in series:
            last = min(left, s.card_count)
            left -= last
            operation = SaleOperation.objects.create(
                game=game, series=s, kind=SaleKind.SELL, first_serial=1, last_serial=last, cards=last,
                amount=s.face_value * last, cashier=actor, created_at=timezone.now(),
            )  # fmt: skip
            rows = Card.objects.filter(series=s, serial__lte=last).values_list("pk", "key")
            SoldCard.objects.bulk_create(
                (SoldCard(game=game, card_id=pk, card_key=key, sale=operation) for pk, key in rows),
                batch_size=5000,
            )
        totals = sales_totals(game)
        shown = SalesChanged(
            **step(game), series=s.code, first=1, last=last, cards=last, amount=operation.amount, **totals
        )  # the screens hear of the last series' operation
        record(game, actor, EventType.SALES_SOLD, {"bench": "bulk", **totals}, shown)


class Processes:
    """The worker and the web server, each logging to a file; all stopped at the end."""

    def __init__(self, logdir: Path, env: dict[str, str]) -> None:
        self.logdir = logdir
        self.env = env
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, cmd: list[str]) -> subprocess.Popen[bytes]:
        with (self.logdir / f"{name}.log").open("wb") as out:
            proc = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT)
        self.procs[name] = proc
        return proc

    def log(self, name: str) -> str:
        path = self.logdir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def wait_for(self, name: str, ready: Any, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.procs[name].poll() is not None:
                raise RuntimeError(f"{name} exited:\n{self.log(name)[-3000:]}")
            if ready():
                return
            time.sleep(0.1)
        raise RuntimeError(f"{name} not ready after {timeout:.0f} s:\n{self.log(name)[-3000:]}")

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


def port_open(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


class Screen:
    """A WebSocket screen client in its own thread: the time each ``ball.drawn`` event arrived."""

    def __init__(self, url: str, *, acks: bool = False) -> None:
        self.url = url
        self.acks = acks  # acknowledge each ball shown, as a hall screen does (halls/static/halls/ack.js)
        self.acked = 0
        self.received: dict[int, float] = {}  # ordinal -> time.time() on arrival
        self.events = 0
        self.connected = threading.Event()
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self.thread.start()

    async def _run(self) -> None:
        import websockets

        try:
            async with websockets.connect(self.url, max_size=None) as ws:
                self.connected.set()
                while not self.stop.is_set():
                    try:
                        text = await asyncio.wait_for(ws.recv(), 0.2)
                    except TimeoutError:
                        continue
                    arrived = time.time()
                    message = json.loads(text)
                    for event in message if isinstance(message, list) else [message]:
                        self.events += 1
                        if isinstance(event, dict) and event.get("type") == EventType.BALL_DRAWN:
                            self.received.setdefault(int(event["data"]["ordinal"]), arrived)
                            if self.acks and event.get("seq"):
                                await ws.send(json.dumps(self._ack(event, arrived)))
                                self.acked += 1
        except BaseException as exc:  # reported by the bench, which then fails
            self.error = exc
            self.connected.set()

    @staticmethod
    def _ack(event: dict[str, Any], shown: float) -> dict[str, Any]:
        game, ball = int(event["data"]["game"]), int(event["data"]["ball"])
        return {
            "type": "ack",
            "seq": int(event["seq"]),
            "at": int(shown * 1000),
            "hash": acks.ball_digest(EventType.BALL_DRAWN, game, ball),
            "frame": EventType.BALL_DRAWN,
            "game": game,
            "balls": [ball],
        }

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)


def read_timings(directory: Path) -> list[dict[str, Any]]:
    rows = []
    for path in directory.glob("timings-*.jsonl"):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def first_bingo(game_id: int) -> int:
    """The ordinal of the first ball that completes a sold card: where a played game ends (its Bingo)."""
    import numpy as np

    from bingo.traditional.models import Ball, Card

    order = np.full(91, 99, dtype=np.int16)  # number -> the ordinal it was drawn at (99: not drawn)
    for ordinal, number in Ball.objects.filter(game_id=game_id).values_list("ordinal", "number"):
        order[number] = ordinal
    packed = Card.objects.filter(sale__game_id=game_id).values_list("numbers", flat=True).iterator(10_000)
    cards = np.frombuffer(b"".join(bytes(n) for n in packed), dtype=np.uint8).reshape(-1, 15)
    return int(order[cards].max(axis=1).min())


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def describe(label: str, values: list[float]) -> str:
    if not values:
        return f"{label:<34} (none)"
    return (
        f"{label:<34} n={len(values):<4} p50 {percentile(values, 50):7.1f}  p90 {percentile(values, 90):7.1f}"
        f"  p99 {percentile(values, 99):7.1f}  max {max(values):7.1f} ms"
    )


def wait_until(condition: Any, timeout: float, idle: Any = None) -> bool:
    """Poll ``condition``; give up after ``timeout`` s, or after 10 s with no progress by ``idle()``."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        if condition():
            return True
        if idle is not None:
            now = idle()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since > 10:
                return False
        time.sleep(0.05)
    return False


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cards", type=int, default=100_000, help="cards sold in each game")
    parser.add_argument("--games", type=int, default=1, help="games drawn one after another (90 balls each)")
    parser.add_argument("--pace", type=float, default=0.25, help="seconds between balls")
    parser.add_argument("--steps", type=int, default=90, help="baseline chain steps")
    parser.add_argument("--pool", choices=("prefork", "solo"), default="prefork")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="10,000 cards, balls and steps at 0.15 s")
    parser.add_argument("--fresh", action="store_true", help="drop and recreate the database first")
    parser.add_argument("--keep-logs", action="store_true")
    parser.add_argument(
        "--verifiable",
        choices=("on", "off", "both"),
        default="both",
        help="draw from a committed seed (HALL_VERIFIABLE_DRAWS, issue 28), with `secrets`, or both in the "
        "same run (games alternating; the summary compares them)",
    )
    parser.add_argument("--ports", default="8700-8799", help="the web server's port range, first-last")
    args = parser.parse_args()
    modes = {"on": [True], "off": [False], "both": [True, False]}[args.verifiable]
    low, high = (int(p) for p in args.ports.split("-"))
    balls = 90  # a game with nobody claiming draws all 90
    if args.quick:
        args.cards, args.pace, args.steps = 10_000, 0.15, 90
    database_url = os.environ.get("DATABASE_URL")
    redis_url = os.environ.get("REDIS_URL")
    if not database_url or not redis_url:
        print("set DATABASE_URL (PostgreSQL) and REDIS_URL (a Redis database of the bench's own)")
        return 2
    print(f"load before: {load()}", flush=True)

    ensure_database(database_url, fresh=args.fresh)
    import django

    django.setup()
    from django.core.management import call_command
    from kombu import Queue

    from bingo.traditional.models import Ball
    from bingo.traditional.services import games as game_services

    call_command("migrate", verbosity=0)
    run = uuid.uuid4().hex[:8]
    t0 = time.perf_counter()
    hall = build_hall(run, args.cards, args.games, Decimal(str(args.pace)), modes)
    print(f"hall ready in {time.perf_counter() - t0:.1f} s", flush=True)

    with app.connection_for_write() as conn:
        for queue in QUEUES:
            Queue(queue)(conn.default_channel).purge()

    logdir = Path(tempfile.mkdtemp(prefix="draw-step-bench-"))
    timings = logdir / "timings"
    timings.mkdir()
    port = free_port(range(low, high + 1))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "bench"), str(ROOT)]),
        "PYTHONUNBUFFERED": "1",
        TIMINGS_ENV: str(timings),
        # The bench's events stay off the channel groups of anything else on this Redis.
        "CHANNEL_PREFIX": f"bench-draw-{run}",
        # The web process takes its connections from a pool, as production's web unit does
        # (hall-web.service, HALL_DB_POOL=16): without it the screens' ack writer opens a connection per
        # batch (every 250 ms, ~5 ms of the server's CPU) on the draw's two cores. The worker drops the pool.
        "HALL_DB_POOL": os.environ.get("HALL_DB_POOL", "16"),
    }
    procs = Processes(logdir, env)
    print(f"worker and web logs in {logdir}", flush=True)
    try:
        procs.start(
            "worker",
            [
                PYTHON, "-m", "celery", "-A", "draw_step", "worker", "-Q", ",".join(QUEUES),
                f"--pool={args.pool}", "-c", str(args.concurrency), "-O", "fair", "-l", "info",
                "-n", f"bench-draw-{run}@%h", "--without-mingle", "--without-gossip", "--without-heartbeat",
            ],
        )  # fmt: skip
        procs.start(
            "web",
            [
                PYTHON, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1",
                "--port", str(port), "--no-access-log", "--log-level", "warning",
            ],
        )  # fmt: skip
        procs.wait_for("worker", lambda: " ready." in procs.log("worker"))
        procs.wait_for("web", lambda: port_open(port))

        # 0. Warm-up: a few balls of a small game per mode, drawn together (both pool processes take steps
        # of both), so that no measured step is a worker process's first of its kind.
        from bingo.traditional.models import Game

        for warmup in hall.warmups:
            game_services.start_draw(game=Game.objects.get(pk=warmup), actor="bench")

        def warm_steps() -> int:
            return sum(1 for r in read_timings(timings) if r["task"] == DRAW_TASK)

        wait_until(lambda: warm_steps() >= WARMUP_BALLS * len(hall.warmups), 60, warm_steps)
        for warmup in hall.warmups:
            game_services.void_game(game=Game.objects.get(pk=warmup), actor="bench", reason="warm-up over")
        time.sleep(0.5)  # the steps already enqueued find their games void and do nothing
        cold = sorted((r for r in read_timings(timings) if r["task"] == DRAW_TASK), key=lambda r: r["start"])
        print(
            "warm-up: first draw steps of the fresh worker took "
            + ", ".join(f"{r['ms']:.0f}" for r in cold[:4])
            + " ms (not counted below)",
            flush=True,
        )

        # 1. The baseline chain on the same worker and queue.
        print(f"baseline: a chain of {args.steps} trivial steps at {args.pace} s", flush=True)
        chain_step.apply_async(args=(1, args.steps, args.pace), countdown=1.0, queue="draws")

        def chain_done() -> int:
            return sum(1 for r in read_timings(timings) if r["task"] == CHAIN_TASK)

        wait_until(lambda: chain_done() >= args.steps, args.steps * args.pace + 60, chain_done)

        # 2. The draw, one game after another, each watched by its room's screen.
        screen_ms: list[float] = []
        drawn_total = 0
        # Nobody claims here, so every game draws all 90 balls; a played game ends at its first Bingo.
        bingo_at: dict[int, int] = {}
        for game_id in hall.games:
            url = f"ws://127.0.0.1:{port}/ws/screens/{hall.screens[game_id]}/"
            screen = Screen(url, acks=hall.verifiable[game_id])
            screen.connected.wait(15)
            if screen.error is not None:
                raise RuntimeError(f"screen could not connect: {screen.error!r}\n{procs.log('web')[-2000:]}")
            # A hall's screens are on before its draw starts: the screen's snapshot (and, on, its ack of the
            # snapshot, written by the web process) is not inside ball 1's window.
            time.sleep(1.0)
            game_services.start_draw(game=Game.objects.get(pk=game_id), actor="bench")
            print(f"game {game_id}: drawing {balls} balls at {args.pace} s", flush=True)
            wait_until(
                lambda s=screen: len(s.received) >= balls,
                balls * args.pace + 120,
                lambda s=screen: len(s.received),
            )
            time.sleep(1.0)  # the last events in flight
            screen.close()
            steps = {
                r["args"][1]: r
                for r in read_timings(timings)
                if r["task"] == DRAW_TASK and r["args"][0] == game_id and r["retval"] is not None
            }
            drawn = Ball.objects.filter(game_id=game_id).count()
            bingo_at[game_id] = first_bingo(game_id)
            drawn_total += drawn
            missing = [o for o in steps if o not in screen.received]
            for ordinal, arrived in screen.received.items():
                row = steps.get(ordinal)
                if row is not None and row["due"] is not None:
                    screen_ms.append((arrived - row["due"]) * 1000)
            print(
                f"game {game_id}: {drawn} balls drawn, {len(steps)} steps timed, {len(screen.received)} seen "
                f"on the screen ({screen.events} events, {screen.acked} acked), {len(missing)} not seen; "
                f"first Bingo at ball {bingo_at[game_id]}",
                flush=True,
            )
    finally:
        procs.stop_all()
    print(f"load after: {load()}", flush=True)

    rows = read_timings(timings)
    chain = [r for r in rows if r["task"] == CHAIN_TASK]
    draws = [
        r for r in rows if r["task"] == DRAW_TASK and r["args"][0] in hall.games and r["retval"] is not None
    ]
    chain_done_ms = [(r["start"] - r["due"]) * 1000 + r["ms"] for r in chain if r["due"] is not None]
    print(describe("baseline chain step duration", [r["ms"] for r in chain]))
    print(describe("baseline chain step CPU", [r["cpu_ms"] for r in chain]))
    chain_late = [(r["start"] - r["due"]) * 1000 for r in chain if r["due"]]
    print(describe("baseline chain step lateness", chain_late))
    print(describe("baseline chain step due -> done", chain_done_ms))
    print(describe("draw task duration", [r["ms"] for r in draws]))
    print(describe("draw task CPU (worker process)", [r["cpu_ms"] for r in draws]))
    print(describe("draw task lateness", [(r["start"] - r["due"]) * 1000 for r in draws if r["due"]]))
    print(describe("draw ball due -> screen", screen_ms))
    task_ms = [r["ms"] for r in draws]
    played = [r["ms"] for r in draws if r["args"][1] <= bingo_at.get(r["args"][0], 90)]
    print(describe("draw task duration, to the Bingo", played))
    # Commitment on against off (issue 28: within 10 %), same worker, same run, games alternating.
    by_mode = {
        mode: [r["ms"] for r in draws if hall.verifiable[r["args"][0]] == mode] for mode in (True, False)
    }
    cpu_by_mode = {
        mode: [r["cpu_ms"] for r in draws if hall.verifiable[r["args"][0]] == mode] for mode in (True, False)
    }
    for mode, label in ((True, "on"), (False, "off")):
        print(describe(f"draw task duration, commitment {label}", by_mode[mode]))
        print(describe(f"draw task CPU, commitment {label}", cpu_by_mode[mode]))
    for mode, label in ((True, "on"), (False, "off")):
        slowest = sorted(
            (r for r in draws if hall.verifiable[r["args"][0]] == mode), key=lambda r: r["ms"], reverse=True
        )[:4]
        print(
            f"slowest steps, commitment {label}: "
            + ", ".join(
                f"game {r['args'][0]} ball {r['args'][1]} {r['ms']:.1f} ms (CPU {r['cpu_ms']:.1f})"
                for r in slowest
            )
        )
    for game_id in hall.games:
        own = [r for r in draws if r["args"][0] == game_id]
        if own:
            own_ms, own_cpu = [r["ms"] for r in own], [r["cpu_ms"] for r in own]
            print(
                f"game {game_id} (commitment {'on' if hall.verifiable[game_id] else 'off'}): "
                f"p50 {percentile(own_ms, 50):.1f} p99 {percentile(own_ms, 99):.1f} "
                f"CPU p50 {percentile(own_cpu, 50):.1f} ms, first Bingo at ball {bingo_at[game_id]}"
            )
    # Each game's first step builds its detector over 100,000 cards (the same work on or off): with a few
    # games these few steps are the p99. The steps after the first, and the first steps' mean, apart.
    later = {
        mode: [r["ms"] for r in draws if hall.verifiable[r["args"][0]] == mode and r["args"][1] > 1]
        for mode in (True, False)
    }
    first = {
        mode: [r["ms"] for r in draws if hall.verifiable[r["args"][0]] == mode and r["args"][1] == 1]
        for mode in (True, False)
    }
    for mode, label in ((True, "on"), (False, "off")):
        print(describe(f"draw task duration after ball 1, commitment {label}", later[mode]))
        print(describe(f"draw task duration of ball 1, commitment {label}", first[mode]))
    compared = ""
    if by_mode[True] and by_mode[False]:
        p50 = percentile(by_mode[True], 50) / percentile(by_mode[False], 50)
        p99 = percentile(by_mode[True], 99) / percentile(by_mode[False], 99)
        mean = (sum(by_mode[True]) / len(by_mode[True])) / (sum(by_mode[False]) / len(by_mode[False]))
        cpu = percentile(cpu_by_mode[True], 50) / percentile(cpu_by_mode[False], 50)
        later_p99 = percentile(later[True], 99) / percentile(later[False], 99)
        first_mean = (sum(first[True]) / len(first[True])) / (sum(first[False]) / len(first[False]))
        print(
            f"commitment on / off: p50 x{p50:.3f}  p99 x{p99:.3f}  mean x{mean:.3f}  CPU p50 x{cpu:.3f}  "
            f"p99 after ball 1 x{later_p99:.3f}  ball 1 mean x{first_mean:.3f}"
        )
        compared = (
            f" on_off_p50={p50:.3f} on_off_p99={p99:.3f} on_off_mean={mean:.3f} on_off_cpu_p50={cpu:.3f}"
            f" on_off_p99_after_ball1={later_p99:.3f} on_off_ball1_mean={first_mean:.3f}"
        )
    from bingo.traditional.models import Game as DrawnGame

    committed = set(
        DrawnGame.objects.filter(pk__in=hall.games).exclude(draw_commitment="").values_list("pk", flat=True)
    )
    assert committed == {g for g in hall.games if hall.verifiable[g]}, "a game's commitment is not as asked"
    ok = bool(task_ms) and drawn_total == len(task_ms) and len(screen_ms) == len(task_ms)
    if not args.keep_logs and ok:
        shutil.rmtree(logdir)
    else:
        print(f"logs: {logdir}")
    print(
        f"cards={args.cards} task_p50_ms={percentile(task_ms, 50):.1f} "
        f"task_p99_ms={percentile(task_ms, 99):.1f} "
        f"due_to_screen_p99_ms={percentile(screen_ms, 99):.1f} "
        f"baseline_chain_p99_ms={percentile(chain_done_ms, 99):.1f} balls={len(task_ms)} "
        f"task_p99_to_bingo_ms={percentile(played, 99):.1f}{compared} load={load()}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
