"""Benchmark: 2,000 terminals buying electronic cards in the same 10-second window, against real server
processes (issue 13, "Speed": every purchase exact in the ledger, p99 <= 200 ms).

Not a test. On a scratch PostgreSQL database (``--fresh`` drops and recreates it; migrated) it provisions,
through the services, one speciality (90 balls, 0.50 € a card) with TERMINALS terminals (cash devices with
their tokens), a passed verification and an open session, the game on sale (games.start_next_game), and one
player card per terminal funded with 20.00 €. It starts WEB uvicorn processes serving config.asgi (each on
its own port, the terminals spread evenly over them; CONN_MAX_AGE as in production unless ``--conn-max-age``)
and then, from CLIENTS client processes (asyncio, one HTTP/1.1 connection per request), runs two phases
with the same open-loop schedule: every terminal sends one request at a random instant of the WINDOW
seconds (the instants spread evenly, shuffled):

1. baseline: ``POST /api/electronic/terminal/card/`` (a card inserted: the device authenticated, the card
   read with its balance and its cards in play) — the same stack, no write;
2. product: a purchase of 1-6 cards (random) with the terminal's card, then RETRIES of them resent (each
   must answer 200 with the first purchase, nothing written). ``--door socket`` (the default, as the
   terminal page buys): a ``purchase`` frame on the terminal's WebSocket (opened, one per terminal, SETTLE
   seconds before the phase starts, as pages hold them long before a sale; bingo.electronic.purchase_frames),
   answered by a frame with its key; ``--door http``:
   ``POST /api/electronic/terminal/purchase/``.

Latency is from the request's first byte sent to the whole answer read (client lag behind the schedule is
reported apart). The web processes time the purchase service and its parts (the game and terminal locks,
the spend and within it the audit chain's head, the rows) and report them at the end: where the time goes.
Afterwards it checks the money: every 201 is one Purchase with its cards and one ledger transaction, each
card's balance is its funding minus its purchases, the venue's sales are their sum, the trial balance holds,
the retries wrote nothing, nothing answered 5xx.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench_esales REDIS_URL=redis://127.0.0.1:6379/2 \\
        flock /tmp/hall-bench.lock .venv/bin/python bench/electronic_sales.py --fresh
    .venv/bin/python bench/electronic_sales.py --fresh --quick     # 300 terminals, 5 s

The last line sums it up:
``door=… terminals=… window_s=… purchase_p99_ms=… baseline_p99_ms=… ratio=… purchases_per_s=… exact=true``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Anonymous cards, as before the door (issue 27): these benchmarks measure sales, not admissions.
os.environ.setdefault("HALL_DOOR_CARDS_NEED_ADMISSION", "0")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/hall_bench_esales")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/2")

from netsim import (  # noqa: E402  (bench/netsim.py: what the benches share)
    cpu_seconds,
    ensure_database,
    free_port,
    percentile,
    print_timings,
    wait_listening,
)

PYTHON = sys.executable
FUNDING = Decimal("20.00")
PRICE = Decimal("0.50")
SIZES = [1, 2, 3, 4, 5, 6]
API = "/api/electronic/terminal/"
RULES: dict[str, Any] = {
    "family": "electronic",
    "layout": "90",
    "card_price": str(PRICE),
    "purchase_sizes": SIZES,
    "max_cards": 60,
    "pace_seconds": "3",
    "sale_seconds": 3600,  # the window stays open for the whole run (no worker closes it)
    "pause_seconds": 5,
    "prizes": [
        {"code": "linea", "name": "Línea", "type": "line", "percent": "10"},
        {"code": "bingo", "name": "Bingo", "type": "bingo", "percent": "50"},
        {"code": "esquinas", "name": "Esquinas", "type": "figure", "figure": "corners", "fixed": "1.00"},
        {
            "code": "acumulado",
            "name": "Acumulado",
            "type": "accumulated",
            "pool": {"funding_percent": "2", "reserve_percent": "1", "seed": "100.00"},
            "max_ball": 40,
        },
    ],
}


# --- setup ---------------------------------------------------------------------------------------------


def provision(run: str, terminals: int) -> dict[str, Any]:
    """The hall: a speciality selling its first game, `terminals` verified terminals, a card each."""
    from django.contrib.auth.models import User
    from django.utils import timezone

    from bingo.electronic.models import ElectronicSession, Speciality, Terminal, Verification
    from bingo.electronic.services import games, specialities
    from bingo.electronic.services import terminals as terminal_service
    from halls.cashier import ledger
    from halls.cashier.ledger import Kind
    from halls.cashier.models import TxKind
    from halls.cashier.services import ledger as books
    from halls.cashier.services import player_cards as card_service
    from halls.models import Jurisdiction, Role, Room, StaffRole, Venue

    venue = Venue.objects.create(
        name=f"Bench {run}", licence_number=f"BE-{run}", jurisdiction=Jurisdiction.ML
    )
    operator = User.objects.create(username=f"bench-operator-{run}")
    StaffRole.objects.create(user=operator, venue=venue, role=Role.OPERATOR)
    room = Room.objects.create(venue=venue, name="Sala electrónica")
    speciality = specialities.create_speciality(
        room=room, code="EB", name="Electrónico", rules=RULES, authorisation_ref="BENCH", actor=operator
    )
    made = []
    for n in range(terminals):
        terminal, token = terminal_service.register_terminal(
            speciality=speciality, name=f"Terminal {n + 1:04d}", actor=operator
        )
        made.append((terminal, token))
    # A passed verification and the session opened on it (as the verification system leaves them).
    now = timezone.now()
    verification = Verification.objects.create(
        speciality=speciality,
        started_at=now,
        finished_at=now,
        passed=True,
        system_checks=[{"check": "bench", "ok": True, "detail": "provisioned by the bench"}],
        rng_checks=[],
        actor_label="bench",
    )
    Terminal.objects.filter(speciality=speciality).update(verified_by=verification)
    ElectronicSession.objects.create(
        speciality=speciality, verification=verification, opened_at=now, opened_by="bench"
    )
    Speciality.objects.filter(pk=speciality.pk).update(running=True)
    game = games.start_next_game(speciality.pk)
    assert game is not None
    house = books.venue_account(venue.pk, Kind.HOUSE)
    clients = []
    for n, (terminal, token) in enumerate(made):
        card = card_service.issue_card(venue_id=venue.pk, actor="bench")
        books.post(
            venue_id=venue.pk,
            kind=TxKind.CARD_CASH_IN,
            key=f"bench:fund:{n}",
            legs=[ledger.debit(house.pk, FUNDING), ledger.credit(books.card_account(card).pk, FUNDING)],
            actor="bench",
        )
        clients.append(
            {"device": terminal.device_id, "token": token, "card": card.number, "terminal": terminal.pk}
        )
    return {"venue": venue.pk, "game": game.pk, "speciality": speciality.pk, "terminals": clients}


# --- the web processes -----------------------------------------------------------------------------------


def web_process(port: int, timings_out: str) -> None:
    """uvicorn serving config.asgi on `port`, the purchase service and its parts timed (written as JSON to
    `timings_out` on SIGUSR1)."""
    import threading

    import django
    import uvicorn

    django.setup()
    from bingo.electronic.models import ECard
    from bingo.electronic.services import sales
    from halls.cashier.services import ledger as books
    from halls.cashier.services import player_cards
    from halls.services import audit

    spans: dict[str, list[float]] = {}
    guard = threading.Lock()

    def timed(owner: Any, name: str, label: str) -> None:
        inner = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                took = time.perf_counter() - t0
                with guard:
                    spans.setdefault(label, []).append(took)

        setattr(owner, name, wrapper)

    timed(sales, "purchase", "purchase (service, HTTP)")
    timed(sales, "prepare_many", "prepare_many (a socket batch, no lock)")
    timed(sales, "write_prepared", "write_prepared (a socket batch written)")
    timed(sales, "write_group", "write_group (one transaction)")
    timed(sales, "_write_together", "_write_together (the group)")
    timed(sales, "share_egame", "game FOR SHARE")
    timed(sales, "lock_terminal", "terminal FOR UPDATE")
    timed(sales, "lock_terminals_by_id", "a group's terminals FOR UPDATE")
    timed(sales, "playable", "playable")
    timed(player_cards, "lock_player_card", "card FOR UPDATE")
    timed(player_cards, "spend", "player_cards.spend (ledger post, alone)")
    timed(books, "post_many", "books.post_many (a group's money)")
    timed(audit, "_locked_tip", "audit chain head (lock + read)")
    timed(ECard.objects, "bulk_create", "cards' rows (bulk)")
    if os.environ.get("HALL_BENCH_STATEMENTS"):
        _time_statements(spans, guard)
    import gc

    gc_started: dict[str, float] = {}

    def gc_timed(phase: str, info: dict[str, Any]) -> None:  # the collector's pauses, by generation
        if phase == "start":
            gc_started["t"] = time.perf_counter()
        elif "t" in gc_started:
            with guard:
                spans.setdefault(f"gc pause, generation {info['generation']}", []).append(
                    time.perf_counter() - gc_started.pop("t")
                )

    gc.callbacks.append(gc_timed)

    def dump(*_: Any) -> None:
        with guard:
            Path(timings_out).write_text(json.dumps(spans))

    signal.signal(signal.SIGUSR1, dump)
    from config.web_worker import UVICORN_OPTIONS  # as production's web processes run (no deflate)

    config = uvicorn.Config(
        "config.asgi:application",
        host="127.0.0.1",
        port=port,
        lifespan="off",
        access_log=False,
        log_level="warning",
        http="httptools",
        **UVICORN_OPTIONS,
    )
    uvicorn.Server(config).run()


def _time_statements(spans: dict[str, list[float]], guard: Any) -> None:
    """Every SQL statement the purchase threads run, timed under a label of its first words (--statements):
    which statements a purchase waits on (a lock shows as a long statement)."""
    import re
    import threading

    from django.db.backends.signals import connection_created

    def label_of(sql: str) -> str:
        words = re.sub(r"\s+", " ", re.sub(r"[0-9]+", "N", sql)).strip()
        if words.startswith("WITH"):
            return "sql " + words[:70]
        return "sql " + re.sub(r"SELECT .*? FROM", "SELECT … FROM", words)[:70]

    def wrapper(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if not threading.current_thread().name.startswith("terminal-purchases"):
            return execute(sql, params, many, context)
        t0 = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            took = time.perf_counter() - t0
            with guard:
                spans.setdefault(label_of(sql), []).append(took)

    def install(sender: Any, connection: Any, **kwargs: Any) -> None:
        if wrapper not in connection.execute_wrappers:
            connection.execute_wrappers.append(wrapper)
            commit = connection._commit

            def timed_commit() -> Any:  # a commit is not a statement Django wraps
                return wrapper(lambda *_: commit(), "COMMIT", None, False, None)

            connection._commit = timed_commit

    connection_created.connect(install, weak=False)


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# --- the clients ---------------------------------------------------------------------------------------


async def _request(port: int, path: str, auth: str, body: dict[str, Any]) -> tuple[int, bytes]:
    data = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {auth}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    ).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head + data)
        await writer.drain()
        status_line = await reader.readline()
        status = int(status_line.split()[1])
        length = 0
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _sep, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        payload = await reader.readexactly(length) if length else await reader.read()
        return status, payload
    finally:
        writer.close()


class _Socket:
    """A terminal's WebSocket (the page's door): purchase frames out, answers matched by their key."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        async for text in self.ws:
            frame = json.loads(text)
            if frame.get("type") == "purchase.answer":
                future = self.waiting.pop(str(frame.get("key")), None)
                if future is not None and not future.done():
                    future.set_result(frame)

    async def ask(self, body: dict[str, Any]) -> tuple[int, bytes]:
        future = asyncio.get_running_loop().create_future()
        self.waiting[str(body["key"])] = future
        await self.ws.send(json.dumps({"type": "purchase", **body}))
        frame = await asyncio.wait_for(future, 120)
        payload = frame.get("result") if frame["status"] < 300 else {"error": frame.get("error")}
        return int(frame["status"]), json.dumps(payload).encode()


