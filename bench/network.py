"""Benchmark: one central and VENUES venue installations on the network link (issue 14, "Speed and scale").

Not a test. The central runs as in production: WEB uvicorn processes serving config.asgi (HALL_ROLE=central,
HALL_DB_POOL connections each) and a Celery worker (``-Q draws,celery``, the network draw's steps), on a
scratch PostgreSQL database of its own (``--fresh`` drops and recreates it; migrated) and Redis. The venues
are simulated by CLIENTS asyncio processes speaking the real protocol, each venue with its own credential:
``POST /api/link/messages/`` (its outbox in sequence, a batch of what is pending whenever the previous POST
is answered, as ``manage.py run_link`` sends), ``GET /api/link/streams/<stream>/?after=N`` and the
``/ws/link/`` socket (held open by every venue for the whole run, a heartbeat every 10 s). A simulated
venue keeps no database (a fact wakes its sender at once, where run_link polls its outbox every 0.2 s;
its socket is reopened when it closes): the central is what is measured.

Provisioned through the services: VENUES venues in one network with a credential each; an interconnected
prize over all of them (10 % of a game's sales, max ball 40) with ROUNDS rounds open; network game
SB-SALES on sale (10 strips a hall) and network game SB-DRAW (one strip a hall, each hall's sale reported
over the link, its sales closed). Each venue's outbox is, repeated: 8 sale reports of SB-SALES (1-6 cards
sold, or returned, ``simultaneous.sale``), then its contribution to the prize's next round and its result
(``ib.contribution``, ``ib.result``; one hall a round reports a Bingo at ball 30, so every round is
decided, and paid, when its last hall reports).

Phases, each WINDOW seconds:

1. rate baseline: every venue sends ``GET /api/link/streams/venue.<id>/`` back to back (an authenticated
   link request that applies no message: the same stack, credential and contact, no inbox);
2. rate: facts written at OFFERED messages/s in all (more than the central takes; a venue whose outbox
   holds BACKLOG unsent messages writes none until it sends), each venue sending what is pending whenever
   its previous POST is answered: the sustained accepted rate (the backlog is drained after the window);
3. lag baseline: facts at LOAD x the accepted rate, each answered by a GET: fact -> answer;
4. lag: facts at the same schedule as 3, sent as messages: fact (the message's creation) -> the central's
   answer naming it accepted. Its contribution is then in the prize's meter: the pool row is written in
   the transaction that records the message, committed before the answer (the meter the central shows
   and every later IB_METER entry include it). Meanwhile the worker draws SB-DRAW's balls every PACE
   seconds: ball (NetworkBall.drawn_at, in the worker) -> the entry frame read by each venue's socket;
   and, between two balls, the bench pushes a bare entry to the same group through the channel layer:
   the baseline of the fan-out (no database, no worker).

Afterwards it checks exactness: each venue's accepted sequence is the central's applied one and its inbox
holds each message once; every sale report is one ReportedSale, every contribution one RoundContribution;
no message refused. The web processes time the accept path's parts and report them at the end.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench300_net REDIS_URL=redis://127.0.0.1:6379/3 \\
        .venv/bin/python bench/network.py --fresh --window 10 --lock /tmp/hall-bench.lock
    .venv/bin/python bench/network.py --fresh --quick     # 60 venues, 5 s windows

The last line sums it up: ``venues=… accepted_msg_per_s=… baseline_req_per_s=… lag_p50_ms=… lag_p99_ms=…
ball_p99_ms=… ball_max_ms=… ping_p99_ms=… exact=true``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect
from websockets.exceptions import WebSocketException

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/hall_bench300_net")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/3")
os.environ["HALL_ROLE"] = "central"
os.environ.setdefault("CHANNEL_PREFIX", "bench-network")
os.environ.setdefault("HALL_CACHE_PREFIX", "bench-network")

import netsim  # noqa: E402  (bench/netsim.py, beside this script)

PYTHON = sys.executable
NETWORK = "BENCHNET"
PRIZE = "IB300"
SALES_GAME = "SB-SALES"
DRAW_GAME = "SB-DRAW"
PRICE = Decimal("1.00")
SALES_STRIPS = 10  # a hall's run of SB-SALES (60 cards)
ROUND_CARDS = 15  # a hall's round game: 15 cards at 1.00
SALES_PER_ROUND = 8  # sale reports between two rounds in a venue's outbox
HEARTBEAT_SECONDS = 10.0


# --- setup ---------------------------------------------------------------------------------------------


def provision(run: str, venues: int, rounds: int, pace: float) -> dict[str, Any]:
    """The network, its venues and credentials, the prize and its rounds, the two network games."""
    from django.contrib.auth.models import User
    from django.utils import timezone

    from bingo.network.interconnected.services import prizes
    from bingo.network.simultaneous.services import central
    from halls import money
    from halls.link.services import credentials
    from halls.models import Jurisdiction, Network, Venue
    from jackpots.services import pools as pool_services

    actor = User.objects.create_superuser(f"bench{run}", password=None)
    made = [
        Venue.objects.create(
            name=f"Bingo red {i:03d}", licence_number=f"BN{run}-{i:04d}", jurisdiction=Jurisdiction.ML
        )
        for i in range(venues)
    ]
    network = Network.objects.create(name="Red de prueba", code=f"{NETWORK}{run}", jurisdiction="ML")
    network.venues.set(made)
    keys = [credentials.issue(venue=v, actor="bench") for v in made]

    def add_member(*, pool: Any, source_type: str, source_id: str, venue: Venue, actor: Any) -> Any:
        # pools.add_member audits each addition in every member venue's chain (a network pool's): 90,000
        # entries for 300 venues, half an hour of this box for a one-off of the network's setup. The same
        # row, audited in its own venue's chain only.
        from halls.services import audit
        from jackpots.models import PoolMember

        member = PoolMember.objects.create(
            pool=pool,
            source_type=source_type,
            source_id=source_id,
            venue=venue,
            added_at=timezone.now(),
            added_by="bench",
        )
        audit.record(venue_id=venue.pk, actor="bench", action="pool.member_added", obj=member, data={})
        return member

    setattr(pool_services, "add_member", add_member)  # noqa: B010 (replaced for this process only)
    prize = prizes.create_prize(
        network=network,
        code=f"{PRIZE}-{run}",
        name="Interconexionado",
        percent=Decimal("10"),
        max_ball=40,
        seed=Decimal("100.00"),
        wait_seconds=7200,
        authorisation_ref="BENCH-IB",
        halls=made,
        actor="bench",
    )
    for _ in range(rounds):
        prizes.open_round(prize=prize, actor="bench")
    level = prize.pool.levels.get()
    split = money.split_contribution(PRICE * ROUND_CARDS, level.contribution_rate, level.reserve_rate)
    deadline = timezone.now() + timedelta(hours=2)
    games: dict[str, dict[str, Any]] = {}
    for code, strips, pace_s in ((SALES_GAME, SALES_STRIPS, 4.0), (DRAW_GAME, 1, pace)):
        game = central.create_game(
            network=network,
            code=f"{code}-{run}",
            card_price=PRICE,
            line_percent=Decimal("10"),
            bingo_percent=Decimal("40"),
            hall_percent=Decimal("10"),
            sales_deadline=deadline,
            actor=actor,
            operation_id=f"bench-{code}-{run}",
            pace_seconds=Decimal(str(pace_s)),
        )
        runs = central.allocate(game=game, strips=[(v.licence_number, strips) for v in made], actor=actor)
        central.open_sales(game=game, actor=actor)
        games[code] = {
            "id": game.pk,
            "code": game.code,
            "runs": {a.venue_id: (a.first_serial, a.last_serial) for a in runs},
        }
    return {
        "network": network.code,
        "prize": prize.code,
        "prize_id": prize.pk,
        "actor": actor.pk,
        "to_meter": str(split.to_meter),
        "to_reserve": str(split.to_reserve),
        "rounds": rounds,
        "games": games,
        "venues": [
            {
                "i": i,
                "id": v.pk,
                "licence": v.licence_number,
                "auth": credentials.header(k.key, k.secret),
                "sales_run": games[SALES_GAME]["runs"][v.pk],
                "draw_run": games[DRAW_GAME]["runs"][v.pk],
            }
            for i, (v, k) in enumerate(zip(made, keys, strict=True))
        ],
    }


# --- the central's processes ------------------------------------------------------------------------------


def web_process(port: int, timings_out: str) -> None:
    """uvicorn serving config.asgi on `port`, the accept path's parts timed (JSON to `timings_out` on
    SIGUSR1)."""

    import django
    import uvicorn

    django.setup()
    from bingo.network.interconnected.services import prizes, rounds
    from bingo.network.simultaneous.services import central
    from halls.link import api
    from halls.link.services import credentials, inbox, presence, streams
    from halls.services import audit

    spans = netsim.Spans()
    timed = spans.time

    timed(api.MessagesView, "post", "POST messages (the view, in Django)")
    timed(api.StreamView, "get", "GET stream (the view, in Django)")
    timed(credentials, "authenticate", "credential check")
    timed(presence, "seen", "presence.seen (contact)")
    timed(inbox, "accept_many", "inbox.accept_many (a request's messages)")
    for name in ("accept", "_accept_group"):
        if hasattr(inbox, name):
            timed(inbox, name, f"inbox.{name} (a transaction)")
    timed(inbox, "lock_venue_link", "venue link FOR UPDATE")
    # The handlers are called through the link's registry (the functions it holds): timed where the inbox
    # calls them, a message alone or a run of one kind's messages (its batch handler: a hall's sales).
    timed(inbox, "_apply", "a message alone (its handler + its savepoint)")
    if hasattr(inbox, "_apply_batch"):
        timed(inbox, "_apply_batch", "a run of sale reports (the batch handler)")
    timed(rounds, "accept_contribution", "ib.contribution handler")
    timed(rounds, "accept_result", "ib.result handler")
    timed(rounds, "decide_locked", "a round's decision")
    timed(rounds, "lock_prize", "prize FOR UPDATE")
    timed(prizes, "send_meter", "prize meter (read + maybe append)")
    timed(central, "record_sale", "simultaneous.sale handler")
    timed(central, "lock_network_game", "network game FOR UPDATE")
    timed(audit, "_locked_tip", "audit chain head (lock + read)")
    timed(streams, "append", "stream entry appended")

    profile = None
    if os.environ.get("BENCH_PROFILE"):  # the views' CPU, by function (pstats files beside the timings)
        profile = netsim.CpuProfile()
        profile.profile(api.MessagesView, "dispatch", "post")
        profile.profile(api.StreamView, "dispatch", "get")
    spans.dump_on_signal(timings_out, profile)
    config = uvicorn.Config(
        "config.asgi:application",
        host="127.0.0.1",
        port=port,
        lifespan="off",
        access_log=False,
        log_level="warning",
        http="httptools",
        ws="websockets",
    )
    uvicorn.Server(config).run()


# --- the venues -------------------------------------------------------------------------------------------


class Venue:
    """A simulated venue: its outbox (facts numbered in order), its sender, its socket's frames."""

    def __init__(self, v: dict[str, Any], hall: dict[str, Any], port: int) -> None:
        self.v = v
        self.hall = hall
        self.http = netsim.Http(port, {"Authorization": v["auth"]})
        self.written: list[
            tuple[int, str, dict[str, Any], float]
        ] = []  # (sequence, kind, payload, fact time)
        self.acked = 0
        self.made = 0  # load messages made so far (after the setup sale)
        self.sale_op = 0
        self.sold: list[tuple[int, int]] = []  # SB-SALES ranges sold and not returned
        self.next_card = v["sales_run"][0]
        self.wake = asyncio.Event()
        self.lags: list[float] = []
        self.statuses: dict[str, int] = {}
        self.kinds: dict[str, int] = {}
        self.requests = 0
        self.frames: list[tuple[str, Any, float]] = []  # ("ball", ordinal, t) / ("ping", (id, sent), t)
        self.socket_open = False
        self.reconnects = 0

    # the outbox ---------------------------------------------------------------------------------------

    def write(self, kind: str, payload: dict[str, Any], at: float) -> None:
        self.written.append((len(self.written) + 1, kind, payload, at))
        self.wake.set()

    def _sale(self) -> tuple[str, dict[str, Any]]:
        first_run, last_run = self.v["sales_run"]
        self.sale_op += 1
        rng = random.Random(self.v["i"] * 100_003 + self.sale_op)
        n = rng.randint(1, 6)
        if self.next_card + n - 1 > last_run or (self.sold and rng.random() < 0.1):
            first, last = self.sold.pop()  # a return (the run used up, or now and then)
            returned = True
            if not self.sold and self.next_card + 6 > last_run:
                self.next_card = first_run
        else:
            first, last = self.next_card, self.next_card + n - 1
            self.next_card = last + 1
            self.sold.append((first, last))
            returned = False
        cards = last - first + 1
        return "simultaneous.sale", {
            "game": self.hall["games"][SALES_GAME]["code"],
            "operation": self.sale_op,
            "returned": returned,
            "first": first,
            "last": last,
            "cards": cards,
            "amount": str(PRICE * cards),
        }

    def next_fact(self) -> tuple[str, dict[str, Any]]:
        """The venue's next message: 8 sale reports, then a round's contribution and result."""
        self.made += 1
        cycle, step = divmod(self.made - 1, SALES_PER_ROUND + 2)
        number = cycle + 1
        if step < SALES_PER_ROUND or number > self.hall["rounds"]:
            return self._sale()
        game = number
        if step == SALES_PER_ROUND:
            return "ib.contribution", {
                "prize": self.hall["prize"],
                "round": number,
                "game": game,
                "number": number,
                "sales": str(PRICE * ROUND_CARDS),
                "to_meter": self.hall["to_meter"],
                "to_reserve": self.hall["to_reserve"],
                "cards_sold": ROUND_CARDS,
                "sold": [{"series": "A", "ranges": [[1, ROUND_CARDS]]}],
            }
        winner = number % len(self.hall["venues"]) == self.v["i"]
        return "ib.result", {
            "prize": self.hall["prize"],
            "round": number,
            "game": game,
            "void": False,
            "ordinal": 30 if winner else None,
            "cards": ["A-0001"] if winner else [],
        }

    def draw_sale(self) -> tuple[str, dict[str, Any]]:
        first, last = self.v["draw_run"]
        cards = last - first + 1
        return "simultaneous.sale", {
            "game": self.hall["games"][DRAW_GAME]["code"],
            "operation": 1,
            "returned": False,
            "first": first,
            "last": last,
            "cards": cards,
            "amount": str(PRICE * cards),
        }

    # the sender --------------------------------------------------------------------------------------

    async def send_pending(self, batch: int, record: bool) -> int:
        pending = self.written[self.acked : self.acked + batch]
        if not pending:
            return 0
        body = {
            "messages": [{"sequence": s, "kind": k, "payload": p} for s, k, p, _at in pending],
            "reported": len(self.written),
        }
        status, answer = await self.http.request("POST", "/api/link/messages/", body)
        self.requests += 1
        now = time.time()
        if status == 200:
            accepted = answer["accepted"]
        elif status == 409:
            accepted = answer["error"]["details"].get("accepted", [])
            self.acked = int(answer["error"]["details"]["expected"]) - 1
        else:
            self.statuses[f"http {status}"] = self.statuses.get(f"http {status}", 0) + 1
            await asyncio.sleep(0.2)
            return 0
        for item in accepted:
            self.statuses[item["status"]] = self.statuses.get(item["status"], 0) + 1
            if item["status"] == "refused" and self.statuses["refused"] <= 3:
                print(f"  refused {self.v['licence']} #{item['sequence']}: {item['answer']}", flush=True)
            _seq, kind, _payload, at = self.written[item["sequence"] - 1]
            if record:
                self.lags.append(now - at)
                self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if accepted:
            self.acked = max(self.acked, accepted[-1]["sequence"])
        return len(accepted)

    async def sender(self, until: float, batch: int, record: bool) -> None:
        """As run_link's sender: whenever something is pending, POST it (at most `batch`), until `until`
        and then until the outbox is drained."""
        while True:
            if self.acked >= len(self.written):
                if time.time() >= until:
                    return
                self.wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), timeout=max(0.01, until - time.time()))
                continue
            await self.send_pending(batch, record)

    # the socket ---------------------------------------------------------------------------------------

    async def follow(self, url: str, stop: asyncio.Event) -> None:
        """The venue's socket, reopened when it closes (as run_link's follower; counted)."""
        while not stop.is_set():
            try:
                await self._follow_once(url, stop)
            except (OSError, TimeoutError, WebSocketException):
                self.reconnects += 1
                await asyncio.sleep(0.5)

    async def _follow_once(self, url: str, stop: asyncio.Event) -> None:
        async with connect(url, additional_headers={"Authorization": self.v["auth"]}, max_size=2**22) as ws:
            self.socket_open = True
            beat = asyncio.get_running_loop().time() + HEARTBEAT_SECONDS * random.random()
            while not stop.is_set():
                try:
                    raw = await asyncio.wait_for(ws.recv(), timeout=0.5)
                except TimeoutError:
                    raw = None
                now = time.time()
                if raw is not None:
                    frame = json.loads(raw)
                    if frame.get("type") == "entry" and frame.get("kind") == "simultaneous.ball":
                        if frame["payload"].get("game") == self.hall["games"][DRAW_GAME]["code"]:
                            self.frames.append(("ball", frame["payload"]["ordinal"], now))
                    elif frame.get("type") == "entry" and frame.get("kind") == "bench.ping":
                        p = frame["payload"]
                        self.frames.append(("ping", (p["id"], p["sent"]), now))
                if asyncio.get_running_loop().time() >= beat:
                    beat += HEARTBEAT_SECONDS
                    await ws.send(json.dumps({"type": "heartbeat", "reported": len(self.written)}))


