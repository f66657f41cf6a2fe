"""Benchmark: a wide-area progressive fed by MACHINES machines across VENUES venues at RATE plays/s (issue 31,
"Speed"), beside the same run's local-pool path.

Not a test. One installation plays the central and every venue (the link's loopback: each venue's outbox
delivered to the central's inbox, the central's network stream applied back: the same `inbox.accept` and
`streams.apply` the real link runs), on a scratch PostgreSQL database cloned from the test run's migrated
template (tests/migrated.py). So the central's work AND all twenty venues' work run on this one box, in one
process: a pessimistic figure for the central (in production each venue is its own installation).

Two phases, the same pacing (a tick every 0.25 s, RATE/4 plays spread round-robin over the machines, sent
through the machine gateway as one group-committed batch, as the WebSocket door does):

1. wide: 1,000 machines (VENUES link groups of MACHINES/VENUES, one per venue) on their venues' mirrors of
   one central pool (Grand wide-area, Mini local). Every tick the venues' broadcast read
   (machines.services.broadcast.link_levels: every group's levels, the Grand at the central's amount);
   every FORWARD seconds each venue's batch (`venue.forward_all`), delivered to the central, the
   central's levels published (`central.publish_all`) and applied at the venues.
2. baseline (the local-pool path): another 1,000 machines on VENUES venue-local pools (Grand + Mini), the
   same plays and broadcast read, nothing forwarded.

Reported per phase: plays/s done, tick p50/p99 (a tick that overruns 0.25 s delays the broadcast), the
fewest broadcasts any machine heard in a whole second, the process's CPU per 1,000 plays, and for wide the
batches/s applied at the central and the age of the central's level each broadcast carried (p50/p99). At
the end the wide pool is checked exact: the central's Grand == seed + Σ bets × rate to the sixth decimal,
and the balancing reports hold at the central and in every venue.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test_hall_wap31 REDIS_URL=redis://127.0.0.1:6392/0 \\
        flock /tmp/hall-bench.lock nice .venv/bin/python bench/wide_area.py --seconds 20 --runs 3
"""

from __future__ import annotations

import argparse
import itertools
import os
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


def clone_database(test_url: str, name: str) -> str:
    """A fresh copy of the test run's migrated template (tests/migrated.py) named `name`; its URL."""
    from urllib.parse import urlparse

    from tests import migrated

    parsed = urlparse(test_url)
    server = migrated.Server(
        {
            "HOST": parsed.hostname,
            "PORT": parsed.port,
            "USER": parsed.username,
            "PASSWORD": parsed.password,
            "NAME": parsed.path.lstrip("/"),
        }
    )
    migrated.clone_postgresql(server, name)
    return server.url(name)


@dataclass
class Phase:
    name: str
    machines: list[int]
    seqs: dict[int, int] = field(default_factory=dict)
    plays: int = 0
    bets: Decimal = Decimal(0)
    ticks: list[float] = field(default_factory=list)
    broadcasts: list[float] = field(default_factory=list)  # times of each broadcast read done
    level_age: list[float] = field(default_factory=list)
    reads: list[float] = field(default_factory=list)  # seconds of each broadcast read (link_levels)
    forwards: list[float] = field(default_factory=list)  # seconds of the venues' forward_all
    applies: list[float] = field(default_factory=list)  # seconds of the central applying the batches
    batches: int = 0
    cpu: float = 0.0
    wall: float = 0.0


def _machine(venue: Any, asset: str, operator: Any) -> Any:
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
    """`count` more machines like `machine` in its link group, written in bulk (registering a thousand
    machines one by one through the services takes minutes on a busy box; the rows are the same)."""
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


