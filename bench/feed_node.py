"""Benchmark: INSTALLATIONS installations feeding one regulator node (issue 29, "Scale").

Not a test. The node runs as in production: WEB uvicorn processes serving config.asgi with HALL_ROLE=regulator
(HALL_DB_POOL connections each), on a scratch PostgreSQL database of its own (``--fresh`` drops and recreates
it; migrated) and Redis (the portal's live events go through the channel layer). The installations are
simulated, as bench/network.py simulates venues: CLIENTS asyncio processes, each installation with its own
Ed25519 key registered at the node (halls.regulator.services.registry), its feed numbered 1, 2, 3... and
every message signed (halls.feed.envelope), sent as the product's sender sends it: ``POST
/api/regulator/feed/`` with what is pending (at most BATCH) whenever the previous POST is answered (a
simulated installation keeps no database: a fact wakes its sender at once). What an installation tells is a
night of electronic bingo: each game's commitment, its sales at the close, 30 balls, a Line and a Bingo, its
end, and the pools' amounts every tenth message; every payload valid against the feed's schema (checked
here before the run) and every game committed before its sales and balls, so the node raises no alarm.

The portal's side: an authority user signed in (a session, as the portal's staff) holds the portal's socket
(``/ws/authority/``) on each web process and does what the portal's page does (halls/regulator/static/
regulator/portal.js): on an event it reloads the live page's fragment (``/authority/live/?fragment=1``),
at most once a second, never sooner than 250 ms after the event (``--no-page``: the sockets only, to see the
intake's lag without the pages' load on the node).

Phases, each WINDOW seconds:

1. rate baseline: every installation sends ``GET /.well-known/hall-anchor-key`` back to back: a plain HTTP
   request through the same server and Django stack that applies nothing (no signature, no database);
2. rate: facts written at OFFERED messages/s in all (more than the node takes; an installation whose outbox
   holds BACKLOG unsent messages writes none until it sends): the sustained accepted rate over the window;
3. lag baseline: facts at LOAD x the accepted rate, each answered by a plain GET: fact -> answer;
4. lag: facts on the same schedule as 3, sent as messages: fact (its time at the installation) -> the node's
   answer accepting it; -> the portal's socket telling it (the event of its message); -> the page's fragment
   reloaded after that event (what the authority's screen shows).

Afterwards it checks exactness: each installation's last acknowledged sequence is the node's accepted one, the
node holds each of its messages once (count = last sequence), no message refused, no alarm raised. The web
processes time the intake's parts and report them at the end.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench_feed REDIS_URL=redis://127.0.0.1:6379/5 \\
        .venv/bin/python bench/feed_node.py --fresh --lock /tmp/hall-bench.lock
    .venv/bin/python bench/feed_node.py --fresh --quick     # 60 installations, 5 s windows

The last line sums it up: ``installations=… accepted_msg_per_s=… baseline_req_per_s=… accept_p99_ms=…
portal_event_p50_ms=… portal_event_p99_ms=… portal_page_p99_ms=… lag_baseline_p99_ms=… exact=true``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import multiprocessing as mp
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/hall_bench_feed")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/5")
os.environ["HALL_ROLE"] = "regulator"
os.environ.setdefault("CHANNEL_PREFIX", "bench-feed")
os.environ.setdefault("HALL_CACHE_PREFIX", "bench-feed")

import netsim  # noqa: E402  (bench/netsim.py, beside this script)

PYTHON = sys.executable
FEED_PATH = "/api/regulator/feed/"
BASELINE_PATH = "/.well-known/hall-anchor-key"
FRAGMENT_PATH = "/authority/live/?fragment=1"
BALLS = 30  # balls a simulated game draws
POOL_EVERY = 10  # every tenth message: the pools' amounts
PAGE_MIN_GAP = 1.0  # portal.js: at most one reload a second
PAGE_MIN_WAIT = 0.25  # and never sooner than 250 ms after the event


# --- what an installation tells -------------------------------------------------------------------------


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat()


def game_script(licence: str, number: int, t: float) -> list[tuple[str, dict[str, Any]]]:
    """One electronic game's messages, in order: commitment, sales, balls with a Line and a Bingo, its end."""
    room, game = "Sala electrónica", f"electronic-{number}"
    base = {"venue": licence, "room": room, "game": game}
    balls = random.Random(f"{licence}-{number}").sample(range(1, 91), BALLS)
    out: list[tuple[str, dict[str, Any]]] = [
        (
            "game.committed",
            {
                **base,
                "commitment": hashlib.sha256(f"{licence}-{number}".encode()).hexdigest(),
                "committed_at": iso(t),
            },
        ),
        (
            "game.sales",
            {
                **base,
                "cards": 120,
                "sales": "120.00",
                "sales_digest": hashlib.sha256(f"sales-{licence}-{number}".encode()).hexdigest(),
                "closed_at": iso(t),
            },
        ),
    ]
    for ordinal, ball in enumerate(balls, start=1):
        out.append(("game.ball", {**base, "ordinal": ordinal, "number": ball}))
        if ordinal in (12, BALLS):
            name = "Línea" if ordinal == 12 else "Bingo"
            out.append(
                (
                    "game.prize",
                    {
                        **base,
                        "prize": name.lower(),
                        "name": name,
                        "amount": "12.00" if ordinal == 12 else "60.00",
                        "ordinal": ordinal,
                        "cards": [f"T{number % 7 + 1}-{ordinal:04d}"],
                        "pool": None,
                        "where": "Terminal 3",
                    },
                )
            )
    out.append(("game.ended", {**base, "state": "closed", "balls": BALLS, "seed": None}))
    return out