def client_process(conn: Any, hall: dict[str, Any], mine: list[int], ports: list[int]) -> None:
    """The venues `mine` (indexes), one asyncio loop; phases commanded over `conn`."""

    async def run() -> None:
        loop = asyncio.get_running_loop()
        venues = [Venue(hall["venues"][i], hall, ports[i % len(ports)]) for i in mine]
        stop = asyncio.Event()
        followers: list[asyncio.Task[None]] = []
        while True:
            command = await loop.run_in_executor(None, conn.recv)
            name = command["phase"]
            if name == "quit":
                stop.set()
                await asyncio.gather(*followers, return_exceptions=True)
                conn.send({})
                return
            if name == "open":
                for v in venues:
                    port = v.http.port
                    followers.append(asyncio.create_task(v.follow(f"ws://127.0.0.1:{port}/ws/link/", stop)))
                    await asyncio.sleep(0.005)
                deadline = time.time() + 60
                while time.time() < deadline and not all(v.socket_open for v in venues):
                    await asyncio.sleep(0.1)
                conn.send({"open": sum(v.socket_open for v in venues)})
            elif name == "setup":
                for v in venues:
                    v.write(*v.draw_sale(), time.time())
                await asyncio.gather(*(v.sender(0, 200, False) for v in venues))
                conn.send({"statuses": _merge(v.statuses for v in venues)})
            elif name == "get_closed":
                conn.send(await _get_closed(venues, command))
            elif name == "facts":
                conn.send(await _facts(venues, command))
            elif name == "frames":
                conn.send({v.v["i"]: v.frames for v in venues} | {-1: sum(v.reconnects for v in venues)})

    asyncio.run(run())