def setup(venues: int, machines: int) -> tuple[list[int], list[int]]:
    """The network, its central pool and the venues' mirrors with their machines; and the baseline's
    local pools and machines. The machines' ids (wide, baseline)."""
    from halls.models import Jurisdiction, Network, Venue
    from jackpots.services import pools
    from jackpots.services.pools import LevelSpec
    from jackpots.widearea.services import central, venue
    from machines.services import links

    operator = "bench-operator"
    rows = [
        Venue.objects.create(
            name=f"Casino {n}", licence_number=f"AN-WB-{n:04d}", jurisdiction=Jurisdiction.AN10
        )
        for n in range(venues)
    ]
    network = Network.objects.create(name="Red bench", code="WANB", jurisdiction=Jurisdiction.AN10)
    network.venues.set(rows)
    pool = pools.create_pool(
        name="Gran Progresivo",
        code="WANB-GRAND",
        jurisdiction=Jurisdiction.AN10,
        authorisation_ref="AUT-BENCH",
        rule_pack="",
        network=network,
        levels=[LevelSpec(name="Grand", seed=SEED, contribution_rate=GRAND_RATE)],
        carousel_bet=None,
        actor=operator,
    )
    wide = central.make_wide_area(pool=pool, actor=operator, offline_after_seconds=30)
    per = machines // venues
    wide_ids: list[int] = []
    base_ids: list[int] = []
    for n, v in enumerate(rows):
        central.add_venue(wide_area=wide, venue=v, actor=operator)
        mirror = venue.join(
            venue=v,
            network=network,
            central_code="WANB-GRAND",
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
    return wide_ids, base_ids


def run_phase(phase: Phase, rate: int, seconds: float, forward_every: float, wide: bool) -> None:
    from django.utils import timezone

    from halls.link.services import loopback
    from jackpots.widearea.models import WideAreaMirror
    from jackpots.widearea.services import central, venue
    from machines import protocol
    from machines.services import broadcast, gateway

    per_tick = max(1, round(rate * TICK))
    cycle = itertools.cycle(phase.machines)
    venue_ids = sorted(set(WideAreaMirror.objects.values_list("venue_id", flat=True)))
    from jackpots.services import folding

    cpu0, wall0 = time.process_time(), time.perf_counter()
    began = timezone.now()
    next_tick, next_forward, next_fold = wall0, wall0 + forward_every, wall0 + 1.0
    end = wall0 + seconds
    bet = D("1.00")
    while time.perf_counter() < end:
        started = time.perf_counter()
        frames: dict[int, list[protocol.Message]] = {}
        for _ in range(per_tick):
            m = next(cycle)
            seq = phase.seqs[m] = phase.seqs.get(m, 0) + 1
            frames.setdefault(m, []).append(protocol.Play(seq=seq, game_id=f"g{seq}", bet=bet, win=D(0)))
        replies = gateway.receive_many(list(frames.items()))
        accepted = sum(1 for rs in replies for r in rs if r.get("status") == "accepted")
        phase.plays += accepted
        phase.bets += bet * accepted
        read = time.perf_counter()
        items = broadcast.link_levels()  # the venues' broadcast read: what every machine hears this tick
        phase.broadcasts.append(time.perf_counter())
        phase.reads.append(phase.broadcasts[-1] - read)
        if wide:
            now = timezone.now()
            for mirror in WideAreaMirror.objects.only("levels_at"):
                if mirror.levels_at is not None and mirror.levels_at >= began:  # this phase's levels
                    phase.level_age.append((now - mirror.levels_at).total_seconds())
            if time.perf_counter() >= next_forward:
                next_forward += forward_every
                mark = time.perf_counter()
                phase.batches += venue.forward_all()
                phase.forwards.append(time.perf_counter() - mark)
                mark = time.perf_counter()
                for venue_id in venue_ids:
                    loopback.deliver(venue_id=venue_id)
                central.publish_all()
                phase.applies.append(time.perf_counter() - mark)
                loopback.follow(stream="network.WANB")
        assert items
        if time.perf_counter() >= next_fold:  # the beat's fold_pools, every second (both paths)
            next_fold += 1.0
            for pool_id in folding.unfolded().pools:
                folding.fold(pool_id)
        phase.ticks.append(time.perf_counter() - started)
        next_tick += TICK
        pause = next_tick - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
    phase.cpu += time.process_time() - cpu0
    phase.wall += time.perf_counter() - wall0


def min_per_second(times: list[float]) -> int:
    if not times:
        return 0
    first, last = int(times[0]) + 1, int(times[-1])
    counts = {s: 0 for s in range(first, last)}
    for t in times:
        if int(t) in counts:
            counts[int(t)] += 1
    return min(counts.values()) if counts else 0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def check_exact(wide_bets: Decimal) -> dict[str, Any]:
    from halls.link.services import loopback
    from jackpots.models import PoolLevel
    from jackpots.services import folding
    from jackpots.widearea.models import WideAreaMirror, WideAreaPool
    from jackpots.widearea.services import central, venue

    venue.forward_all()
    for venue_id in WideAreaMirror.objects.values_list("venue_id", flat=True):
        loopback.deliver(venue_id=venue_id)
    wide = WideAreaPool.objects.get()
    folding.fold(wide.pool_id)
    grand = PoolLevel.objects.get(pool_id=wide.pool_id, name="Grand").amount
    venues_hold = all(venue.balance(mirror=m)["holds"] for m in WideAreaMirror.objects.all())
    return {
        "grand_exact": grand == SEED + wide_bets * GRAND_RATE,
        "central_holds": central.balance(wide_area=wide)["holds"],
        "venues_hold": venues_hold,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machines", type=int, default=1000)
    parser.add_argument("--venues", type=int, default=20)
    parser.add_argument("--rate", type=int, default=400)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--forward", type=float, default=0.5, help="seconds between a venue's batches")
    parser.add_argument("--database", default="hall_wap31_bench_wide")
    args = parser.parse_args()
    test_url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test_hall_wap31")
    os.environ["DATABASE_URL"] = clone_database(test_url, args.database)
    os.environ["HALL_ROLE"] = "venue"

    import django

    django.setup()
    from django.conf import settings

    settings.HALL_WIDE_AREA_LEVELS_SECONDS = TICK
    began = time.perf_counter()
    wide_ids, base_ids = setup(args.venues, args.machines)
    print(
        f"set up {len(wide_ids)} + {len(base_ids)} machines in {time.perf_counter() - began:.0f} s",
        flush=True,
    )
    wide, base = Phase("wide", wide_ids), Phase("baseline", base_ids)
    for run in range(args.runs):
        for phase, is_wide in ((base, False), (wide, True)):
            before = (phase.plays, phase.cpu, len(phase.ticks))
            run_phase(phase, args.rate, args.seconds, args.forward, is_wide)
            plays = phase.plays - before[0]
            ticks = phase.ticks[before[2] :]
            print(
                f"run {run + 1} {phase.name}: plays/s={plays / args.seconds:.0f} "
                f"tick_p50_ms={pct(ticks, 0.5) * 1000:.0f} tick_p99_ms={pct(ticks, 0.99) * 1000:.0f} "
                f"cpu_s_per_1000_plays={(phase.cpu - before[1]) / max(plays, 1) * 1000:.2f} "
                f"load={os.getloadavg()[0]:.2f}",
                flush=True,
            )
    exact = check_exact(wide.bets)
    for phase in (base, wide):
        line = (
            f"{phase.name}: machines={len(phase.machines)} plays_per_s={phase.plays / phase.wall:.0f} "
            f"tick_p99_ms={pct(phase.ticks, 0.99) * 1000:.0f} "
            f"min_broadcasts_per_s={min_per_second(phase.broadcasts)} "
            f"broadcast_read_p99_ms={pct(phase.reads, 0.99) * 1000:.0f} "
            f"cpu_s_per_1000_plays={phase.cpu / max(phase.plays, 1) * 1000:.2f}"
        )
        if phase is wide:
            line += (
                f" batches_per_s={phase.batches / phase.wall:.1f}"
                f" forward_all_p99_ms={pct(phase.forwards, 0.99) * 1000:.0f}"
                f" central_apply_p99_ms={pct(phase.applies, 0.99) * 1000:.0f}"
                f" level_age_p50_ms={pct(phase.level_age, 0.5) * 1000:.0f}"
                f" level_age_p99_ms={pct(phase.level_age, 0.99) * 1000:.0f}"
            )
        print(line)
    print(f"exact={exact} load_avg={' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0 if all(exact.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
