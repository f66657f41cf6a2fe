"""Benchmark: casino-table pool bets through the SERVICE layer from many concurrent croupiers (issue 9),
beside the plain INSERT baseline of bench/contributions.py with the same clients, in the same run.

Not a test. In a scratch PostgreSQL database (created and migrated if missing) it creates one pool (EU
póquer sin descarte jackpot, no stipulated bet) with one table per client, then:

1. product: PROCESSES x THREADS croupiers, each at its own table, run hands for SECONDS: open a hand,
   register the seats' pool bets with `register_bets` (SEATS_PER_CALL seats a call; outside any
   transaction, so each process's concurrent calls go through its group, jackpots.tables.services.bets),
   void the hand once its 9 seats have bet, open the next. Then it folds and checks the money: every
   answered seat bet is one stored contribution and one seat row, the stored meter shares are the
   engine's split of every answered bet to the micro-unit, the meter is the seed plus their sum, the
   balancing report holds, and there is one audit entry per call that wrote;
2. `--inline`: the same with the group switched off (HALL_TABLE_GROUP_COMMIT=false): each call its own
   transaction, as before issue 9;
3. baseline: bench/contributions.py's plain psycopg INSERT of one contribution row per commit, same
   clients, same seconds.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench_tables \\
        .venv/bin/python bench/table_bets.py --processes 2 --threads 16 --seconds 30 --fresh --inline

Counted: seat bets (= contributions) per second over the whole phase, opening and voiding hands
included. The last line sums it up:
``clients=32 bets_per_s=… baseline_per_s=… ratio=… exact=true``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import subprocess
import sys
import threading
import time
from array import array
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import contributions as plain

SEATS = 9
MINIMUM = Decimal("10.00")
BETS = [Decimal("0.50"), Decimal("1.00"), Decimal("1.37"), Decimal("2.00"), Decimal("5.00")]
PACK = "EU_PSD_JACKPOT"
RATE, RESERVE = Decimal("0.723457"), Decimal("0.051234")


def create_floor(run: str, tables: int) -> tuple[int, Decimal, int, list[int]]:
    """A pool with `tables` member tables and a croupier: pool id, seed, croupier id, table ids."""
    from django.contrib.auth.models import User

    from halls.models import Jurisdiction, Role, StaffRole, Venue
    from jackpots.services import pools
    from jackpots.tables.services import tables as table_service

    venue = Venue.objects.create(
        name=f"Bench {run}", licence_number=f"BT-{run}", jurisdiction=Jurisdiction.EU
    )
    croupier = User.objects.create_user(username=f"bench-{run}")
    StaffRole.objects.create(user=croupier, venue=venue, role=Role.OPERATOR)
    seed = Decimal("5000")
    pool = pools.create_pool(
        name=f"Bench tables {run}",
        code=f"BT-{run}"[:40],
        jurisdiction=Jurisdiction.EU,
        authorisation_ref="BENCH",
        rule_pack=PACK,
        venue=venue,
        levels=[pools.LevelSpec(name="Jackpot", seed=seed, contribution_rate=RATE, reserve_rate=RESERVE)],
        carousel_bet=None,
        actor=croupier,
    )
    ids = []
    for number in range(1, tables + 1):
        table = table_service.create_table(
            venue=venue,
            number=number,
            name=f"Mesa {number}",
            game="poker_sin_descarte",
            table_minimum=MINIMUM,
            rule_pack=PACK,
            actor=croupier,
            seats=SEATS,
        )
        ids.append(table_service.join_pool(table=table, pool=pool, actor=croupier).pk)
    return pool.pk, seed, croupier.pk, ids


def croupier(
    target: tuple[int, int, int], worker: str, clock: Any, seconds: float, out: dict[str, Any]
) -> None:
    """One croupier at its table: hands of SEATS pool bets, SEATS_PER_CALL seats per register_bets call."""
    from django.contrib.auth.models import User
    from django.db import connection

    from halls import money
    from jackpots.tables import rules
    from jackpots.tables.models import CasinoTable
    from jackpots.tables.services import hands

    table_id, user_id, per_call = target
    rng = random.Random(worker)
    user = User.objects.get(pk=user_id)
    table = CasinoTable.objects.get(pk=table_id)
    latencies: list[int] = []
    per_second = [0] * (int(seconds) + 2)
    to_meter = bets_sum = Decimal(0)
    errors = n = calls = hand_count = 0
    hand = hands.open_hand(table=table, actor=user)
    seat = 1
    start_at, stop_at = plain.wait_for_start(clock, seconds)
    perf = time.perf_counter_ns
    while time.time() < stop_at:
        try:
            if seat > SEATS:
                hands.void_hand(hand=hand, actor=user, reason="bench")
                hand = hands.open_hand(table=table, actor=user)
                hand_count += 1
                seat = 1
            seats = range(seat, min(seat + per_call, SEATS + 1))
            bets = [rules.SeatBetInput(s, MINIMUM, rng.choice(BETS)) for s in seats]
            t0 = perf()
            hands.register_bets(hand=hand, actor=user, bets=bets)
            latencies.append(perf() - t0)
        except Exception as exc:  # counted and reported: the run must show none
            errors += 1
            print(f"{worker}: {exc!r}", file=sys.stderr)
            seat = SEATS + 1  # a new hand
            continue
        seat += len(bets)
        calls += 1
        n += len(bets)
        per_second[min(int(time.time() - start_at), len(per_second) - 1)] += len(bets)
        for bet in bets:
            to_meter += money.split_contribution(bet.pool_bet, RATE, RESERVE).to_meter
            bets_sum += bet.pool_bet
    connection.close()
    out.update(
        latencies=latencies,
        to_meter=to_meter,
        bets=bets_sum,
        errors=errors,
        n=n,
        calls=calls,
        hands=hand_count,
        per_second=per_second,
    )


def process_main(
    targets: list[tuple[int, int, int]], index: int, clock: Any, seconds: float, queue: Any
) -> None:
    plain.setup_django()
    results: list[dict[str, Any]] = [{} for _ in targets]
    workers = [
        threading.Thread(target=croupier, args=(target, f"p{index}t{t}", clock, seconds, results[t]))
        for t, target in enumerate(targets)
    ]
    for w in workers:
        w.start()
    queue.put("ready")
    for w in workers:
        w.join()
    from jackpots.tables.services.bets import bet_group

    queue.put(
        {
            "latencies": array("q", (x for r in results for x in r["latencies"])),
            "to_meter": str(sum((r["to_meter"] for r in results), Decimal(0))),
            "bets": str(sum((r["bets"] for r in results), Decimal(0))),
            "errors": sum(r["errors"] for r in results),
            "n": sum(r["n"] for r in results),
            "calls": sum(r["calls"] for r in results),
            "hands": sum(r["hands"] for r in results),
            "per_second": [sum(col) for col in zip(*(r["per_second"] for r in results), strict=True)],
            "groups": bet_group().groups,
            "items": bet_group().items,
        }
    )


def run_product(
    tables: list[int], user_id: int, per_call: int, processes: int, threads: int, seconds: float
) -> list[dict[str, Any]]:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    clock = ctx.Value("d", 0.0)
    procs = []
    for i in range(processes):
        mine = [(table, user_id, per_call) for table in tables[i * threads : (i + 1) * threads]]
        procs.append(ctx.Process(target=process_main, args=(mine, i, clock, seconds, queue)))
    for p in procs:
        p.start()
    for _ in procs:
        assert queue.get() == "ready"
    clock.value = time.time() + 1.0
    results = [queue.get() for _ in procs]
    for p in procs:
        p.join()
    return results


def load() -> str:
    out = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout
    return "load average" + out.rsplit("load average", 1)[-1].strip()  # (the clock would be in TIME_ZONE)


def measure(
    name: str, run: str, tables: int, per_call: int, processes: int, threads: int, seconds: float
) -> tuple[float, bool]:
    """A product phase on a floor of its own: its bets per second and whether the money is exact."""
    from django.db import connection
    from django.db.models import Count, Sum

    from halls.eventtypes import EventType
    from halls.models import AuditEntry
    from jackpots.models import Contribution, PoolLevel
    from jackpots.services.folding import fold
    from jackpots.services.reports import balance
    from jackpots.tables.models import SeatBet

    pool_id, seed, user_id, table_ids = create_floor(run, tables)
    connection.close()
    print(f"  load before:   {load()}")
    results = run_product(table_ids, user_id, per_call, processes, threads, seconds)
    print(f"  load after:    {load()}")
    per_s = plain.summary(name, results, seconds)
    calls = sum(r["calls"] for r in results)
    hand_count = sum(r["hands"] for r in results)
    print(
        f"  calls:         {calls:,} register_bets ({calls / seconds:,.0f}/s), "
        f"{hand_count:,} hands voided+opened"
    )
    n = sum(r["n"] for r in results)
    errors = sum(r["errors"] for r in results)
    answered_to_meter = sum((Decimal(r["to_meter"]) for r in results), Decimal(0))
    answered_bets = sum((Decimal(r["bets"]) for r in results), Decimal(0))
    fold(pool_id)
    level = PoolLevel.objects.get(pool_id=pool_id)
    stored = Contribution.objects.filter(pool_id=pool_id).aggregate(
        n=Count("id"), m=Sum("to_meter"), b=Sum("bet")
    )
    seat_rows = SeatBet.objects.filter(hand__table_id__in=table_ids).count()
    entries = AuditEntry.objects.filter(
        venue__casino_tables__pk=table_ids[0], action=EventType.HAND_BETS_REGISTERED.value
    ).count()
    meter_exact = level.amount == seed + answered_to_meter
    balanced = balance(level.pool).holds
    print(
        f"  stored:        {stored['n']} contributions, {seat_rows} seat rows, {entries} audit entries "
        f"(answered {n} bets in {calls} calls)"
    )
    print(
        f"  meter:         {level.amount} = seed {seed} + engine's meter shares {answered_to_meter}: "
        f"{meter_exact}"
    )
    print(f"  balancing report holds: {balanced}")
    exact = (
        meter_exact
        and balanced
        and errors == 0
        and stored["n"] == n == seat_rows
        and stored["b"] == answered_bets
        and stored["m"] == answered_to_meter
        and entries == calls
    )
    connection.close()
    return per_s, exact


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of each phase")
    parser.add_argument("--quick", action="store_true", help="10 s per phase")
    parser.add_argument("--fresh", action="store_true", help="drop and recreate the scratch database first")
    parser.add_argument("--seats-per-call", type=int, default=1, help="seats in one register_bets call (1-9)")
    parser.add_argument("--inline", action="store_true", help="also measure with the group switched off")
    parser.add_argument("--no-baseline", action="store_true", help="measure the product only")
    args = parser.parse_args()
    seconds = 10.0 if args.quick else args.seconds
    per_call = max(1, min(SEATS, args.seats_per_call))
    clients = args.processes * args.threads

    plain.ensure_database(os.environ["DATABASE_URL"], fresh=args.fresh)
    plain.setup_django()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    run = f"{int(time.time())}-{os.getpid()}"
    print(
        f"{args.processes} processes x {args.threads} threads = {clients} croupiers, "
        f"{per_call} seat(s) a call, {seconds:g} s per phase"
    )

    os.environ["HALL_TABLE_GROUP_COMMIT"] = "true"  # read by the spawned processes' settings
    bets_per_s, exact = measure(
        "product (register_bets, grouped per process)",
        run,
        clients,
        per_call,
        args.processes,
        args.threads,
        seconds,
    )
    inline_per_s = float("nan")
    if args.inline:
        os.environ["HALL_TABLE_GROUP_COMMIT"] = "false"
        inline_per_s, inline_exact = measure(
            "product, group off (each call its own transaction)",
            f"{run}-i",
            clients,
            per_call,
            args.processes,
            args.threads,
            seconds,
        )
        exact = exact and inline_exact
        os.environ["HALL_TABLE_GROUP_COMMIT"] = "true"

    baseline_per_s = 0.0
    baseline_errors = 0
    if not args.no_baseline:
        from jackpots.models import PoolLevel

        pool_id, _ = plain.create_pool(f"{run}-plain")
        level = PoolLevel.objects.get(pool_id=pool_id)
        connection.close()
        target = (pool_id, level.pk, level.contribution_rate, level.reserve_rate)
        print(f"  load before:   {load()}")
        results = plain.run_phase("baseline", target, run, args.processes, args.threads, seconds)
        print(f"  load after:    {load()}")
        baseline_per_s = plain.summary(
            "baseline (plain psycopg INSERT, autocommit, same clients)", results, seconds
        )
        baseline_errors = sum(r["errors"] for r in results)
    ratio = bets_per_s / baseline_per_s if baseline_per_s else float("nan")
    ok = exact and not baseline_errors
    print("RESULT:", "OK" if ok else "MISMATCH")
    print(
        f"clients={clients} bets_per_s={bets_per_s:.0f} inline_per_s={inline_per_s:.0f} "
        f"baseline_per_s={baseline_per_s:.0f} ratio={ratio:.2f} exact={str(exact).lower()}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