def _merge(dicts: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for d in dicts:
        for k, n in d.items():
            out[k] = out.get(k, 0) + n
    return out


async def _get_closed(venues: list[Venue], command: dict[str, Any]) -> dict[str, Any]:
    """Each venue sends GETs of its own stream back to back for the window."""
    start, end = command["start"], command["start"] + command["window"]
    await asyncio.sleep(max(0.0, start - time.time()))
    latencies: list[float] = []
    errors = 0

    async def one(v: Venue) -> None:
        nonlocal errors
        path = f"/api/link/streams/venue.{v.v['id']}/?after=0"
        while time.time() < end:
            t0 = time.time()
            status, _body = await v.http.request("GET", path)
            if status != 200:
                errors += 1
            latencies.append(time.time() - t0)

    await asyncio.gather(*(one(v) for v in venues))
    return {"n": len(latencies), "latencies": latencies, "errors": errors}


async def _facts(venues: list[Venue], command: dict[str, Any]) -> dict[str, Any]:
    """Open loop: facts at the venues at `rate` a second in all (these venues' share), for the window; as
    messages (sent as run_link does) or, `get`, each answered by a GET (the baseline)."""
    start, window, rate, as_get = command["start"], command["window"], command["rate"], command["get"]
    end = start + window
    count = int(rate * window)
    rng = random.Random(command["seed"] * 1000 + venues[0].v["i"])
    cap = command.get("backlog") or 0
    schedule = sorted((start + rng.random() * window, rng.randrange(len(venues))) for _ in range(count))
    for v in venues:
        v.lags, v.kinds, v.requests = [], {}, 0
        v.statuses = {}
    latencies: list[float] = []
    errors = 0

    async def feed() -> None:
        for at, idx in schedule:
            delay = at - time.time()
            if delay > 0:
                await asyncio.sleep(delay)
            if as_get:
                asyncio.get_running_loop().create_task(_get_fact(venues[idx], at))
            elif not cap or len(venues[idx].written) - venues[idx].acked < cap:
                venues[idx].write(*venues[idx].next_fact(), at)

    async def _get_fact(v: Venue, at: float) -> None:
        nonlocal errors
        status, _body = await v.http.request("GET", f"/api/link/streams/venue.{v.v['id']}/?after=0")
        if status != 200:
            errors += 1
        latencies.append(time.time() - at)

    await asyncio.sleep(max(0.0, start - time.time()))
    if as_get:
        await feed()
        while len(latencies) + errors < count:
            await asyncio.sleep(0.05)
        return {"n": count, "latencies": latencies, "errors": errors, "requests": count}
    senders = [asyncio.create_task(v.sender(end, command["batch"], True)) for v in venues]
    await feed()
    accepted_in_window = 0
    counted = False
    while not all(s.done() for s in senders):
        await asyncio.sleep(0.02)
        if not counted and time.time() >= end:
            accepted_in_window = sum(len(v.lags) for v in venues)
            counted = True
    if not counted:
        accepted_in_window = sum(len(v.lags) for v in venues)
    return {
        "n": count,
        "in_window": accepted_in_window,
        "drained_at": time.time(),
        "latencies": [x for v in venues for x in v.lags],
        "statuses": _merge(v.statuses for v in venues),
        "kinds": _merge(v.kinds for v in venues),
        "requests": sum(v.requests for v in venues),
        "acked": {v.v["i"]: v.acked for v in venues},
    }


# --- the run ----------------------------------------------------------------------------------------------


class Clients:
    def __init__(self, hall: dict[str, Any], count: int, ports: list[int]) -> None:
        ctx = mp.get_context("spawn")
        self.pipes = []
        self.procs = []
        for c in range(count):
            mine = [i for i in range(len(hall["venues"])) if i % count == c]
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=client_process, args=(child, hall, mine, ports), daemon=True)
            proc.start()
            self.pipes.append(parent)
            self.procs.append(proc)

    def run(self, command: dict[str, Any], share: bool = False) -> list[dict[str, Any]]:
        n = len(self.pipes)
        for pipe in self.pipes:
            sent = dict(command)
            if share and "rate" in sent:
                sent["rate"] = command["rate"] / n
            pipe.send(sent)
        return [pipe.recv() for pipe in self.pipes]