def pools_payload(licence: str, made: int) -> dict[str, Any]:
    amount = f"{1000 + made * 0.05:.2f}"
    return {
        "venue": licence,
        "pools": [
            {
                "pool": f"{licence}-ACUMULADO",
                "name": "Bolsa acumulada",
                "family": "bingo",
                "levels": [{"level": "1", "amount": amount}],
            }
        ],
    }


class Installation:
    """A simulated installation: its key, its feed (numbered, signed), its sender."""

    def __init__(self, d: dict[str, Any], port: int) -> None:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        self.d = d
        self.key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(d["key"]))
        self.http = netsim.Http(port)
        self.written: list[tuple[dict[str, Any], float]] = []  # (signed message, fact time)
        self.acked = 0
        self.games = 0
        self.script: list[tuple[str, dict[str, Any]]] = []
        self.wake = asyncio.Event()
        self.accepted_at: dict[int, float] = {}  # sequence -> when the node's answer accepted it
        self.statuses: dict[str, int] = {}
        self.requests = 0

    def next_fact(self, t: float) -> tuple[str, dict[str, Any]]:
        if (len(self.written) + 1) % POOL_EVERY == 0:
            return "pool.amounts", pools_payload(self.d["licence"], len(self.written))
        if not self.script:
            self.games += 1
            self.script = game_script(self.d["licence"], self.d["i"] * 10_000 + self.games, t)
        return self.script.pop(0)

    def write(self, t: float) -> None:
        from halls.feed import envelope

        kind, payload = self.next_fact(t)
        signed = envelope.sign(
            envelope.Envelope(self.d["uid"], len(self.written) + 1, kind, iso(t), payload), self.key
        )
        self.written.append((envelope.to_json(signed), t))
        self.wake.set()

    async def send_pending(self, batch: int) -> None:
        pending = self.written[self.acked : self.acked + batch]
        if not pending:
            return
        status, answer = await self.http.request("POST", FEED_PATH, {"messages": [m for m, _t in pending]})
        self.requests += 1
        now = time.time()
        if status == 200:
            accepted = int(answer["accepted"])
        elif status == 409 and isinstance(answer, dict):
            accepted = int(answer["error"]["details"]["accepted"])
            self.statuses[answer["error"]["code"]] = self.statuses.get(answer["error"]["code"], 0) + 1
        else:
            self.statuses[f"http {status}"] = self.statuses.get(f"http {status}", 0) + 1
            await asyncio.sleep(0.2)
            return
        for sequence in range(self.acked + 1, accepted + 1):
            self.accepted_at.setdefault(sequence, now)
        self.acked = max(self.acked, accepted)

    async def sender(self, until: float, batch: int) -> None:
        """As the product's feed sender: whenever something is pending, POST it (at most `batch`), until
        `until` and then until the outbox is drained."""
        while True:
            if self.acked >= len(self.written):
                if time.time() >= until:
                    return
                self.wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), timeout=max(0.01, until - time.time()))
                continue
            await self.send_pending(batch)


