"""Benchmark: pool contributions through the SERVICE layer from many concurrent clients (issues 3 and 9),
beside a plain INSERT baseline with the same clients, in the same run.

Not a test. It creates two pools in a scratch PostgreSQL database (created and migrated if missing), then:

1. product: PROCESSES x THREADS clients each call jackpots.services.contributions.contribute() in a loop
   for SECONDS (outside any transaction: the product's hot path, so each process's concurrent callers go
   through its group commit, halls.group_commit), while a folder folds the pool every FOLD_EVERY seconds
   (as the beat task does); then it folds and checks that the meter equals the seed plus the exact sum of
   every contribution's meter share the clients were answered, and that the database holds exactly the
   calls that were answered (count, bets, meter shares);
2. baseline: the same PROCESSES x THREADS clients, each on its own plain psycopg connection in autocommit,
   INSERT one contribution row (split computed in Python by the engine) into the same table for the
   second pool, one statement and one commit per contribution, for SECONDS.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench_contrib \\
        .venv/bin/python bench/contributions.py --processes 2 --threads 16 --seconds 60 --fresh

`--quick`: 10 s per phase (about 30 s in all). Target on the 2-core box: >= 5,000 contributions/s with
32 clients and at least the baseline. The last line sums it up:
``clients=32 product_per_s=… baseline_per_s=… ratio=… exact=true``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import sys
import threading
import time
from array import array
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/hall_bench")

BETS = [Decimal("0.50"), Decimal("1.00"), Decimal("1.37"), Decimal("2.00"), Decimal("5.00")]
TABLES = 8


def ensure_database(url: str, *, fresh: bool) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1].split("?")[0]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if fresh:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


def setup_django() -> None:
    import django
    from django.conf import settings

    django.setup()
    if os.environ.get("HALL_BENCH_GROUP_SIZE"):
        settings.HALL_POOL_GROUP_SIZE = int(os.environ["HALL_BENCH_GROUP_SIZE"])
    if os.environ.get("HALL_BENCH_GROUP_RUNNERS"):
        settings.HALL_POOL_GROUP_RUNNERS = int(os.environ["HALL_BENCH_GROUP_RUNNERS"])
    if os.environ.get("HALL_BENCH_GROUP_WAIT_MS"):
        settings.HALL_POOL_GROUP_WAIT_MS = float(os.environ["HALL_BENCH_GROUP_WAIT_MS"])


def create_pool(run: str) -> tuple[int, Decimal]:
    """A one-level AN10 carrusel with TABLES member tables; its id and seed."""
    from halls.models import Jurisdiction, Venue
    from jackpots.services import pools

    venue, _ = Venue.objects.get_or_create(
        licence_number="BENCH-AN10", defaults={"name": "Bench casino", "jurisdiction": Jurisdiction.AN10}
    )
    seed = Decimal("5000")
    pool = pools.create_pool(
        name=f"Bench {run}",
        code=f"BENCH-{run}",
        jurisdiction=Jurisdiction.AN10,
        authorisation_ref="BENCH",
        rule_pack="AN10_PSD_CARRUSEL",
        venue=venue,
        levels=[
            pools.LevelSpec(
                name="Carrusel",
                seed=seed,
                contribution_rate=Decimal("0.723457"),
                reserve_rate=Decimal("0.051234"),
            )
        ],
        carousel_bet=Decimal("1.00"),
        actor="bench",
    )
    for table in range(1, TABLES + 1):
        pools.add_member(pool=pool, source_type="table", source_id=str(table), venue=venue, actor="bench")
    return pool.pk, seed


def wait_for_start(clock: Any, seconds: float) -> tuple[float, float]:
    """Wait until the parent has set the start time (every process ready); (start, stop)."""
    while clock.value == 0:
        time.sleep(0.001)
    start_at = float(clock.value)
    while time.time() < start_at:
        time.sleep(0.001)
    return start_at, start_at + seconds


def client(pool_id: int, run: str, worker: str, clock: Any, seconds: float, out: dict[str, Any]) -> None:
    """A product client: contribute() in a loop (outside a transaction: through the group commit)."""
    from django.db import connection

    from jackpots.services.contributions import contribute
    from jackpots.sources import PoolSource

    rng = random.Random(worker)
    latencies: list[int] = []
    per_second = [0] * (int(seconds) + 2)
    to_meter = Decimal(0)
    bets = Decimal(0)
    errors = 0
    n = 0
    connection.ensure_connection()
    start_at, stop_at = wait_for_start(clock, seconds)
    perf = time.perf_counter_ns
    while True:
        t0 = perf()
        if time.time() >= stop_at:
            break
        bet = rng.choice(BETS)
        table = rng.randint(1, TABLES)
        try:
            receipt = contribute(
                pool=pool_id,
                source=PoolSource.of("table", table).at("seat", rng.randint(1, 7)),
                bet=bet,
                idempotency_key=f"{run}-{worker}-{n}",
                actor=f"table-{table}",
            )
        except Exception as exc:  # counted and reported: the run must show none
            errors += 1
            print(f"{worker}: {exc!r}", file=sys.stderr)
            continue
        latencies.append(perf() - t0)
        per_second[int(time.time() - start_at)] += 1
        to_meter += receipt.to_meter
        bets += bet
        n += 1
    connection.close()
    out.update(latencies=latencies, to_meter=to_meter, bets=bets, errors=errors, n=n, per_second=per_second)


# The baseline: one plain INSERT of a contribution row per call, autocommit, split computed in Python.
PLAIN_INSERT = """
INSERT INTO jackpots_contribution
    (pool_id, level_id, source, bet, to_meter, to_reserve, house, idempotency_key, actor, created_at)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, now())