def check(hall: dict[str, Any], acked: dict[int, int], refused: int) -> bool:
    """Each venue's accepted sequence is the central's applied one, its inbox holds each message once;
    every sale report a ReportedSale, every contribution a RoundContribution."""
    from django.db.models import Count, Max

    from bingo.network.interconnected.models import RoundContribution
    from bingo.network.simultaneous.models import ReportedSale
    from halls.link.models import InboxMessage, VenueLink

    problems = []
    ids = {v["id"]: v["i"] for v in hall["venues"]}
    applied = dict(VenueLink.objects.filter(venue_id__in=ids).values_list("venue_id", "applied_sequence"))
    inbox = {
        r["venue_id"]: r
        for r in InboxMessage.objects.filter(venue_id__in=ids)
        .values("venue_id")
        .annotate(n=Count("id"), top=Max("sequence"))
    }
    for venue_id, i in ids.items():
        want = acked.get(i, 0)
        got = inbox.get(venue_id, {"n": 0, "top": 0})
        if applied.get(venue_id) != want or got["n"] != want or got["top"] != want:
            problems.append(f"venue {i}: acked {want}, applied {applied.get(venue_id)}, inbox {got}")
    sales = InboxMessage.objects.filter(venue_id__in=ids, kind="simultaneous.sale").count()
    if ReportedSale.objects.filter(venue_id__in=ids).count() != sales:
        problems.append(f"{sales} sale reports but {ReportedSale.objects.count()} ReportedSale rows")
    contributions = InboxMessage.objects.filter(venue_id__in=ids, kind="ib.contribution").count()
    if RoundContribution.objects.filter(venue_id__in=ids).count() != contributions:
        problems.append(f"{contributions} contributions, {RoundContribution.objects.count()} counted")
    if refused:
        problems.append(f"{refused} messages refused")
    for problem in problems[:10]:
        print(f"  NOT EXACT: {problem}")
    return not problems