async def _baseline(installations: list[Installation], command: dict[str, Any]) -> dict[str, Any]:
    """Each installation sends the plain GET back to back for the window."""
    start, end = command["start"], command["start"] + command["window"]
    await asyncio.sleep(max(0.0, start - time.time()))
    latencies: list[float] = []
    errors = 0

    async def one(inst: Installation) -> None:
        nonlocal errors
        while time.time() < end:
            t0 = time.time()
            status, _body = await inst.http.request("GET", BASELINE_PATH)
            errors += status != 200
            latencies.append(time.time() - t0)

    await asyncio.gather(*(one(inst) for inst in installations))
    return {"n": len(latencies), "latencies": latencies, "errors": errors}


async def _facts(installations: list[Installation], command: dict[str, Any]) -> dict[str, Any]:
    """Open loop: facts at `rate` a second (these installations' share) for the window; sent as messages,
    or, `get`, each answered by the plain GET (the baseline)."""
    start, window, rate, as_get = command["start"], command["window"], command["rate"], command["get"]
    end = start + window
    count = int(rate * window)
    rng = random.Random(command["seed"] * 1000 + installations[0].d["i"])
    cap = command.get("backlog") or 0
    picks = ((start + rng.random() * window, rng.randrange(len(installations))) for _ in range(count))
    schedule = sorted(picks)
    first = {inst.d["i"]: len(inst.written) + 1 for inst in installations}
    latencies: list[float] = []
    errors = 0

    async def get_fact(inst: Installation, at: float) -> None:
        nonlocal errors
        status, _body = await inst.http.request("GET", BASELINE_PATH)
        errors += status != 200
        latencies.append(time.time() - at)

    async def feed() -> None:
        for at, idx in schedule:
            delay = at - time.time()
            if delay > 0:
                await asyncio.sleep(delay)
            inst = installations[idx]
            if as_get:
                asyncio.get_running_loop().create_task(get_fact(inst, at))
            elif not cap or len(inst.written) - inst.acked < cap:
                inst.write(at)

    await asyncio.sleep(max(0.0, start - time.time()))
    if as_get:
        await feed()
        while len(latencies) + errors < count:
            await asyncio.sleep(0.05)
        return {"n": count, "latencies": latencies, "errors": errors}
    for inst in installations:
        inst.statuses, inst.requests = {}, 0
    senders = [asyncio.create_task(inst.sender(end, command["batch"])) for inst in installations]
    await feed()
    in_window = -1
    while not all(s.done() for s in senders):
        await asyncio.sleep(0.02)
        if in_window < 0 and time.time() >= end:
            in_window = sum(inst.acked - first[inst.d["i"]] + 1 for inst in installations)
    if in_window < 0:
        in_window = sum(inst.acked - first[inst.d["i"]] + 1 for inst in installations)
    facts = {}  # (uid, sequence) -> (fact time, accepted time), this phase's messages
    for inst in installations:
        for sequence in range(first[inst.d["i"]], len(inst.written) + 1):
            facts[(inst.d["uid"], sequence)] = (inst.written[sequence - 1][1], inst.accepted_at[sequence])
    return {
        "n": count,
        "in_window": in_window,
        "drained_at": time.time(),
        "facts": facts,
        "statuses": netsim_merge(inst.statuses for inst in installations),
        "requests": sum(inst.requests for inst in installations),
        "acked": {inst.d["uid"]: inst.acked for inst in installations},
    }