async def _open_sockets(plan: list[dict[str, Any]]) -> dict[int, _Socket]:
    """One socket per terminal of the plan, opened before the phase (as the pages hold them), 50 at a time."""
    from websockets.asyncio.client import connect

    gate = asyncio.Semaphore(50)

    async def one(item: dict[str, Any]) -> tuple[int, _Socket]:
        device, token = item["auth"].split(" ", 1)[1].split(":", 1)
        url = f"ws://127.0.0.1:{item['port']}/ws/electronic/terminal/?device={device}&token={token}"
        async with gate:
            for attempt in range(5):
                try:
                    ws = await connect(url, open_timeout=60, max_size=2**20)
                    return item["i"], _Socket(ws)
                except Exception:
                    if attempt == 4:
                        raise
                    await asyncio.sleep(1 + attempt)
        raise AssertionError("unreachable")

    return dict(await asyncio.gather(*(one(item) for item in plan)))


async def _run_plan(
    plan: list[dict[str, Any]], start_at: float, sockets: dict[int, _Socket] | None = None
) -> list[dict[str, Any]]:
    loop = asyncio.get_running_loop()
    wall0, mono0 = time.time(), loop.time()

    async def one(item: dict[str, Any]) -> dict[str, Any]:
        due = mono0 + (start_at + item["at"] - wall0)
        await asyncio.sleep(max(0.0, due - loop.time()))
        lag = loop.time() - due
        t0 = time.perf_counter()
        try:
            if sockets is not None:
                status, payload = await sockets[item["i"]].ask(item["body"])
            else:
                status, payload = await _request(item["port"], item["path"], item["auth"], item["body"])
        except Exception as exc:  # counted: the run must show none
            return {"i": item["i"], "status": 0, "error": repr(exc), "ms": 0.0, "lag_ms": lag * 1000}
        ms = (time.perf_counter() - t0) * 1000
        out = {"i": item["i"], "status": status, "ms": ms, "lag_ms": lag * 1000, "at": item["at"]}
        if item.get("keep"):
            out["body"] = payload.decode(errors="replace")
        elif status >= 300:
            out["body"] = payload.decode(errors="replace")[:300]
        return out

    return await asyncio.gather(*(one(item) for item in plan))