"""


def baseline_client(
    target: tuple[int, int, Decimal, Decimal],
    run: str,
    worker: str,
    clock: Any,
    seconds: float,
    out: dict[str, Any],
) -> None:
    """A baseline client: its own psycopg connection, one INSERT (one commit) per contribution."""
    import psycopg

    from halls import money

    pool_id, level_id, rate, reserve = target
    rng = random.Random(worker)
    latencies: list[int] = []
    per_second = [0] * (int(seconds) + 2)
    to_meter = Decimal(0)
    bets = Decimal(0)
    errors = 0
    n = 0
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        cursor = conn.cursor()
        start_at, stop_at = wait_for_start(clock, seconds)
        perf = time.perf_counter_ns
        while True:
            t0 = perf()
            if time.time() >= stop_at:
                break
            bet = rng.choice(BETS)
            table = rng.randint(1, TABLES)
            split = money.split_contribution(bet, rate, reserve)
            try:
                cursor.execute(
                    PLAIN_INSERT,
                    (
                        pool_id,
                        level_id,
                        f"table:{table}/seat:{rng.randint(1, 7)}",
                        bet,
                        split.to_meter,
                        split.to_reserve,
                        split.house,
                        f"{run}-{worker}-{n}",
                        f"table-{table}",
                    ),
                    prepare=True,
                )
            except Exception as exc:  # counted and reported
                errors += 1
                print(f"{worker}: {exc!r}", file=sys.stderr)
                continue
            latencies.append(perf() - t0)
            per_second[int(time.time() - start_at)] += 1
            to_meter += split.to_meter
            bets += bet
            n += 1
    out.update(latencies=latencies, to_meter=to_meter, bets=bets, errors=errors, n=n, per_second=per_second)


def process_main(
    mode: str, target: Any, run: str, index: int, threads: int, clock: Any, seconds: float, queue: Any
) -> None:
    setup_django()
    results: list[dict[str, Any]] = [{} for _ in range(threads)]
    fn = client if mode == "product" else baseline_client
    workers = [
        threading.Thread(target=fn, args=(target, run, f"p{index}t{t}", clock, seconds, results[t]))
        for t in range(threads)
    ]
    for w in workers:
        w.start()
    queue.put("ready")
    for w in workers:
        w.join()
    groups = items = 0
    if mode == "product":
        from jackpots.services.contributions import group_commit

        groups, items = group_commit().groups, group_commit().items
    queue.put(
        {
            "latencies": array("q", (x for r in results for x in r["latencies"])),
            "to_meter": str(sum((r["to_meter"] for r in results), Decimal(0))),
            "bets": str(sum((r["bets"] for r in results), Decimal(0))),
            "errors": sum(r["errors"] for r in results),
            "n": sum(r["n"] for r in results),
            "per_second": [sum(col) for col in zip(*(r["per_second"] for r in results), strict=True)],
            "groups": groups,
            "items": items,
        }
    )


def folder(pool_id: int, every: float, clock: Any, seconds: float, out: list[float]) -> None:
    """Fold the pool every `every` seconds during the product phase (as the beat task does)."""
    from django.db import connection

    from jackpots.services.folding import fold

    _, stop_at = wait_for_start(clock, seconds)
    while time.time() < stop_at:
        time.sleep(every)
        t0 = time.perf_counter()
        fold(pool_id)
        out.append(time.perf_counter() - t0)
    connection.close()


def percentile(ordered: list[float], q: float) -> float:
    """Nearest-rank percentile of a sorted list."""
    if not ordered:
        return float("nan")
    rank = max(1, round(q / 100 * len(ordered) + 0.5 - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]


def run_phase(
    mode: str,
    target: Any,
    run: str,
    processes: int,
    threads: int,
    seconds: float,
    during: Any = None,
) -> list[dict[str, Any]]:
    """PROCESSES x THREADS clients of one kind for SECONDS (spawned processes); their results.
    `during(clock)`: a thread to run beside them (the folder), started with the same clock."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    clock = ctx.Value("d", 0.0)
    procs = [
        ctx.Process(target=process_main, args=(mode, target, run, i, threads, clock, seconds, queue))
        for i in range(processes)
    ]
    for p in procs:
        p.start()
    side = threading.Thread(target=during, args=(clock,)) if during else None
    if side:
        side.start()
    for _ in procs:
        assert queue.get() == "ready"
    clock.value = time.time() + 1.0  # every process set up and its clients connecting: start together
    results = [queue.get() for _ in procs]
    if side:
        side.join()
    for p in procs:
        p.join()
    return results