def _profile(
    folder: str, webs: list[subprocess.Popen[bytes]], start: float, window: float
) -> list[subprocess.Popen[bytes]]:
    """py-spy on each web process from `start` for `window` seconds (folded stacks, 100 samples/s)."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    spy = os.environ.get("PY_SPY", "py-spy")
    delay = max(0.0, start - time.time())
    return [
        subprocess.Popen(
            [
                "sh",
                "-c",
                f"sleep {delay:.2f}; exec {spy} record --pid {web.pid} --duration {int(window)} "
                f"--rate 100 --format raw --nonblocking -o {folder}/web{i}.txt",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for i, web in enumerate(webs)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--venues", type=int, default=300)
    parser.add_argument("--window", type=float, default=15.0, help="seconds of each phase")
    parser.add_argument("--web", type=int, default=2, help="uvicorn processes (a port each)")
    parser.add_argument("--worker-concurrency", type=int, default=2)
    parser.add_argument("--clients", type=int, default=2, help="venue client processes")
    parser.add_argument(
        "--pool", type=int, default=16, help="HALL_DB_POOL of the web processes (production: 16)"
    )
    parser.add_argument("--offered", type=float, default=2000.0, help="facts a second in the rate phase")
    parser.add_argument(
        "--backlog",
        type=int,
        default=10,
        help="rate phase: a venue's outbox holds at most this many (the rest wait)",
    )
    parser.add_argument("--load", type=float, default=0.5, help="the lag phases' rate, x the accepted rate")
    parser.add_argument("--batch", type=int, default=200, help="messages a POST at most (HALL_LINK_BATCH)")
    parser.add_argument("--pace", type=float, default=2.0, help="seconds between the network draw's balls")
    parser.add_argument("--rounds", type=int, default=0, help="rounds opened (0: enough for the run)")
    parser.add_argument("--fresh", action="store_true", help="drop and recreate the scratch database")
    parser.add_argument(
        "--lock", help="a file to hold flock'ed exclusively while measuring (after the provisioning)"
    )
    parser.add_argument("--quick", action="store_true", help="60 venues, 5 s windows")
    parser.add_argument(
        "--profile",
        help="a folder: py-spy (PY_SPY, else on PATH) samples each web process over the rate window, "
        "folded stacks to <folder>/web<i>.txt",
    )
    parser.add_argument(
        "--port-base", type=int, default=0, help="the web processes' ports from this one (0: any free ports)"
    )
    args = parser.parse_args()
    if args.quick:
        args.venues, args.window, args.pace = 60, 5.0, 1.0
    rounds = args.rounds or max(
        3, int(args.offered * args.window * 1.6 / args.venues / (SALES_PER_ROUND + 2)) + 2
    )
    url = os.environ["DATABASE_URL"]
    dbname = url.rsplit("/", 1)[1].split("?")[0]
    netsim.ensure_database(url, fresh=args.fresh)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    run = f"{int(time.time()) % 100000}"
    t0 = time.perf_counter()
    hall = provision(run, args.venues, rounds, args.pace)
    connection.close()
    print(
        f"provisioned {args.venues} venues, {rounds} rounds, two network games in "
        f"{time.perf_counter() - t0:.0f} s; {args.web} web processes (HALL_DB_POOL={args.pool}), a worker "
        f"(concurrency {args.worker_concurrency}), {args.clients} client processes, windows of "
        f"{args.window:g} s; load average {os.getloadavg()[0]:.1f} "
        f"(the box is shared, {os.cpu_count()} cores)"
    )
    if args.lock:
        netsim.hold_lock(args.lock)
    workdir = Path(tempfile.mkdtemp(prefix="bench-network-"))
    env = dict(os.environ, HALL_DB_POOL=str(args.pool), HALL_ROLE="central")
    ports = [args.port_base + i if args.port_base else netsim.free_port() for i in range(args.web)]
    timings = [workdir / f"web{i}.json" for i in range(args.web)]
    procs: list[subprocess.Popen[bytes]] = []
    for i, port in enumerate(ports):
        log = (workdir / f"web{i}.log").open("wb")
        cmd = [PYTHON, str(Path(__file__).resolve()), "_web", str(port), str(timings[i])]
        procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT))
    worker_cmd = [
        *(PYTHON, "-m", "celery", "-A", "config", "worker", "-Q", "draws,celery"),
        *("--concurrency", str(args.worker_concurrency), "-O", "fair", "-l", "warning"),
        *("--hostname", f"bench-network-{run}@%h"),
    ]
    wlog = (workdir / "worker.log").open("wb")
    worker = subprocess.Popen(worker_cmd, cwd=ROOT, env=env, stdout=wlog, stderr=subprocess.STDOUT)
    procs.append(worker)
    clients: Clients | None = None
    ok = True
    try:
        for port in ports:
            netsim.wait_listening(port, timeout=240)  # a loaded box starts Django slowly
        clients = Clients(hall, args.clients, ports)
        opened = sum(r["open"] for r in clients.run({"phase": "open"}))
        print(f"venue sockets open: {opened}/{args.venues}")
        setup = _merge(r["statuses"] for r in clients.run({"phase": "setup"}))
        print(f"SB-DRAW's sales reported over the link: {setup}")
        from bingo.network.simultaneous.models import NetworkGame
        from bingo.network.simultaneous.services import central

        draw_game = NetworkGame.objects.get(pk=hall["games"][DRAW_GAME]["id"])
        central.close_sales(game=draw_game, actor="bench")
        connection.close()
        time.sleep(1.0)

        def pids() -> list[int]:
            return [p for proc in procs for p in netsim.children(proc.pid)]

        def measure(
            label: str, command: dict[str, Any], share: bool = False
        ) -> tuple[list[dict[str, Any]], dict[str, float]]:
            la0 = os.getloadavg()[0]
            c0, pg0, w0 = netsim.cpu_seconds(pids()), netsim.postgres_cpu(dbname), time.time()
            assert clients is not None
            results = clients.run(command, share=share)
            c1, pg1, w1 = netsim.cpu_seconds(pids()), netsim.postgres_cpu(dbname), time.time()
            load = {
                "central_cores": (c1 - c0) / (w1 - w0),
                "postgres_cores": (pg1 - pg0) / (w1 - w0),
                "load": max(la0, os.getloadavg()[0]),
            }
            print(
                f"  [{label}: the central's processes {load['central_cores']:.2f} cores, its PostgreSQL "
                f"backends {load['postgres_cores']:.2f} cores, load average {load['load']:.1f}]"
            )
            return results, load

        # 1. rate baseline
        start = time.time() + 1.0
        results, _l = measure("rate baseline", {"phase": "get_closed", "start": start, "window": args.window})
        base_n = sum(r["n"] for r in results)
        base_rate = base_n / args.window
        base_lat = netsim.ms([x for r in results for x in r["latencies"]])
        print(f"rate baseline: {base_rate:.0f} GET/s (authenticated link requests, no message)")
        netsim.line("  GET round trip", base_lat)

        # 2. rate
        start = time.time() + 1.0
        spies = _profile(args.profile, procs[: args.web], start, args.window) if args.profile else []
        results, rate_load = measure(
            "rate",
            {
                "phase": "facts",
                "start": start,
                "window": args.window,
                "rate": args.offered,
                "get": False,
                "batch": args.batch,
                "seed": 2,
                "backlog": args.backlog,
            },
            share=True,
        )
        for spy in spies:
            spy.wait(timeout=60)
        in_window = sum(r["in_window"] for r in results)
        accepted_rate = in_window / args.window
        requests = sum(r["requests"] for r in results)
        total = sum(len(r["latencies"]) for r in results)
        drained = max(r["drained_at"] for r in results) - (start + args.window)
        kinds = _merge(r["kinds"] for r in results)
        statuses = _merge(r["statuses"] for r in results)
        print(
            f"rate: {accepted_rate:.0f} messages/s accepted over the window (offered {args.offered:.0f}/s); "
            f"{total} in all in {requests} POSTs ({total / max(1, requests):.1f} a POST), the backlog "
            f"drained {drained:.1f} s after the window; {kinds}; {statuses}"
        )

        # 3./4. lag, with the network draw and its baseline pings
        lag_rate = max(1.0, args.load * accepted_rate)
        start = time.time() + 1.0
        results, _l = measure(
            "lag baseline",
            {
                "phase": "facts",
                "start": start,
                "window": args.window,
                "rate": lag_rate,
                "get": True,
                "batch": args.batch,
                "seed": 3,
            },
            share=True,
        )
        lag_base = netsim.ms([x for r in results for x in r["latencies"]])
        print(f"lag baseline at {lag_rate:.0f} facts/s: each answered by a GET")
        netsim.line("  fact -> GET answered", lag_base)

        central.start_draw(game=NetworkGame.objects.get(pk=draw_game.pk), actor="bench")
        connection.close()
        start = time.time() + 1.0
        import threading

        from halls.link import push

        pinged: list[int] = []

        def pinger() -> None:
            k = 0
            at = start + args.pace / 2
            while at < start + args.window:
                time.sleep(max(0.0, at - time.time()))
                k += 1
                push.publish_entry(
                    f"network.{hall['network']}", 0, "bench.ping", {"id": k, "sent": time.time()}
                )
                pinged.append(k)
                at += args.pace

        ping_thread = threading.Thread(target=pinger, daemon=True)
        ping_thread.start()
        results, _load = measure(
            "lag + draw",
            {
                "phase": "facts",
                "start": start,
                "window": args.window,
                "rate": lag_rate,
                "get": False,
                "batch": args.batch,
                "seed": 4,
            },
            share=True,
        )
        ping_thread.join()
        lag = netsim.ms([x for r in results for x in r["latencies"]])
        statuses = _merge([statuses, *(r["statuses"] for r in results)])
        lag_requests = sum(r["requests"] for r in results)
        lag_kinds = _merge(r["kinds"] for r in results)
        print(f"lag at {lag_rate:.0f} facts/s: {lag['n']} messages in {lag_requests} POSTs; {lag_kinds}")
        netsim.line("  fact -> in the meter", lag)
        acked: dict[int, int] = {}
        for r in results:
            acked.update({int(k): v for k, v in r["acked"].items()})
        time.sleep(max(1.0, args.pace))
        frames: dict[int, list[Any]] = {}
        reconnects = 0
        for r in clients.run({"phase": "frames"}):
            reconnects += int(r.pop(-1))  # type: ignore[call-overload]
            frames.update({int(k): v for k, v in r.items()})
        from bingo.network.simultaneous.models import NetworkBall

        drawn = dict(NetworkBall.objects.filter(game_id=draw_game.pk).values_list("ordinal", "drawn_at"))
        ball_lags: list[float] = []
        per_ball_max: dict[int, float] = {}
        missing = 0
        for ordinal, at in drawn.items():
            t = at.timestamp()
            for i in range(args.venues):
                got = [f[2] for f in frames.get(i, []) if f[0] == "ball" and f[1] == ordinal]
                if not got:
                    missing += 1
                    continue
                ball_lags.append(got[0] - t)
                per_ball_max[ordinal] = max(per_ball_max.get(ordinal, 0.0), got[0] - t)
        ping_lags = [f[2] - f[1][1] for fs in frames.values() for f in fs if f[0] == "ping"]
        ball = netsim.ms(ball_lags)
        ping = netsim.ms(ping_lags)
        print(
            f"network draw: {len(drawn)} balls drawn by the worker every {args.pace:g} s "
            "during the lag phase, "
            f"to {args.venues} venue sockets ({missing} ball frames missing; sockets reopened in the run: "
            f"{reconnects})"
        )
        netsim.line("  ball drawn -> venue", ball)
        netsim.line("  baseline: bare push", ping, f"  ({len(pinged)} pushes)")
        for proc in procs[: args.web]:
            proc.send_signal(signal.SIGUSR1)
        time.sleep(2)
        refused = statuses.get("refused", 0)
        ok = check(hall, acked, refused) and missing == 0 and not any(k.startswith("http") for k in statuses)
    finally:
        if clients is not None:
            with contextlib.suppress(Exception):  # the clients are daemons: they end with us
                clients.run({"phase": "quit"})
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    print(f"load average after: {os.getloadavg()[0]:.1f}; logs in {workdir}")
    netsim.print_timings(timings, "where the central's time goes")
    print(
        f"\nvenues={args.venues} web={args.web} window_s={args.window:g} "
        f"accepted_msg_per_s={accepted_rate:.0f} baseline_req_per_s={base_rate:.0f} "
        f"central_cores={rate_load['central_cores']:.2f} pg_cores={rate_load['postgres_cores']:.2f} "
        f"lag_p50_ms={lag['p50']:.0f} lag_p99_ms={lag['p99']:.0f} lag_baseline_p99_ms={lag_base['p99']:.0f} "
        f"ball_p50_ms={ball['p50']:.0f} ball_p99_ms={ball['p99']:.0f} ball_max_ms={ball['max']:.0f} "
        f"ping_p99_ms={ping['p99']:.0f} exact={'true' if ok else 'false'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_web":
        web_process(int(sys.argv[2]), sys.argv[3])
    else:
        sys.exit(main())