def netsim_merge(dicts: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for d in dicts:
        for k, n in d.items():
            out[k] = out.get(k, 0) + n
    return out


def client_process(conn: Any, node: dict[str, Any], mine: list[int], ports: list[int]) -> None:
    """The installations `mine` (indexes), one asyncio loop; phases commanded over `conn`."""

    async def run() -> None:
        loop = asyncio.get_running_loop()
        installations = [Installation(node["installations"][i], ports[i % len(ports)]) for i in mine]
        while True:
            command = await loop.run_in_executor(None, conn.recv)
            if command["phase"] == "quit":
                conn.send({})
                return
            if command["phase"] == "baseline":
                conn.send(await _baseline(installations, command))
            elif command["phase"] == "facts":
                conn.send(await _facts(installations, command))

    asyncio.run(run())


# --- the portal's page ---------------------------------------------------------------------------------


def portal_process(conn: Any, cookie: str, ports: list[int], reload_page: bool) -> None:
    """The authority's open pages: a portal socket on each web process, each reloading its fragment as
    portal.js does. Reports, per message told, when its event arrived and when a fragment reloaded after
    it came back."""
    from websockets.asyncio.client import connect

    async def run() -> None:
        stop = asyncio.Event()
        told: dict[tuple[str, int], float] = {}
        shown: dict[tuple[str, int], float] = {}
        opened: list[int] = []

        async def page(port: int) -> None:
            http = netsim.Http(port, {"Cookie": cookie, "X-Requested-With": "XMLHttpRequest"})
            waiting: list[tuple[str, int]] = []
            last_load = 0.0
            reloading: asyncio.Task[None] | None = None

            async def reload(after: list[tuple[str, int]], wait: float) -> None:
                nonlocal last_load
                await asyncio.sleep(wait)
                last_load = time.time()
                status, _html = await http.request("GET", FRAGMENT_PATH)
                done = time.time()
                if status == 200:
                    for key in after:
                        shown.setdefault(key, done)

            headers = {"Cookie": cookie, "Origin": f"http://127.0.0.1:{port}"}
            async with connect(f"ws://127.0.0.1:{port}/ws/authority/", additional_headers=headers) as ws:
                opened.append(port)
                while not stop.is_set():
                    try:
                        raw = await asyncio.wait_for(ws.recv(), timeout=0.2)
                    except TimeoutError:
                        raw = None
                    now = time.time()
                    if raw is not None:
                        data = json.loads(raw).get("data", {})
                        uid, last = str(data.get("installation")), int(data.get("sequence", 0))
                        for sequence in range(int(data.get("first", last)), last + 1):  # the run it tells
                            told.setdefault((uid, sequence), now)
                            waiting.append((uid, sequence))
                    if waiting and reload_page and (reloading is None or reloading.done()):
                        wait = max(PAGE_MIN_WAIT, last_load + PAGE_MIN_GAP - now)
                        reloading = asyncio.create_task(reload(waiting, wait))
                        waiting = []
                if reloading is not None:
                    await reloading

        tasks = [asyncio.create_task(page(port)) for port in ports]
        deadline = time.time() + 30
        while len(opened) < len(ports) and time.time() < deadline:
            await asyncio.sleep(0.1)
        conn.send({"open": len(opened)})
        await asyncio.get_running_loop().run_in_executor(None, conn.recv)
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        conn.send({"told": told, "shown": shown})

    asyncio.run(run())


# --- the node ------------------------------------------------------------------------------------------


def provision(run: str, count: int) -> dict[str, Any]:
    """The installations registered at the node with their keys; the authority's user, signed in."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.test import Client

    from halls import anchor_lines
    from halls.regulator.authority import AUTHORITY_GROUP
    from halls.regulator.services import registry

    made = []
    for i in range(count):
        key = Ed25519PrivateKey.generate()
        uid = f"{int(run):08x}{i:08x}"
        licence = f"FN{run}-{i:04d}"
        registry.register(
            uid=uid,
            name=f"Bingo {i:03d}",
            kind="venue",
            licence_number=licence,
            jurisdiction="ML",
            public_key=anchor_lines.raw_public(key.public_key()).hex(),
            actor="bench",
        )
        raw = key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        made.append({"i": i, "uid": uid, "licence": licence, "key": raw.hex()})
    user = get_user_model().objects.create_user(username=f"autoridad{run}", password=None)
    user.groups.add(Group.objects.get_or_create(name=AUTHORITY_GROUP)[0])
    client = Client()
    client.force_login(user)
    from django.conf import settings

    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    return {"installations": made, "cookie": cookie}


def schema_self_check() -> None:
    """Every kind this bench sends is valid against the feed's schema (else it would measure refusals)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from halls.feed import envelope, schema

    key = Ed25519PrivateKey.generate()
    messages = [*game_script("FN-0", 1, time.time()), ("pool.amounts", pools_payload("FN-0", 9))]
    for n, (kind, payload) in enumerate(messages, start=1):
        signed = envelope.sign(envelope.Envelope("00000000deadbeef", n, kind, iso(time.time()), payload), key)
        schema.validate(envelope.to_json(signed))


def web_process(port: int, timings_out: str) -> None:
    """uvicorn serving config.asgi on `port` (the regulator's role), the intake's parts timed."""
    import django
    import uvicorn

    django.setup()
    from halls.feed import envelope, schema
    from halls.regulator import api
    from halls.regulator.services import derived, intake, live, livemodel

    spans = netsim.Spans()
    spans.time(api.FeedView, "post", "POST feed (the view, in Django)")
    spans.time(intake, "receive", "intake.receive (a batch)")
    spans.time(intake, "_accept", "intake._accept (inside the lock)")
    spans.time(envelope, "signature_holds", "a signature checked")
    spans.time(schema, "validate", "a message's schema checked")
    spans.time(derived, "check", "derived alarms checked")
    spans.time(livemodel, "apply", "the live read model moved (a run)")
    spans.time(live, "published", "the portal told (a message)")
    spans.dump_on_signal(timings_out)
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


class Clients:
    def __init__(self, node: dict[str, Any], count: int, ports: list[int]) -> None:
        ctx = mp.get_context("spawn")
        self.pipes = []
        for c in range(count):
            mine = [i for i in range(len(node["installations"])) if i % count == c]
            parent, child = ctx.Pipe()
            ctx.Process(target=client_process, args=(child, node, mine, ports), daemon=True).start()
            self.pipes.append(parent)

    def run(self, command: dict[str, Any], share: bool = False) -> list[dict[str, Any]]:
        for pipe in self.pipes:
            sent = dict(command)
            if share and "rate" in sent:
                sent["rate"] = command["rate"] / len(self.pipes)
            pipe.send(sent)
        return [pipe.recv() for pipe in self.pipes]


def check(node: dict[str, Any], acked: dict[str, int]) -> bool:
    """Each installation's acknowledged sequence is the node's accepted one, and the node holds each of its
    messages once; nothing refused, no alarm."""
    from django.db.models import Count, Max

    from halls.regulator.models import Alarm, FeedMessage, FeedRefusal, Installation

    problems = []
    uids = [d["uid"] for d in node["installations"]]
    accepted = dict(Installation.objects.filter(uid__in=uids).values_list("uid", "accepted_sequence"))
    held = {
        r["installation__uid"]: r
        for r in FeedMessage.objects.filter(installation__uid__in=uids)
        .values("installation__uid")
        .annotate(n=Count("id"), top=Max("sequence"))
    }
    for uid in uids:
        want = acked.get(uid, 0)
        got = held.get(uid, {"n": 0, "top": 0})
        if accepted.get(uid) != want or got["n"] != want or (got["top"] or 0) != want:
            problems.append(f"{uid}: acknowledged {want}, node accepted {accepted.get(uid)}, holds {got}")
    refused = FeedRefusal.objects.count()
    if refused:
        reasons = list(FeedRefusal.objects.values_list("reason", flat=True)[:5])
        problems.append(f"{refused} messages refused ({reasons})")
    alarms = Alarm.objects.count()
    if alarms:
        kinds = list(Alarm.objects.values_list("kind", flat=True)[:5])
        problems.append(f"{alarms} alarms raised ({kinds})")
    for problem in problems[:10]:
        print(f"  NOT EXACT: {problem}")
    return not problems


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--installations", type=int, default=300)
    parser.add_argument("--window", type=float, default=15.0, help="seconds of each phase")
    parser.add_argument("--web", type=int, default=2, help="uvicorn processes (a port each)")
    parser.add_argument("--clients", type=int, default=2, help="installation client processes")
    parser.add_argument("--pool", type=int, default=16, help="HALL_DB_POOL of the web processes")
    parser.add_argument("--offered", type=float, default=3000.0, help="facts a second in the rate phase")
    parser.add_argument(
        "--backlog", type=int, default=200, help="rate phase: unsent messages an outbox holds at most"
    )
    parser.add_argument("--load", type=float, default=0.5, help="the lag phases' rate, x the accepted rate")
    parser.add_argument("--batch", type=int, default=200, help="messages a POST at most (HALL_FEED_BATCH)")
    parser.add_argument("--fresh", action="store_true", help="drop and recreate the scratch database")
    parser.add_argument("--lock", help="a file to hold flock'ed while measuring (after the provisioning)")
    parser.add_argument("--quick", action="store_true", help="60 installations, 5 s windows")
    parser.add_argument(
        "--no-page", action="store_true", help="the portal's sockets only: no page reloads its fragment"
    )
    args = parser.parse_args()
    if args.quick:
        args.installations, args.window = 60, 5.0
    url = os.environ["DATABASE_URL"]
    dbname = url.rsplit("/", 1)[1].split("?")[0]
    netsim.ensure_database(url, fresh=args.fresh)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    schema_self_check()
    run = f"{int(time.time()) % 100000}"
    t0 = time.perf_counter()
    node = provision(run, args.installations)
    connection.close()
    print(
        f"registered {args.installations} installations in {time.perf_counter() - t0:.0f} s; {args.web} web "
        f"processes (HALL_ROLE=regulator, HALL_DB_POOL={args.pool}), {args.clients} client processes, "
        f"windows of {args.window:g} s; load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)",
        flush=True,
    )
    if args.lock:
        netsim.hold_lock(args.lock)
    workdir = Path(tempfile.mkdtemp(prefix="bench-feed-"))
    env = dict(os.environ, HALL_DB_POOL=str(args.pool), HALL_ROLE="regulator")
    ports = [netsim.free_port() for _ in range(args.web)]
    timings = [workdir / f"web{i}.json" for i in range(args.web)]
    procs: list[subprocess.Popen[bytes]] = []
    for i, port in enumerate(ports):
        log = (workdir / f"web{i}.log").open("wb")
        cmd = [PYTHON, str(Path(__file__).resolve()), "_web", str(port), str(timings[i])]
        procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT))
    ctx = mp.get_context("spawn")
    portal_pipe, portal_child = ctx.Pipe()
    portal: Any = None
    clients: Clients | None = None
    ok = False
    try:
        for port in ports:
            netsim.wait_listening(port)
        portal = ctx.Process(
            target=portal_process, args=(portal_child, node["cookie"], ports, not args.no_page), daemon=True
        )
        portal.start()
        opened = portal_pipe.recv()["open"]
        print(f"portal sockets open: {opened}/{len(ports)}", flush=True)
        clients = Clients(node, args.clients, ports)

        def pids() -> list[int]:
            return [p for proc in procs for p in netsim.children(proc.pid)]

        def measure(label: str, command: dict[str, Any], share: bool = False) -> list[dict[str, Any]]:
            la0 = os.getloadavg()[0]
            c0, pg0, w0 = netsim.cpu_seconds(pids()), netsim.postgres_cpu(dbname), time.time()
            assert clients is not None
            results = clients.run(command, share=share)
            c1, pg1, w1 = netsim.cpu_seconds(pids()), netsim.postgres_cpu(dbname), time.time()
            print(
                f"  [{label}: the node's web processes {(c1 - c0) / (w1 - w0):.2f} cores, its PostgreSQL "
                f"backends {(pg1 - pg0) / (w1 - w0):.2f} cores, load average "
                f"{max(la0, os.getloadavg()[0]):.1f}]",
                flush=True,
            )
            return results

        # 1. rate baseline
        command = {"phase": "baseline", "start": time.time() + 1, "window": args.window}
        results = measure("rate baseline", command)
        base_rate = sum(r["n"] for r in results) / args.window
        base_errors = sum(r["errors"] for r in results)
        print(f"rate baseline: {base_rate:.0f} GET/s (plain requests, {base_errors} errors)")
        netsim.line("  GET round trip", netsim.ms([x for r in results for x in r["latencies"]]))

        # 2. rate
        start = time.time() + 1.0
        command = {"phase": "facts", "start": start, "window": args.window, "rate": args.offered}
        results = measure(
            "rate", {**command, "get": False, "batch": args.batch, "seed": 2, "backlog": args.backlog}, True
        )
        accepted_rate = sum(r["in_window"] for r in results) / args.window
        total = sum(len(r["facts"]) for r in results)
        requests = sum(r["requests"] for r in results)
        drained = max(r["drained_at"] for r in results) - (start + args.window)
        statuses = netsim_merge(r["statuses"] for r in results)
        print(
            f"rate: {accepted_rate:.0f} messages/s accepted over the window (offered {args.offered:.0f}/s); "
            f"{total} in all in {requests} POSTs ({total / max(1, requests):.1f} a POST), the backlog "
            f"drained {drained:.1f} s after the window; {statuses or 'no refusal'}",
            flush=True,
        )

        # 3. lag baseline
        lag_rate = max(1.0, args.load * accepted_rate)
        command = {"phase": "facts", "window": args.window, "rate": lag_rate, "batch": args.batch}
        results = measure("lag baseline", {**command, "start": time.time() + 1, "get": True, "seed": 3}, True)
        lag_base = netsim.ms([x for r in results for x in r["latencies"]])
        print(f"lag baseline at {lag_rate:.0f} facts/s: each answered by a plain GET")
        netsim.line("  fact -> GET answered", lag_base)

        # 4. lag
        results = measure("lag", {**command, "start": time.time() + 1, "get": False, "seed": 4}, True)
        statuses = netsim_merge([statuses, *(r["statuses"] for r in results)])
        facts: dict[tuple[str, int], tuple[float, float]] = {}
        acked: dict[str, int] = {}
        for r in results:
            facts.update(r["facts"])
            acked.update(r["acked"])
        time.sleep(3.0)  # the last events and the page's last reload
        portal_pipe.send({})
        seen = portal_pipe.recv()
        accept = netsim.ms([a - f for f, a in facts.values()])
        told = [seen["told"][k] - f for k, (f, _a) in facts.items() if k in seen["told"]]
        shown = [seen["shown"][k] - f for k, (f, _a) in facts.items() if k in seen["shown"]]
        event, page = netsim.ms(told), netsim.ms(shown)
        print(f"lag at {lag_rate:.0f} facts/s: {len(facts)} messages")
        netsim.line("  fact -> accepted", accept)
        netsim.line("  fact -> portal's socket", event, f"  ({len(facts) - len(told)} events not delivered)")
        netsim.line("  fact -> portal's page", page, "  (the page reloads at most once a second)")
        for proc in procs:
            proc.send_signal(signal.SIGUSR1)
        time.sleep(2)
        ok = check(node, acked) and not statuses
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
    netsim.print_timings(timings, "where the node's time goes")
    print(
        f"\ninstallations={args.installations} web={args.web} window_s={args.window:g} "
        f"accepted_msg_per_s={accepted_rate:.0f} baseline_req_per_s={base_rate:.0f} "
        f"accept_p50_ms={accept['p50']:.0f} accept_p99_ms={accept['p99']:.0f} "
        f"portal_event_p50_ms={event['p50']:.0f} portal_event_p99_ms={event['p99']:.0f} "
        f"portal_page_p50_ms={page['p50']:.0f} portal_page_p99_ms={page['p99']:.0f} "
        f"lag_baseline_p50_ms={lag_base['p50']:.0f} lag_baseline_p99_ms={lag_base['p99']:.0f} "
        f"exact={'true' if ok else 'false'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_web":
        web_process(int(sys.argv[2]), sys.argv[3])
    else:
        sys.exit(main())