def summary(name: str, results: list[dict[str, Any]], seconds: float) -> float:
    """Print a phase's figures; its contributions per second."""
    lat = sorted(x / 1e6 for r in results for x in r["latencies"])  # ms
    n = sum(r["n"] for r in results)
    errors = sum(r["errors"] for r in results)
    per_s = float(n) / seconds
    per_second = [sum(col) for col in zip(*(r["per_second"] for r in results), strict=True)][: int(seconds)]
    print(f"{name}:")
    print(f"  contributions: {n}  errors: {errors}")
    print(f"  throughput:    {per_s:,.0f} contributions/s over {seconds:g} s")
    print(
        f"  per second:    min {min(per_second):,}  median {percentile(sorted(per_second), 50):,.0f}  "
        f"max {max(per_second):,}"
    )
    if lat:
        print(
            "  latency ms:    p50 {:.2f}  p95 {:.2f}  p99 {:.2f}  max {:.2f}".format(
                *(percentile(lat, q) for q in (50, 95, 99)), lat[-1]
            )
        )
    groups = sum(r["groups"] for r in results)
    if groups:
        items = sum(r["items"] for r in results)
        print(
            f"  group commit:  {groups:,} transactions for {items:,} contributions "
            f"({items / groups:.1f} each)"
        )
    return per_s


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    # 2 x 16 by default: on 2 cores, more client processes compete with PostgreSQL's 32 backends for
    # the CPU (4 x 8 measured ~20 % slower); the GIL is not the limit (held ~20 % of the time).
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--fresh", action="store_true", help="drop and recreate the scratch database first")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of each phase")
    parser.add_argument("--quick", action="store_true", help="10 s per phase (about 30 s in all)")
    parser.add_argument("--fold-every", type=float, default=1.0, help="seconds between folds (0: none)")
    parser.add_argument("--no-baseline", action="store_true", help="measure the product only")
    parser.add_argument("--group-size", type=int, default=0, help="HALL_POOL_GROUP_SIZE (0: the setting's)")
    parser.add_argument(
        "--group-runners", type=int, default=0, help="HALL_POOL_GROUP_RUNNERS (0: the setting's)"
    )
    parser.add_argument("--group-wait-ms", type=float, default=-1, help="HALL_POOL_GROUP_WAIT_MS")
    args = parser.parse_args()
    seconds = 10.0 if args.quick else args.seconds
    if args.group_size:
        os.environ["HALL_BENCH_GROUP_SIZE"] = str(args.group_size)  # read by the spawned processes
    if args.group_runners:
        os.environ["HALL_BENCH_GROUP_RUNNERS"] = str(args.group_runners)
    if args.group_wait_ms >= 0:
        os.environ["HALL_BENCH_GROUP_WAIT_MS"] = str(args.group_wait_ms)

    ensure_database(os.environ["DATABASE_URL"], fresh=args.fresh)
    setup_django()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    run = f"{int(time.time())}-{os.getpid()}"
    pool_id, seed = create_pool(run)
    plain_pool_id, _ = create_pool(f"{run}-plain")
    from django.db.models import Count, Sum

    from jackpots.models import Contribution, PoolLevel
    from jackpots.services.folding import fold

    plain_level = PoolLevel.objects.get(pool_id=plain_pool_id)
    connection.close()
    clients = args.processes * args.threads
    print(
        f"pool {pool_id}: {args.processes} processes x {args.threads} threads = {clients} clients, "
        f"{seconds:g} s per phase"
    )

    fold_times: list[float] = []

    def folds(clock: Any) -> None:
        folder(pool_id, args.fold_every, clock, seconds, fold_times)

    during = folds if args.fold_every > 0 else None
    results = run_phase("product", pool_id, run, args.processes, args.threads, seconds, during)
    product_per_s = summary("product (contribute(), group commit per process)", results, seconds)

    n = sum(r["n"] for r in results)
    errors = sum(r["errors"] for r in results)
    answered_to_meter = sum((Decimal(r["to_meter"]) for r in results), Decimal(0))
    answered_bets = sum((Decimal(r["bets"]) for r in results), Decimal(0))
    t0 = time.perf_counter()
    fold(pool_id)
    final_fold = time.perf_counter() - t0
    level = PoolLevel.objects.get(pool_id=pool_id)
    stored = Contribution.objects.filter(pool_id=pool_id).aggregate(
        n=Count("id"), m=Sum("to_meter"), b=Sum("bet")
    )
    from jackpots.services.reports import balance

    balanced = balance(level.pool).holds
    if fold_times:
        print(
            f"  folds:         {len(fold_times)} during the run, "
            f"median {percentile(sorted(fold_times), 50) * 1000:.1f} ms, "
            f"max {max(fold_times) * 1000:.1f} ms; final fold {final_fold * 1000:.1f} ms"
        )
    print(f"  stored rows:   {stored['n']} (answered {n}); bets {stored['b']} (answered {answered_bets})")
    meter_exact = level.amount == seed + answered_to_meter
    print(
        f"  meter:         {level.amount} = seed {seed} + sum of meter shares {answered_to_meter}: "
        f"{meter_exact}"
    )
    print(f"  balancing report holds: {balanced}")
    exact = (
        meter_exact
        and balanced
        and errors == 0
        and stored["n"] == n
        and stored["b"] == answered_bets
        and stored["m"] == answered_to_meter
    )
    connection.close()

    baseline_per_s = 0.0
    baseline_errors = 0
    if not args.no_baseline:
        target = (plain_pool_id, plain_level.pk, plain_level.contribution_rate, plain_level.reserve_rate)
        plain = run_phase("baseline", target, run, args.processes, args.threads, seconds)
        baseline_per_s = summary("baseline (plain psycopg INSERT, autocommit, same clients)", plain, seconds)
        baseline_errors = sum(r["errors"] for r in plain)
    ratio = product_per_s / baseline_per_s if baseline_per_s else float("nan")
    print("RESULT:", "OK" if exact and not baseline_errors else "MISMATCH")
    print(
        f"clients={clients} product_per_s={product_per_s:.0f} baseline_per_s={baseline_per_s:.0f} "
        f"ratio={ratio:.2f} exact={str(exact).lower()}"
    )
    return 0 if exact and not baseline_errors else 1


if __name__ == "__main__":
    sys.exit(main())
