"""Benchmark: the cashier's ledger postings per second, through the services, from 1, 8 and 32 threads.

Not a test. On a scratch database (PostgreSQL from DATABASE_URL, created and migrated if missing; or, with
``--sqlite``, a fresh SQLite file like the embedded hall's, WAL and IMMEDIATE transactions) it opens a shift
at a till and funds player cards, then runs, for each thread count, three phases of SECONDS each (cash-ins
and spends group-committed, HALL_CASH_IN_GROUP_* and HALL_SPEND_GROUP_*, as the web process writes them):

1. ``spend-distinct``: each thread spends (cards.spend, a terminal's purchase) from a card of its own;
2. ``spend-hot``: every thread spends from the same card (its card row and account are locked in turn);
3. ``cash-in-till``: every thread cashes in (cards.cash_in) at the same till, so through the same open shift
   (locked by every till operation) into the same drawer, each onto a card of its own.

Beside them, the same run's plain baseline (``plain-insert``, first at each thread count): each thread
inserts one row of a scratch table and commits, nothing else (what the database takes from these threads
for one commit per call, without the product's logic).

Each thread has its own database connection. A posting is one service call that wrote one balanced ledger
transaction with its legs, balance updates and audit entry. Per phase: postings per second, p50 / p99
latency of a call, and afterwards a check: every card's balance is its funding minus its spends plus its
cash-ins (exact), the drawer is the float plus the cash-ins, the trial balance holds, and verify_audit
passes on the venue (its audit chain, every posting's seal).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench_cashier \\
        .venv/bin/python bench/cashier_ledger.py --fresh --seconds 10
    .venv/bin/python bench/cashier_ledger.py --sqlite --seconds 10

The last line sums it up: ``engine=postgresql spend_distinct_32=… spend_hot_32=… cash_in_32=…
plain_insert_32=… exact=true``.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Anonymous cards, as before the door (issue 27): these benchmarks measure sales, not admissions.
os.environ.setdefault("HALL_DOOR_CARDS_NEED_ADMISSION", "0")

SPEND = Decimal("0.50")
CASH_IN = Decimal("5.00")
FUNDING = Decimal("1000000.00")  # every card's starting balance: no phase runs it dry
THREADS = (1, 8, 32)
PHASES = ("plain-insert", "spend-distinct", "spend-hot", "cash-in-till")
PLAIN_TABLE = "bench_plain_posting"
PLAIN_INSERT = f"INSERT INTO {PLAIN_TABLE} (k, amount) VALUES (%s, %s)"  # noqa: S608 - a constant name


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


def percentile(ordered: list[float], q: float) -> float:
    """Nearest-rank percentile of a sorted list."""
    if not ordered:
        return float("nan")
    rank = max(1, round(q / 100 * len(ordered) + 0.5 - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]


class Floor:
    """The scratch hall: a venue, a cashier with an open shift at a till, cards funded by the house."""

    def __init__(self, run: str, cards: int) -> None:
        from django.contrib.auth.models import User

        from halls.cashier import ledger
        from halls.cashier.ledger import Kind
        from halls.cashier.models import Till, TxKind
        from halls.cashier.services import ledger as books
        from halls.cashier.services import player_cards as card_service
        from halls.cashier.services import shifts
        from halls.models import Jurisdiction, Role, StaffRole, Venue

        self.venue = Venue.objects.create(
            name=f"Bench {run}", licence_number=f"BC-{run}", jurisdiction=Jurisdiction.ML
        )
        self.cashier = User.objects.create(username=f"bench-cashier-{run}")
        StaffRole.objects.create(user=self.cashier, venue=self.venue, role=Role.CASHIER)
        till = Till.objects.create(venue=self.venue, name="Caja 1")
        self.shift = shifts.open_shift(
            till=till, cashier=self.cashier, float_amount=Decimal("100.00"), actor=self.cashier
        )
        house = books.venue_account(self.venue.pk, Kind.HOUSE)
        self.cards = []
        for n in range(cards):
            card = card_service.issue_card(venue_id=self.venue.pk, actor="bench")
            books.post(
                venue_id=self.venue.pk,
                kind=TxKind.CARD_CASH_IN,
                key=f"bench:fund:{n}",
                legs=[ledger.debit(house.pk, FUNDING), ledger.credit(books.card_account(card).pk, FUNDING)],
                actor="bench",
            )
            self.cards.append(card)
        self.expected = {card.pk: FUNDING for card in self.cards}
        self.drawer = Decimal("100.00")


def run_phase(
    floor: Floor, phase: str, threads: int, seconds: float, tag: str, profile: str | None = None
) -> dict[str, Any]:
    """`threads` threads calling the phase's service for `seconds`: postings, per-call latencies, errors
    (with `profile`, the calls' CPU by function to `<profile>.<phase>.<threads>.pstats`)."""
    import cProfile
    import pstats

    from django.db import connection

    from halls.cashier.services import player_cards as card_service

    start = threading.Barrier(threads + 1)
    latencies: list[list[float]] = [[] for _ in range(threads)]
    errors: list[str] = []
    done = [0] * threads
    guard = threading.Lock()
    profiles: list[pstats.Stats] = []
    stop_at = [0.0]

    def worker(i: int) -> None:
        card = floor.cards[0] if phase == "spend-hot" else floor.cards[i]
        mine = latencies[i]
        perf = time.perf_counter
        start.wait()
        n = 0
        prof = cProfile.Profile(time.thread_time) if profile else None
        if prof is not None:
            prof.enable()
        try:
            while perf() < stop_at[0]:
                key = f"{tag}:{i}:{n}"
                t0 = perf()
                if phase == "plain-insert":
                    with connection.cursor() as cursor:  # autocommit: one INSERT, one commit
                        cursor.execute(PLAIN_INSERT, [key, SPEND])
                elif phase == "cash-in-till":
                    card_service.cash_in(
                        card=card, amount=CASH_IN, means="cash", key=key, actor=floor.cashier
                    )
                else:
                    card_service.spend(card=card, amount=SPEND, key=key, actor="bench", device=f"T{i}")
                mine.append(perf() - t0)
                n += 1
        except Exception as exc:  # counted and reported: a run must show none
            errors.append(f"{phase} thread {i}: {exc!r}")
        finally:
            done[i] = n
            connection.close()
            if prof is not None:
                prof.disable()
                with guard:
                    profiles.append(pstats.Stats(prof))

    group = _group_of(phase)
    before = (group.groups, group.items) if group is not None else (0, 0)
    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    stop_at[0] = time.perf_counter() + seconds
    began = time.perf_counter()
    start.wait()
    for t in pool:
        t.join()
    elapsed = time.perf_counter() - began
    if profiles:
        merged = profiles[0]
        for more in profiles[1:]:
            merged.add(more)
        merged.dump_stats(f"{profile}.{phase}.{threads}.pstats")
    for i in range(threads):
        card = floor.cards[0] if phase == "spend-hot" else floor.cards[i]
        if phase == "plain-insert":
            continue
        if phase == "cash-in-till":
            floor.expected[card.pk] += CASH_IN * done[i]
            floor.drawer += CASH_IN * done[i]
        else:
            floor.expected[card.pk] -= SPEND * done[i]
    ordered = sorted(x for lat in latencies for x in lat)
    total = sum(done)
    groups, items = (group.groups - before[0], group.items - before[1]) if group is not None else (0, 0)
    return {
        "groups": groups,
        "group_mean": items / groups if groups else 0.0,
        "phase": phase,
        "threads": threads,
        "postings": total,
        "per_s": total / elapsed,
        "p50_ms": percentile(ordered, 50) * 1000,
        "p99_ms": percentile(ordered, 99) * 1000,
        "errors": errors,
    }


def _group_of(phase: str) -> Any:
    """The process's group commit the phase writes through (its counters: groups and items), or None."""
    from halls.cashier.services import player_cards as card_service

    if phase == "cash-in-till":
        return card_service._cash_in_group.get()
    if phase.startswith("spend"):
        return card_service._spend_group.get()
    return None


def exact(floor: Floor) -> bool:
    """Every card's balance is the bench's count, the drawer too, and the books balance."""
    from halls.cashier.models import Means
    from halls.cashier.services import ledger as books
    from halls.services import verify

    ok = True
    for card in floor.cards:
        stored = books.card_account(card).balance
        if stored != floor.expected[card.pk]:
            print(f"  card {card.number}: stored {stored}, expected {floor.expected[card.pk]}")
            ok = False
    drawer = books.drawer(floor.shift, Means.CASH).balance
    if drawer != floor.drawer:
        print(f"  drawer: stored {drawer}, expected {floor.drawer}")
        ok = False
    books_now = books.trial_balance(floor.venue.pk)
    if not books_now.holds:
        print(f"  trial balance: {books_now}")
        ok = False
    audited = verify.verify_audit(venue_ids=[floor.venue.pk])  # the chain and every posting's seal
    if not audited.ok:
        print(f"  verify_audit: {audited.first_bad}")
        ok = False
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sqlite", action="store_true", help="a fresh SQLite file (var/bench_cashier.sqlite3)"
    )
    parser.add_argument(
        "--fresh", action="store_true", help="drop and recreate the PostgreSQL database first"
    )
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of each phase")
    parser.add_argument("--quick", action="store_true", help="3 s per phase (about a minute in all)")
    parser.add_argument("--threads", default=",".join(map(str, THREADS)), help="thread counts, e.g. 1,8,32")
    parser.add_argument(
        "--phases",
        default=",".join(PHASES),
        help=f"phases, of {','.join(PHASES)}",
    )
    parser.add_argument(
        "--profile", help="a file prefix: each phase's CPU by function (cProfile on thread time, pstats)"
    )
    args = parser.parse_args()
    seconds = 3.0 if args.quick else args.seconds
    counts = [int(x) for x in args.threads.split(",")]
    phases = [p for p in PHASES if p in args.phases.split(",")]

    if args.sqlite:
        os.environ.pop("DATABASE_URL", None)
        os.environ.pop("REDIS_URL", None)
        path = ROOT / "var" / "bench_cashier.sqlite3"
        path.parent.mkdir(exist_ok=True)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        os.environ["SQLITE_PATH"] = str(path)
    else:
        os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/hall_bench_cashier")
        ensure_database(os.environ["DATABASE_URL"], fresh=args.fresh)

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    engine = connection.vendor
    serial = "bigserial" if engine == "postgresql" else "integer"
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TABLE IF NOT EXISTS {PLAIN_TABLE} "
            f"(id {serial} PRIMARY KEY, k varchar(120), amount numeric)"
        )
    run = f"{int(time.time())}-{os.getpid()}"
    floor = Floor(run, max(counts))
    connection.close()
    print(f"{engine}: {max(counts)} cards funded, {seconds:g} s per phase, threads {counts}")
    print(
        f"{'phase':<16}{'threads':>8}{'postings':>10}{'per s':>10}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'groups':>8}{'a group':>9}"
    )
    results: list[dict[str, Any]] = []
    for threads in counts:
        for phase in phases:
            result = run_phase(floor, phase, threads, seconds, f"{run}:{phase}:{threads}", args.profile)
            results.append(result)
            print(
                f"{phase:<16}{threads:>8}{result['postings']:>10,}{result['per_s']:>10,.0f}"
                f"{result['p50_ms']:>9.2f}{result['p99_ms']:>9.2f}{result['groups']:>8,}"
                f"{result['group_mean']:>9.1f}"
            )
            for error in result["errors"][:5]:
                print("  ERROR", error)
    ok = exact(floor) and not any(r["errors"] for r in results)
    if connection.vendor == "postgresql":  # the scratch rows go (the books are kept for a look afterwards)
        with connection.cursor() as cursor:
            cursor.execute(f"TRUNCATE {PLAIN_TABLE}")
    top = max(counts)
    best = {r["phase"]: r["per_s"] for r in results if r["threads"] == top}
    names = {"spend-distinct": "spend_distinct", "spend-hot": "spend_hot", "cash-in-till": "cash_in"}
    names["plain-insert"] = "plain_insert"
    figures = " ".join(f"{names[p]}_{top}={best[p]:.0f}" for p in phases)
    print(f"engine={engine} {figures} load={os.getloadavg()[0]:.1f} exact={'true' if ok else 'false'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
