"""Benchmark: a wide-area progressive fed by MACHINES machines across VENUES venues at RATE plays/s (issue 31,
"Speed"), beside the same run's local-pool path, with the central and the venues apart as the network runs.

Not a test. Processes (multiprocessing, spawn), each an installation on a scratch PostgreSQL database of its
own, cloned from the test run's migrated template (tests/migrated.py):

- the central (HALL_ROLE=central, ``<db>_c``): the network, its pool (Grand, seed 10,000, 1 %) offered as a
  wide-area pool with every venue a member. Its loop: each venue's messages accepted as
  ``POST /api/link/messages/`` does (``inbox.accept_many``), the levels published every 0.25 s
  (``central.publish_all``, the beat's task), every new entry of the network's stream pushed to every
  venue as the ``/ws/link/`` socket does (and a venue's catch-up after a gap answered, as
  ``GET /api/link/streams/`` does), the pool folded every second (the beat's fold).
- INSTALLATIONS venue installations (HALL_ROLE=venue, ``<db>_v<k>``; 20 by default: one venue each, as each
  venue is its own installation), holding VENUES/INSTALLATIONS venues each. Each venue: its mirror of the
  central pool (Grand wide-area, Mini local) and MACHINES/VENUES machines in a link group on it; its local
  pool (Grand + Mini: the baseline path) and as many machines on it. The loop, a tick every 0.25 s: its
  share of RATE plays spread round-robin over the phase's machines, through the machine gateway as one
  group-committed batch (as the WebSocket door does); the broadcast read (``broadcast.link_levels``: what
  every machine hears this tick); the central's entries applied (``streams.apply``, as ``run_link``);
  every FORWARD seconds its batch (``venue.forward_all``, the beat's task) and its pending outbox sent to
  the central (as ``run_link``), acknowledged when the central answers; its pools folded every second.

The link between the processes is a pipe carrying the JSON the link's HTTP body and socket frames carry
(``json.dumps``/``loads`` of the same dicts), into the same ``inbox.accept_many`` and ``streams.apply`` the
real link runs; the HTTP, TLS and WebSocket stack itself is bench/network.py's subject. All processes share
this box's two cores (and whatever else runs on it): the central's own CPU is reported apart.

Phases per run, the same pacing: ``baseline`` (the machines on their venues' local pools, nothing
forwarded) then ``wide`` (the machines on the mirrors). Reported per phase: plays/s done (all venues), tick
p50/p99, the venue installations' CPU per 1,000 plays, the fewest broadcasts carrying the level any link
group (every machine of it) heard in a whole second; for wide also the central's batches/s, the plays/s its
batches carried, its CPU (share of one core, and per 1,000 plays), its apply p50/p99 per message group,
and the age of the central's level each broadcast carried (p50/p99: central's publication -> the venue's
broadcast read). At the end every venue forwards what is left and sends its meters to be reconciled
(``venue.send_meters`` -> ``central.accept_meters`` -> ``venue.reconciled``): the central's Grand must be
seed + sum of wide bets x 1 % to the sixth decimal, the balancing report hold at the central and in every
venue, and no meter difference be found on either side.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_wide31 REDIS_URL=redis://127.0.0.1:6403/0 \\
        flock /tmp/hall-bench.lock nice .venv/bin/python bench/wide_area.py --seconds 20 --runs 3

(the databases are ``<name of DATABASE_URL>_bench_c`` and ``_bench_v<k>``, dropped at the end unless
``--keep``.)
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing as mp
import os
import queue
import sys
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

D = Decimal
GRAND_RATE, MINI_RATE = D("0.01"), D("0.002")
SEED = D("10000")
TICK = 0.25
NETWORK = "WANB"
POOL = "WANB-GRAND"
STREAM = f"network.{NETWORK}"
BET = D("1.00")


def _server(url: str) -> Any:
    from urllib.parse import urlparse

    from tests import migrated

    parsed = urlparse(url)
    return migrated.Server(
        {
            "HOST": parsed.hostname,
            "PORT": parsed.port,
            "USER": parsed.username,
            "PASSWORD": parsed.password,
            "NAME": parsed.path.lstrip("/"),
        }
    )


def _django(url: str, role: str) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ["HALL_ROLE"] = role
    import django

    django.setup()
    from django.conf import settings

    settings.HALL_WIDE_AREA_LEVELS_SECONDS = TICK


def _licence(n: int) -> str:
    return f"AN-WB-{n:04d}"


def _network(venues: int) -> tuple[Any, list[Any]]:
    """The network and its venues, the same in every installation (a venue installation knows them)."""
    from halls.models import Jurisdiction, Network, Venue

    rows = [
        Venue.objects.create(name=f"Casino {n}", licence_number=_licence(n), jurisdiction=Jurisdiction.AN10)
        for n in range(venues)
    ]
    network = Network.objects.create(name="Red bench", code=NETWORK, jurisdiction=Jurisdiction.AN10)
    network.venues.set(rows)
    return network, rows


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def min_per_second(times: list[float], start: float, end: float) -> int:
    """The fewest of `times` in any whole second inside [start, end)."""
    first, last = int(start) + 1, int(end)
    counts = {s: 0 for s in range(first, last)}
    for t in times:
        if int(t) in counts:
            counts[int(t)] += 1
    return min(counts.values()) if counts else 0


# --- the central --------------------------------------------------------------------------------------------


def central_main(url: str, venues: int, inbox_q: Any, outs: list[Any], control: Any, results: Any) -> None:
    _django(url, "central")
    from halls.link.services import inbox, streams
    from halls.models import Jurisdiction
    from jackpots.models import PoolLevel
    from jackpots.services import folding, pools
    from jackpots.services.pools import LevelSpec
    from jackpots.widearea.models import WideAreaDifference, WideAreaPool
    from jackpots.widearea.services import central

    operator = "bench-operator"
    network, rows = _network(venues)
    pool = pools.create_pool(
        name="Gran Progresivo",
        code=POOL,
        jurisdiction=Jurisdiction.AN10,
        authorisation_ref="AUT-BENCH",
        rule_pack="",
        network=network,
        levels=[LevelSpec(name="Grand", seed=SEED, contribution_rate=GRAND_RATE)],
        carousel_bet=None,
        actor=operator,
    )
    wide = central.make_wide_area(pool=pool, actor=operator, offline_after_seconds=30)
    for v in rows:
        central.add_venue(wide_area=wide, venue=v, actor=operator)
    results.put(("central-ready", {v.licence_number: v.pk for v in rows}))

    sent = 0  # the stream's entries pushed so far
    phase: str | None = None
    stats: dict[str, dict[str, Any]] = {}

    def push_new() -> None:
        nonlocal sent
        while True:
            entries = [
                {"stream": e.stream, "sequence": e.sequence, "kind": e.kind, "payload": e.payload}
                for e in streams.after(stream=STREAM, sequence=sent)
            ]
            if not entries:
                return
            frame = json.dumps({"entries": entries})
            for out in outs:
                out.put(frame)
            sent = entries[-1]["sequence"]

    def stat() -> dict[str, Any]:
        return stats.setdefault(
            phase or "idle",
            {"batches": 0, "plays": 0, "applies": [], "publishes": [], "cpu": 0.0, "wall": 0.0},
        )

    cpu0, wall0 = time.process_time(), time.perf_counter()
    next_publish = next_fold = time.time()
    stop = False
    while not stop:
        while True:  # the parent's word
            try:
                command = control.get_nowait()
            except queue.Empty:
                break
            if command[0] == "phase":
                s = stat()
                s["cpu"] += time.process_time() - cpu0
                s["wall"] += time.perf_counter() - wall0
                cpu0, wall0 = time.process_time(), time.perf_counter()
                phase = command[1]
            elif command[0] == "stop":
                stop = True
        wait = max(0.0, min(next_publish, next_fold) - time.time())
        try:
            item = inbox_q.get(timeout=wait)
        except queue.Empty:
            item = None
        if item is not None:
            body = json.loads(item)
            index = body["installation"]
            if "after" in body:  # a venue's catch-up (GET /api/link/streams/…?after=N)
                entries = [
                    {"stream": e.stream, "sequence": e.sequence, "kind": e.kind, "payload": e.payload}
                    for e in streams.after(stream=STREAM, sequence=int(body["after"]), limit=100_000)
                ]
                outs[index].put(json.dumps({"entries": entries}))
            else:
                mark = time.perf_counter()
                batch = inbox.accept_many(venue_id=body["venue"], messages=body["messages"])
                s = stat()
                s["applies"].append(time.perf_counter() - mark)
                for m in body["messages"]:
                    if m["kind"] == "wa.contributions":
                        s["batches"] += 1
                        s["plays"] += int(m["payload"]["levels"].get("Grand", {}).get("count", 0))
                push_new()  # what the messages appended (a reconciliation) goes out on commit
                accepted = [a.sequence for a in batch.accepted]
                outs[index].put(json.dumps({"venue": body["venue"], "ack": max(accepted, default=0)}))
        now = time.time()
        if now >= next_publish:
            next_publish = max(next_publish + TICK, now - TICK)
            mark = time.perf_counter()
            central.publish_all()
            push_new()
            stat()["publishes"].append(time.perf_counter() - mark)
        if now >= next_fold:
            next_fold = max(next_fold + 1.0, now - 1.0)
            for pool_id in folding.unfolded().pools:
                folding.fold(pool_id)
    s = stat()
    s["cpu"] += time.process_time() - cpu0
    s["wall"] += time.perf_counter() - wall0
    push_new()
    wide = WideAreaPool.objects.get()
    folding.fold(wide.pool_id)
    grand = PoolLevel.objects.get(pool_id=wide.pool_id, name="Grand").amount
    results.put(
        (
            "central-done",
            {
                "stats": stats,
                "grand": str(grand),
                "central_holds": central.balance(wide_area=wide)["holds"],
                "differences": WideAreaDifference.objects.filter(side="central").count(),
            },
        )
    )


# --- a venue installation -----------------------------------------------------------------------------------


@dataclass
class VenueStats:
    plays: int = 0
    bets: Decimal = Decimal(0)
    ticks: list[float] = field(default_factory=list)
    reads: list[float] = field(default_factory=list)
    heard: dict[int, list[float]] = field(default_factory=dict)  # link group -> times it heard the level
    level_age: list[float] = field(default_factory=list)
    forwards: list[float] = field(default_factory=list)
    cpu: float = 0.0
    wall: float = 0.0


def _machine(venue: Any, asset: str, operator: str) -> Any:
    from machines.services import registry

    machine, _token = registry.register_machine(
        venue=venue,
        asset_number=asset,
        machine_type="C",
        modality="individual",
        manufacturer="Novomatic",
        model="Gaminator",
        serial=f"SN-{asset}",
        denomination=D("0.20"),
        paytable_id="PT-92",
        software_version="4.1.0",
        location="Sala",
        positions=1,
        actor=operator,
    )
    return machine


def _copies(machine: Any, group: Any, count: int) -> list[int]:
    """`count` more machines like `machine` in its link group, written in bulk (the same rows the services
    write, without a thousand registrations' minutes)."""
    from django.utils import timezone

    from jackpots.models import PoolMember
    from machines.models import LinkMember, Machine

    rows = []
    for i in range(1, count + 1):
        copy = Machine.objects.get(pk=machine.pk)
        copy.pk = None
        copy.asset_number = f"{machine.asset_number[:-2]}-{i}"
        copy.serial = f"{machine.serial}-{i}"
        rows.append(copy)
    made = Machine.objects.bulk_create(rows)
    LinkMember.objects.bulk_create(
        [LinkMember(group=group, machine=m, joined_at=timezone.now()) for m in made]
    )
    PoolMember.objects.bulk_create(
        [
            PoolMember(
                pool_id=group.pool_id,
                source_type="machine",
                source_id=str(m.pk),
                venue_id=m.venue_id,
                added_at=timezone.now(),
                added_by="bench",
            )
            for m in made
        ]
    )
    return [m.pk for m in made]


def _venue_setup(venues: int, mine: list[int], per: int) -> tuple[list[int], list[int], set[int]]:
    """This installation's venues' mirrors, local pools and machines: (wide machine ids, baseline machine
    ids, the wide link groups)."""
    from halls.models import Jurisdiction
    from jackpots.services import pools
    from jackpots.services.pools import LevelSpec
    from jackpots.widearea.services import venue
    from machines.services import links

    operator = "bench-operator"
    network, rows = _network(venues)
    wide_ids: list[int] = []
    base_ids: list[int] = []
    wide_groups: set[int] = set()
    for n in mine:
        v = rows[n]
        mirror = venue.join(
            venue=v,
            network=network,
            central_code=POOL,
            levels=[LevelSpec(name="Grand", seed=D(0), contribution_rate=GRAND_RATE)],
            local_levels=[LevelSpec(name="Mini", seed=D("10"), contribution_rate=MINI_RATE)],
            authorisation_ref="AUT-BENCH",
            actor=operator,
        )
        local = pools.create_pool(
            name=f"Local {n}",
            code=f"LOCAL-{n}",
            jurisdiction=Jurisdiction.AN10,
            authorisation_ref="AUT-BENCH",
            rule_pack="",
            venue=v,
            levels=[
                LevelSpec(name="Grand", seed=SEED, contribution_rate=GRAND_RATE),
                LevelSpec(name="Mini", seed=D("10"), contribution_rate=MINI_RATE),
            ],
            carousel_bet=None,
            actor=operator,
        )
        for ids, group_pool, code in ((wide_ids, mirror.pool, "WAN"), (base_ids, local, "LOC")):
            group = links.create_link_group(venue=v, code=code, name=code, pool=group_pool, actor=operator)
            first = _machine(v, f"{code}{n}-0", operator)  # through the services, as a floor registers it
            links.join_link(group=group, machine=first, actor=operator)
            ids += [first.pk, *_copies(first, group, per - 1)]
            if code == "WAN":
                wide_groups.add(group.pk)
    return wide_ids, base_ids, wide_groups


class Link:
    """This installation's end of the link: its venues' outboxes sent in order, the central's answers and
    entries applied."""

    def __init__(self, index: int, central_ids: dict[int, int], inbox_q: Any, out: Any) -> None:
        self.index, self.central_ids, self.inbox_q, self.out = index, central_ids, inbox_q, out
        self.sent: dict[int, int] = {}  # local venue id -> last sequence sent

    def send(self) -> None:
        from halls.link.services import outbox

        for venue_id, central_id in self.central_ids.items():
            messages = [
                {"sequence": m.sequence, "kind": m.kind, "payload": m.payload}
                for m in outbox.pending(venue_id=venue_id, limit=1000)
                if m.sequence > self.sent.get(venue_id, 0)
            ]
            if messages:
                self.inbox_q.put(
                    json.dumps({"installation": self.index, "venue": central_id, "messages": messages})
                )
                self.sent[venue_id] = messages[-1]["sequence"]

    def receive(self, timeout: float = 0.0) -> int:
        """Apply what the central sent; the number of frames read."""
        from halls.link import registry
        from halls.link.kinds import LinkKind
        from halls.link.services import outbox, streams

        local = {c: v for v, c in self.central_ids.items()}
        frames = 0
        while True:
            try:
                frame = self.out.get(timeout=timeout) if timeout and not frames else self.out.get_nowait()
            except queue.Empty:
                return frames
            frames += 1
            body = json.loads(frame)
            if "ack" in body:
                outbox.acknowledge(venue_id=local[body["venue"]], up_to=int(body["ack"]))
                continue
            entries = [
                registry.CentralEntry(e["stream"], e["sequence"], LinkKind(e["kind"]), e["payload"])
                for e in body["entries"]
            ]
            if entries and streams.apply(stream=STREAM, entries=entries).gap:
                from halls.link.models import StreamPosition

                at = StreamPosition.objects.filter(stream=STREAM).values_list("applied_sequence", flat=True)
                self.inbox_q.put(json.dumps({"installation": self.index, "after": at.first() or 0}))

    def settled(self) -> bool:
        from halls.link.services import outbox

        return all(outbox.backlog(venue_id=v) == 0 for v in self.central_ids)


def venue_main(
    url: str,
    index: int,
    venues: int,
    mine: list[int],
    per: int,
    args: dict[str, Any],
    inbox_q: Any,
    out: Any,
    control: Any,
    results: Any,
) -> None:
    _django(url, "venue")
    from django.utils import timezone

    from halls.models import Venue
    from jackpots.services import folding
    from jackpots.widearea.models import WideAreaDifference, WideAreaMirror
    from jackpots.widearea.services import venue
    from machines import protocol
    from machines.services import broadcast, gateway

    wide_ids, base_ids, wide_groups = _venue_setup(venues, mine, per)
    results.put(("venue-ready", index))
    plan, central_by_licence = control.get()
    central_ids = {
        v.pk: central_by_licence[v.licence_number]
        for v in Venue.objects.filter(licence_number__in=[_licence(n) for n in mine])
    }
    link = Link(index, central_ids, inbox_q, out)
    seqs: dict[int, int] = {}
    per_tick = max(1, round(args["rate"] * TICK * len(mine) / venues))
    out_stats: dict[str, list[Any]] = {}
    for name, start, seconds in plan:
        machines = wide_ids if name == "wide" else base_ids
        cycle = itertools.cycle(machines)
        st = VenueStats()
        while time.time() < start:
            link.receive(timeout=min(0.05, max(0.0, start - time.time())))
        cpu0, wall0 = time.process_time(), time.perf_counter()
        began = timezone.now()
        next_tick = start
        next_forward, next_fold = start + args["forward"], start + 1.0
        end = start + seconds
        while time.time() < end:
            t0 = time.perf_counter()
            link.receive()
            frames: dict[int, list[protocol.Message]] = {}
            for _ in range(per_tick):
                m = next(cycle)
                seq = seqs[m] = seqs.get(m, 0) + 1
                frames.setdefault(m, []).append(protocol.Play(seq=seq, game_id=f"g{seq}", bet=BET, win=D(0)))
            replies = gateway.receive_many(list(frames.items()))
            accepted = sum(1 for rs in replies for r in rs if r.get("status") == "accepted")
            st.plays += accepted
            st.bets += BET * accepted
            mark = time.perf_counter()
            items = broadcast.link_levels()  # what every machine hears this tick
            heard_at = time.time()
            st.reads.append(time.perf_counter() - mark)
            if name == "wide":
                for item in items:
                    if item.group_id in wide_groups and any(lv == "Grand" for lv, _ in item.levels):
                        st.heard.setdefault(item.group_id, []).append(heard_at)
                now = timezone.now()
                for levels_at in WideAreaMirror.objects.values_list("levels_at", flat=True):
                    if levels_at is not None and levels_at >= began:  # this phase's levels
                        st.level_age.append((now - levels_at).total_seconds())
                if time.time() >= next_forward:
                    next_forward += args["forward"]
                    mark = time.perf_counter()
                    venue.forward_all()
                    link.send()
                    st.forwards.append(time.perf_counter() - mark)
            if time.time() >= next_fold:  # the beat's fold_pools, every second (both paths)
                next_fold += 1.0
                for pool_id in folding.unfolded().pools:
                    folding.fold(pool_id)
            st.ticks.append(time.perf_counter() - t0)
            next_tick += TICK
            pause = next_tick - time.time()
            if pause > 0:
                time.sleep(pause)
        st.cpu = time.process_time() - cpu0
        st.wall = time.perf_counter() - wall0
        if name == "wide":
            for group in wide_groups:
                st.heard.setdefault(group, [])
        out_stats.setdefault(name, []).append(
            {
                "plays": st.plays,
                "bets": str(st.bets),
                "ticks": st.ticks,
                "reads": st.reads,
                "min_heard": min(
                    (min_per_second(times, start, end) for times in st.heard.values()), default=None
                ),
                "level_age": st.level_age,
                "forwards": st.forwards,
                "cpu": st.cpu,
                "wall": st.wall,
            }
        )
    # The end: everything forwarded and acknowledged, then each venue's meters reconciled at the central.
    venue.forward_all()
    link.send()
    deadline = time.time() + 600  # a loaded box drains a long backlog slowly
    while not link.settled() and time.time() < deadline:
        link.receive(timeout=0.1)
        link.send()
    for mirror in WideAreaMirror.objects.all():
        venue.send_meters(mirror=mirror)
    link.send()
    while not link.settled() and time.time() < deadline:
        link.receive(timeout=0.1)
    link.receive(timeout=0.5)
    results.put(
        (
            "venue-done",
            {
                "index": index,
                "stats": out_stats,
                "settled": link.settled(),
                "holds": all(venue.balance(mirror=m)["holds"] for m in WideAreaMirror.objects.all()),
                "reconciled": WideAreaMirror.objects.count(),
                "differences": WideAreaDifference.objects.filter(side="venue").count(),
            },
        )
    )


# --- the parent ---------------------------------------------------------------------------------------------


def _wait(results: Any, kind: str, count: int, timeout: float) -> list[Any]:
    got: list[Any] = []
    deadline = time.time() + timeout
    while len(got) < count:
        item = results.get(timeout=max(1.0, deadline - time.time()))
        if item[0] != kind:
            raise RuntimeError(f"expected {kind}, got {item[0]}")
        got.append(item[1])
    return got


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machines", type=int, default=1000)
    parser.add_argument("--venues", type=int, default=20)
    parser.add_argument("--installations", type=int, default=20, help="venue installations (processes)")
    parser.add_argument("--rate", type=int, default=400)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--forward", type=float, default=0.5, help="seconds between a venue's batches")
    parser.add_argument("--keep", action="store_true", help="keep the scratch databases")
    args = parser.parse_args()
    base = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/hall_bench")
    server = _server(base)
    names = [f"{server.name}_bench_c", *(f"{server.name}_bench_v{k}" for k in range(args.installations))]
    began = time.perf_counter()
    from tests import migrated

    migrated.clone_postgresql(server, *names)
    ctx = mp.get_context("spawn")
    results: Any = ctx.Queue()
    inbox_q: Any = ctx.Queue()
    outs: list[Any] = [ctx.Queue() for _ in range(args.installations)]
    controls: list[Any] = [ctx.Queue() for _ in range(args.installations + 1)]
    central = ctx.Process(
        target=central_main, args=(server.url(names[0]), args.venues, inbox_q, outs, controls[0], results)
    )
    central.start()
    (central_by_licence,) = _wait(results, "central-ready", 1, 300)
    shares = [list(range(args.venues))[k :: args.installations] for k in range(args.installations)]
    per = args.machines // args.venues
    procs = [
        ctx.Process(
            target=venue_main,
            args=(
                server.url(names[k + 1]),
                k,
                args.venues,
                shares[k],
                per,
                vars(args),
                inbox_q,
                outs[k],
                controls[k + 1],
                results,
            ),
        )
        for k in range(args.installations)
    ]
    for p in procs:
        p.start()
    _wait(results, "venue-ready", args.installations, 900)
    print(
        f"set up the central and {args.installations} venue installations ({args.venues} venues, "
        f"{per * args.venues} + {per * args.venues} machines) in {time.perf_counter() - began:.0f} s",
        flush=True,
    )
    start = time.time() + 2.0
    plan = []
    for _run in range(args.runs):
        for name in ("baseline", "wide"):
            plan.append((name, start, args.seconds))
            start += args.seconds + 0.5
    for c in controls[1:]:
        c.put((plan, central_by_licence))
    loads = []
    for name, at, _seconds in plan:
        while time.time() < at:
            time.sleep(min(0.05, max(0.0, at - time.time())))
        controls[0].put(("phase", name if name == "wide" else "baseline"))
        loads.append((name, os.getloadavg()))
    time.sleep(max(0.0, plan[-1][1] + args.seconds - time.time()))
    controls[0].put(("phase", "end"))
    venues_done = _wait(results, "venue-done", args.installations, 900)
    controls[0].put(("stop",))
    (central_done,) = _wait(results, "central-done", 1, 120)
    for p in [*procs, central]:
        p.join(timeout=30)

    for run in range(args.runs):
        for name in ("baseline", "wide"):
            parts = [v["stats"][name][run] for v in venues_done]
            plays = sum(p["plays"] for p in parts)
            ticks = [t for p in parts for t in p["ticks"]]
            cpu = sum(p["cpu"] for p in parts)
            load = loads[run * 2 + (name == "wide")][1]
            line = (
                f"run {run + 1} {name}: plays_per_s={plays / args.seconds:.0f} "
                f"tick_p50_ms={pct(ticks, 0.5) * 1000:.0f} tick_p99_ms={pct(ticks, 0.99) * 1000:.0f} "
                f"broadcast_read_p99_ms={pct([r for p in parts for r in p['reads']], 0.99) * 1000:.0f} "
                f"venues_cpu_s_per_1000_plays={cpu / max(plays, 1) * 1000:.2f}"
            )
            if name == "wide":
                c = central_done["stats"]["wide"]
                heard = [p["min_heard"] for p in parts if p["min_heard"] is not None]
                ages = [a for p in parts for a in p["level_age"]]
                line += (
                    f" min_broadcasts_heard_per_machine_per_s={min(heard, default=0)}"
                    f" level_age_p50_ms={pct(ages, 0.5) * 1000:.0f}"
                    f" level_age_p99_ms={pct(ages, 0.99) * 1000:.0f}"
                    f" forward_p99_ms={pct([f for p in parts for f in p['forwards']], 0.99) * 1000:.0f}"
                )
                if run == args.runs - 1:  # the central's figures are for every wide phase together
                    line += (
                        f"\ncentral (all wide phases): batches_per_s={c['batches'] / c['wall']:.1f}"
                        f" plays_carried_per_s={c['plays'] / c['wall']:.0f}"
                        f" cpu_share_of_a_core={c['cpu'] / c['wall']:.2f}"
                        f" cpu_s_per_1000_plays={c['cpu'] / max(c['plays'], 1) * 1000:.2f}"
                        f" cpu_ms_per_batch={c['cpu'] / max(c['batches'], 1) * 1000:.1f}"
                        f" apply_p50_ms={pct(c['applies'], 0.5) * 1000:.1f}"
                        f" apply_p99_ms={pct(c['applies'], 0.99) * 1000:.1f}"
                        f" publish_p99_ms={pct(c['publishes'], 0.99) * 1000:.1f}"
                    )
            line += f" load={' '.join(f'{x:.2f}' for x in load)}"
            print(line, flush=True)
    wide_bets = sum((D(r["bets"]) for v in venues_done for r in v["stats"]["wide"]), D(0))
    exact = {
        "grand_exact": D(central_done["grand"]) == SEED + wide_bets * GRAND_RATE,
        "central_holds": central_done["central_holds"],
        "venues_hold": all(v["holds"] for v in venues_done),
        "all_acknowledged": all(v["settled"] for v in venues_done),
        "no_differences": central_done["differences"] == 0
        and all(v["differences"] == 0 for v in venues_done),
    }
    print(
        f"exact={exact} grand={central_done['grand']} wide_bets={wide_bets} "
        f"load_avg={' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    if not args.keep:
        with server.admin() as admin:
            for name in names:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return 0 if all(exact.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