def client_process(plan: list[dict[str, Any]], clock: Any, queue: Any, door: str) -> None:
    async def run() -> list[dict[str, Any]]:
        sockets = await _open_sockets(plan) if door == "socket" else None
        queue.put("ready")
        while clock.value == 0:
            await asyncio.sleep(0.001)
        try:
            return await _run_plan(plan, float(clock.value), sockets)
        finally:
            for socket in (sockets or {}).values():
                await socket.ws.close()

    queue.put(asyncio.run(run()))


def run_phase(
    plans: list[list[dict[str, Any]]], lead: float = 1.5, door: str = "http", on_start: Any = None
) -> list[dict[str, Any]]:
    """Every client process runs its part of the plan from one common start time (over the socket door,
    once every client has opened its terminals' sockets)."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    clock = ctx.Value("d", 0.0)
    procs = [ctx.Process(target=client_process, args=(plan, clock, queue, door)) for plan in plans]
    for p in procs:
        p.start()
    for _ in procs:
        assert queue.get() == "ready"
    if on_start is not None:
        on_start()  # the sockets are open: what follows is the phase's own
    clock.value = time.time() + lead
    results: list[dict[str, Any]] = []
    for _ in procs:
        results.extend(queue.get())
    for p in procs:
        p.join()
    return results


def plan_for(
    hall: dict[str, Any], ports: list[int], clients: int, window: float, make: Any, seed: int
) -> list[list[dict[str, Any]]]:
    """One request per terminal, the instants spread evenly over the window and shuffled."""
    rng = random.Random(seed)
    terminals = hall["terminals"]
    slots = list(range(len(terminals)))
    rng.shuffle(slots)
    plans: list[list[dict[str, Any]]] = [[] for _ in range(clients)]
    for i, t in enumerate(terminals):
        item = make(i, t, rng)
        item.update(
            i=i,
            at=window * (slots[i] + rng.random()) / len(terminals),
            port=ports[i % len(ports)],
            auth=f"CashDevice {t['device']}:{t['token']}",
        )
        plans[i % clients].append(item)
    return plans


# --- figures and checks --------------------------------------------------------------------------------


def summary(name: str, results: list[dict[str, Any]], window: float) -> dict[str, Any]:
    ok = sorted(r["ms"] for r in results if 200 <= r["status"] < 300)
    lag = sorted(r["lag_ms"] for r in results)
    codes: dict[int, int] = {}
    for r in results:
        codes[r["status"]] = codes.get(r["status"], 0) + 1
    figures = {
        "n": len(results),
        "ok": len(ok),
        "p50": percentile(ok, 0.5),
        "p95": percentile(ok, 0.95),
        "p99": percentile(ok, 0.99),
        "max": ok[-1] if ok else float("nan"),
        "per_s": len(ok) / window,
        "lag_p99": percentile(lag, 0.99),
        "codes": codes,
    }
    print(
        f"{name:<10} n={figures['n']} ok={figures['ok']} per_s={figures['per_s']:.0f} "
        f"p50={figures['p50']:.1f}ms p95={figures['p95']:.1f}ms p99={figures['p99']:.1f}ms "
        f"max={figures['max']:.1f}ms client_lag_p99={figures['lag_p99']:.1f}ms codes={codes}"
    )
    seconds: dict[int, list[float]] = {}
    for r in results:
        if 200 <= r["status"] < 300 and "at" in r:
            seconds.setdefault(int(r["at"]), []).append(r["ms"])
    if len(seconds) > 1:  # when in the window the slow ones were sent
        print(
            "           p99 by second of the window: "
            + " ".join(f"{percentile(sorted(v), 0.99):.0f}" for _s, v in sorted(seconds.items()))
        )
    for r in results:
        if r["status"] >= 300 or r["status"] == 0:
            print(f"  e.g. {r.get('status')}: {r.get('body') or r.get('error')}")
            break
    return figures


def check(hall: dict[str, Any], bought: dict[int, dict[str, Any]], retried_ok: bool) -> bool:
    """Every answered purchase exactly once in the ledger and the rows; balances and the books exact."""
    from django.db.models import Sum

    from bingo.electronic.models import ECard, Purchase
    from halls.cashier.ledger import Kind
    from halls.cashier.models import LedgerTransaction, PlayerCard, TxKind
    from halls.cashier.services import ledger as books
    from halls.cashier.services import player_cards

    venue = hall["venue"]
    purchases = {p.pk: p for p in Purchase.objects.filter(game_id=hall["game"])}
    problems = []
    if set(purchases) != {b["purchase"] for b in bought.values()}:
        problems.append(f"{len(purchases)} purchases stored, {len(bought)} answered 201")
    total = Decimal(0)
    for i, answer in bought.items():
        p = purchases.get(answer["purchase"])
        if p is None:
            continue
        t = hall["terminals"][i]
        if p.terminal_id != t["terminal"] or Decimal(answer["amount"]) != p.amount:
            problems.append(f"purchase {p.pk} is not the one answered")
        total += p.amount
    counted = ECard.objects.filter(game_id=hall["game"]).count()
    if counted != sum(p.cards for p in purchases.values()):
        problems.append(f"{counted} card rows for {sum(p.cards for p in purchases.values())} cards bought")
    spends = LedgerTransaction.objects.filter(venue_id=venue, kind=TxKind.CARD_SPEND).count()
    if spends != len(purchases):
        problems.append(f"{spends} spends in the ledger for {len(purchases)} purchases")
    spent = dict(
        Purchase.objects.filter(game_id=hall["game"])
        .values_list("player_card__number")
        .annotate(s=Sum("amount"))
    )
    for card in PlayerCard.objects.filter(venue_id=venue):
        if player_cards.balance(card) != FUNDING - spent.get(card.number, Decimal(0)):
            problems.append(f"card {card.number}: balance {player_cards.balance(card)}")
            break
    if books.venue_account(venue, Kind.SALES).balance != total:
        problems.append(f"sales {books.venue_account(venue, Kind.SALES).balance} != {total}")
    if not books.trial_balance(venue).holds:
        problems.append("the trial balance does not hold")
    if not retried_ok:
        problems.append("a retry did not answer its first purchase")
    for problem in problems:
        print(f"  NOT EXACT: {problem}")
    return not problems


# --- main ----------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--terminals", type=int, default=2000)
    parser.add_argument("--window", type=float, default=10.0, help="seconds all of them buy in")
    parser.add_argument("--web", type=int, default=2, help="uvicorn processes (a port each)")
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument("--retries", type=float, default=0.05, help="share of purchases resent afterwards")
    parser.add_argument("--conn-max-age", type=int, help="CONN_MAX_AGE of the web processes (production: 0)")
    parser.add_argument(
        "--pool", type=int, default=0, help="HALL_DB_POOL of the web processes (a psycopg pool of at most N)"
    )
    parser.add_argument(
        "--settle", type=float, default=5.0, help="seconds from the sockets open to the window (socket door)"
    )
    parser.add_argument(
        "--warm",
        type=int,
        default=40,
        help="other terminals that buy once, through the same door, before the window (0: a cold start)",
    )
    parser.add_argument(
        "--statements", action="store_true", help="time every SQL statement of the purchase threads"
    )
    parser.add_argument("--fresh", action="store_true", help="drop and recreate the scratch database")
    parser.add_argument("--quick", action="store_true", help="300 terminals in 5 s")
    parser.add_argument(
        "--door",
        choices=["http", "socket"],
        default="socket",
        help="how the terminals buy: POST .../purchase/, or a purchase frame on the terminal's WebSocket",
    )
    args = parser.parse_args()
    if args.quick:
        args.terminals, args.window = 300, 5.0
    url = os.environ["DATABASE_URL"]
    ensure_database(url, fresh=args.fresh)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    run = f"{int(time.time())}"
    t0 = time.perf_counter()
    hall = provision(run, args.terminals + args.warm)
    connection.close()
    # The last WARM terminals buy before the window (a hall's web processes have sold before: the purchase
    # path's threads, connections and lazy imports are warm); the window is the first TERMINALS'.
    warmers = hall["terminals"][args.terminals :]
    hall["terminals"] = hall["terminals"][: args.terminals]
    print(
        f"provisioned {args.terminals} terminals and cards in {time.perf_counter() - t0:.0f} s; "
        f"{args.web} web processes, {args.clients} client processes, window {args.window:g} s; "
        f"load average {os.getloadavg()[0]:.1f} (the box is shared)"
    )
    workdir = Path(tempfile.mkdtemp(prefix="bench-esales-"))
    env = dict(os.environ)
    if args.conn_max_age is not None:
        env["CONN_MAX_AGE"] = str(args.conn_max_age)
    env["HALL_DB_POOL"] = str(args.pool)
    if args.statements:
        env["HALL_BENCH_STATEMENTS"] = "1"
    ports = [free_port() for _ in range(args.web)]
    timings = [workdir / f"web{i}.json" for i in range(args.web)]
    procs = []
    for i, port in enumerate(ports):
        log = (workdir / f"web{i}.log").open("wb")
        cmd = [PYTHON, str(Path(__file__).resolve()), "_web", str(port), str(timings[i])]
        procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT))
    try:
        for port in ports:
            wait_listening(port)
        # Warm every process up (imports, the first connection) with one card read each.
        warm = plan_for(
            {"terminals": hall["terminals"][: args.web]},
            ports,
            1,
            0.5,
            lambda i, t, rng: {"path": API + "card/", "body": {"card": t["card"]}},
            seed=0,
        )
        run_phase(warm, lead=0.5)
        warm_bought: dict[int, dict[str, Any]] = {}
        if warmers:
            warmed = run_phase(
                plan_for(
                    {"terminals": warmers},
                    ports,
                    1,
                    2.0,
                    lambda i, t, rng: {
                        "path": API + "purchase/",
                        "body": {"card": t["card"], "cards": 1, "key": f"w{i}", "game": hall["game"]},
                        "keep": True,
                    },
                    seed=5,
                ),
                lead=1.0,
                door=args.door,
            )
            summary("warm-up", warmed, 2.0)
            warm_bought = {
                args.terminals + r["i"]: json.loads(r["body"]) for r in warmed if r["status"] == 201
            }

        pids = [proc.pid for proc in procs]
        cpu0 = cpu_seconds(pids)
        baseline = run_phase(
            plan_for(
                hall,
                ports,
                args.clients,
                args.window,
                lambda i, t, rng: {"path": API + "card/", "body": {"card": t["card"]}},
                seed=1,
            )
        )
        cpu1 = cpu_seconds(pids)
        base = summary("baseline", baseline, args.window)
        opened: list[float] = []
        product = run_phase(
            plan_for(
                hall,
                ports,
                args.clients,
                args.window,
                lambda i, t, rng: {
                    "path": API + "purchase/",
                    "body": {
                        "card": t["card"],
                        "cards": rng.choice(SIZES),
                        "key": f"b{i}",
                        "game": hall["game"],
                    },
                    "keep": True,
                },
                seed=2,
            ),
            # Over the socket door the window starts SETTLE seconds after the last socket opened: terminals
            # hold their sockets for hours before a game's sales, so the connect storm is not the window's.
            lead=args.settle if args.door == "socket" else 1.5,
            door=args.door,
            on_start=lambda: opened.append(cpu_seconds(pids)),
        )
        cpu2 = cpu_seconds(pids)
        prod = summary("purchase", product, args.window)
        print(
            f"web CPU per request: baseline {(cpu1 - cpu0) / max(1, len(baseline)) * 1000:.1f} ms, "
            f"purchase {(cpu2 - opened[0]) / max(1, len(product)) * 1000:.1f} ms"
            + (
                f" (the sockets' opening before it: {opened[0] - cpu1:.1f} s)"
                if args.door == "socket"
                else ""
            )
        )
        bought = {r["i"]: json.loads(r["body"]) for r in product if r["status"] == 201}
        # Retries: a share of the purchases resent as they were (same key and body).
        rng = random.Random(3)
        resend = sorted(rng.sample(sorted(bought), max(1, int(len(bought) * args.retries)))) if bought else []
        bodies = {i: b for i, b in bought.items()}
        retry_plan = plan_for(
            {"terminals": [hall["terminals"][i] for i in resend], "game": hall["game"]},
            ports,
            1,
            2.0,
            lambda j, t, _rng: {
                "path": API + "purchase/",
                "body": {
                    "card": t["card"],
                    "cards": len(bodies[resend[j]]["cards"]),
                    "key": f"b{resend[j]}",
                    "game": hall["game"],
                },
                "keep": True,
            },
            seed=4,
        )
        retried = run_phase(retry_plan, lead=0.5, door=args.door) if resend else []
        retried_ok = all(
            r["status"] == 200 and json.loads(r["body"])["purchase"] == bodies[resend[r["i"]]]["purchase"]
            for r in retried
        )
        print(f"retries   n={len(retried)} all answered 200 with the first purchase: {retried_ok}")
        # What the web processes hold after the run (the collector's thresholds trade pauses for memory).
        rss = [_rss_mib(proc.pid) for proc in procs]
        print("web memory after: " + ", ".join(f"{m:.0f} MiB" for m in rss) + " resident")
        for proc in procs:
            proc.send_signal(signal.SIGUSR1)
        time.sleep(2)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    print(f"load average after: {os.getloadavg()[0]:.1f}; web logs in {workdir}")
    print_timings(timings, "where a purchase's time goes")
    hall["terminals"] += warmers
    exact = check(hall, {**bought, **warm_bought}, retried_ok) and not any(
        r["status"] >= 500 or r["status"] == 0 for r in product
    )
    ratio = prod["p99"] / base["p99"] if base["p99"] else float("nan")
    print(
        f"\ndoor={args.door} pool={args.pool} terminals={args.terminals} warm={args.warm} "
        f"window_s={args.window:g} "
        f"purchase_p99_ms={prod['p99']:.1f} "
        f"baseline_p99_ms={base['p99']:.1f} ratio={ratio:.2f} purchases_per_s={prod['per_s']:.0f} "
        f"refused={prod['n'] - prod['ok']} exact={'true' if exact else 'false'}"
    )
    return 0 if exact else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_web":
        web_process(int(sys.argv[2]), sys.argv[3])
    else:
        sys.exit(main())
