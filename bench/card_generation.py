"""Card series at a real hall's size: generation, one master card, a 100,000-card series, a 6,000-card sale.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_cards_bench \\
        flock /tmp/hall-bench.lock .venv/bin/python bench/card_generation.py [--quick] [--no-db]

Pure part (no database): the product's generator (bingo.cardgen, "v2") makes 6,000 cards, beside a plain
NumPy generator run in the same process (numpy.random.default_rng, the same kind of strips, with neither
reproducibility across NumPy versions, nor validation, nor the check that no two cards repeat); one master
card is recomputed at random serials of a 100,000-card series; the old generator ("v1", kept for the series
it made) is timed once for comparison.

Database part (PostgreSQL at DATABASE_URL; the database is created and migrated when missing, --fresh drops it
first): bingo.traditional.services.series.create_series of 100,000 cards beside a plain psycopg COPY of the
same rows into
a table like bingo_card (same indexes), and bingo.traditional.services.sales.sell_range of 6,000 cards beside
a plain
INSERT ... SELECT of the same rows into a table like bingo_soldcard; each baseline commits, as services do.

The last line sums it up: cards=6000 gen_ms=… master_ms=… baseline_ms=… series_100k_s=… sell_6000_ms=…
(gen_ms, baseline_ms, sell_6000_ms: medians; master_ms: the 99th percentile over random serials, the
slowest one printed beside it).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from bingo import cardgen, cards  # noqa: E402  (pure modules: no Django needed)

CARDS = 6000
SERIES_CARDS = 100_000


def timed(run: Callable[[], object], repeats: int) -> list[float]:
    """Wall seconds of each of `repeats` runs (one warm-up run first)."""
    run()
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        out.append(time.perf_counter() - start)
    return out


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[98]


def plain_numpy_strips(rng: np.random.Generator, strips: int) -> np.ndarray:
    """Baseline: valid strips from NumPy's own Generator, vectorised, nothing else (no checks, no contract).

    The 90 numbers, each column shuffled and the columns in a random order, dealt round-robin to the 6 cards
    (1 or 2 per column, 15 each); each card's rows laid cyclically over a random column order; columns sorted.
    Returns grids[strip, card, row, column], 0 = blank.
    """
    rows = np.arange(strips)[:, None]
    column = np.minimum(np.arange(1, 91) // 10, 8)
    sizes = np.bincount(column)
    position = np.arange(90) - (np.cumsum(sizes) - sizes)[column]  # place of each slot in its column
    numbers = np.argsort(column + rng.random((strips, 90)), axis=1) + 1  # each column shuffled
    column_order = np.argsort(rng.random((strips, 9)), axis=1)
    laid = sizes[column_order]
    column_start = np.empty_like(column_order)
    np.put_along_axis(column_start, column_order, np.cumsum(laid, axis=1) - laid, axis=1)
    card = (column_start[:, column] + position) % 6
    counts = np.zeros((strips, 6, 9), dtype=np.int64)
    np.add.at(counts, (rows, card, column), 1)
    card_order = np.argsort(rng.random((strips, 6, 9)), axis=2)
    card_laid = np.take_along_axis(counts, card_order, axis=2)
    cell_start = np.empty_like(counts)
    np.put_along_axis(cell_start, card_order, np.cumsum(card_laid, axis=2) - card_laid, axis=2)
    row = (cell_start[rows, card, column] + position // 6) % 3
    grids = np.zeros((strips, 6, 3, 9), dtype=np.int64)
    grids[rows, card, row, column] = numbers
    # Columns ascend: each column's filled cells sorted, blanks kept in place.
    filled = grids > 0
    ordered = np.sort(np.where(filled, grids, 1000), axis=2)
    ranked = np.take_along_axis(ordered, np.clip(np.cumsum(filled, axis=2) - 1, 0, 2), axis=2)
    return np.where(filled, ranked, 0).astype(np.uint8)


def pure_part(quick: bool) -> dict[str, float]:
    repeats = 5 if quick else 15
    strips = CARDS // 6
    product = timed(lambda: cardgen.generate_series(os.urandom(16), strips), repeats)
    rng = np.random.default_rng()
    baseline = timed(lambda: plain_numpy_strips(rng, strips), repeats)
    sample = plain_numpy_strips(rng, 50)
    assert all(
        cards.validate_card([[n or None for n in r] for r in g]) == []
        for g in sample.reshape(-1, 3, 9).tolist()
    )

    seed = b"bench-master"
    big = cardgen.generate_series(seed, -(-SERIES_CARDS // 6))
    serials = random.sample(range(1, len(big) + 1), 50 if quick else 300)
    masters = []
    for serial in serials:
        start = time.perf_counter()
        card = cardgen.card_from_seed(seed, serial, big.rederived)
        masters.append(time.perf_counter() - start)
        assert card == big.card(serial - 1)

    start = time.perf_counter()
    cards.generate_series(b"bench-v1", 100 if quick else strips)
    v1_strips = 100 if quick else strips
    v1_gen = time.perf_counter() - start
    start = time.perf_counter()
    cards.card_from_seed(b"bench-v1", v1_strips * 6)
    v1_master = time.perf_counter() - start

    ms = 1000
    print(
        f"generate {CARDS} cards, v2 (product): median {statistics.median(product) * ms:.1f} ms, "
        f"max {max(product) * ms:.1f} ms over {repeats} runs"
    )
    print(
        f"generate {CARDS} cards, plain NumPy baseline: median {statistics.median(baseline) * ms:.1f} ms, "
        f"max {max(baseline) * ms:.1f} ms"
    )
    print(
        f"one master card of a {len(big)}-card series, v2: median {statistics.median(masters) * ms:.2f} ms, "
        f"p99 {p99(masters) * ms:.2f} ms, max {max(masters) * ms:.2f} ms over {len(serials)} random serials"
    )
    print(
        f"v1 (old series only): {v1_strips * 6} cards {v1_gen * ms:.0f} ms; "
        f"master card #{v1_strips * 6} {v1_master * ms:.0f} ms"
    )
    return {
        "gen_ms": statistics.median(product) * ms,
        "master_ms": p99(masters) * ms,
        "baseline_ms": statistics.median(baseline) * ms,
    }


def ensure_database(url: str, *, fresh: bool) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1].split("?")[0]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if fresh:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def database_part(quick: bool, url: str) -> dict[str, float]:
    import json

    import django
    import psycopg

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from bingo.traditional.models import Card
    from bingo.traditional.services import games, sales
    from bingo.traditional.services import series as series_services
    from halls.cashier.models import Till
    from halls.cashier.services import shifts
    from halls.models import HallCategory, Jurisdiction, Role, Room, StaffRole, Venue
    from halls.services import sessions

    call_command("migrate", verbosity=0)
    run = f"{int(time.time())}"
    venue = Venue.objects.create(
        name=f"Bench {run}",
        licence_number=f"BENCH-{run}",
        jurisdiction=Jurisdiction.ML,
        hall_category=HallCategory.FIRST,
        line_percent=Decimal("10"),
        bingo_percent=Decimal("50"),
    )
    users: dict[str, Any] = {}
    for role in (Role.OPERATOR, Role.CALLER, Role.CASHIER):
        users[role] = get_user_model().objects.create_user(username=f"{role}-{run}")
        StaffRole.objects.create(user=users[role], venue=venue, role=role)
    # Card sales are cash into the drawer of the cashier's open shift.
    cashier = users[Role.CASHIER]
    till = Till.objects.create(venue=venue, name="Caja bench")
    shifts.open_shift(till=till, cashier=cashier, float_amount=Decimal("0"), actor=cashier)
    room = Room.objects.create(venue=venue, name="Sala bench", ball_pace_seconds=Decimal("3"))
    sessions.open_session(
        room=room,
        actor=users[Role.CALLER],
        blower_ok=True,
        reserve_ok=True,
        reader_ok=True,
        inspection_balls=list(range(1, 91)),
    )

    strips = -(-SERIES_CARDS // 6)
    series_runs = 1 if quick else 3
    series_times = []
    made = []
    for i in range(series_runs):
        start = time.perf_counter()
        made.append(
            series_services.create_series(
                venue=venue,
                code=f"B{i}",
                face_value=Decimal("1.00"),
                strips=strips,
                actor=users[Role.OPERATOR],
            )
        )
        series_times.append(time.perf_counter() - start)
    series = made[0]
    assert Card.objects.filter(series=series).count() == strips * 6

    # Baseline: the same 100,002 rows COPYed by plain psycopg (write_row) into a table like bingo_card
    # (its indexes, no foreign keys), committed: the database's floor for the product's one COPY.
    rows = list(
        Card.objects.filter(series=series).values_list("serial", "grid", "key", "numbers", "security_code")
    )
    with psycopg.connect(url) as plain:
        plain.execute("DROP TABLE IF EXISTS bench_cards")
        plain.execute("CREATE TABLE bench_cards (LIKE bingo_card INCLUDING ALL)")
        plain.commit()
        start = time.perf_counter()
        with (
            plain.cursor() as cursor,
            cursor.copy(
                "COPY bench_cards (series_id, serial, grid, key, numbers, security_code) FROM STDIN"
            ) as copy,
        ):
            for serial, grid, key, numbers, code in rows:
                copy.write_row((series.pk, serial, json.dumps(grid), key, bytes(numbers), code))
        plain.commit()
        copy_baseline = time.perf_counter() - start
        plain.execute("DROP TABLE bench_cards")
        plain.commit()

    game = games.create_game(room=room, actor=users[Role.CALLER], draw_source="manual")
    game = games.open_sales(game=game, actor=users[Role.CALLER])
    sale_times = []
    sales_runs = 3 if quick else 10
    for i in range(sales_runs):
        first = i * CARDS + 1
        start = time.perf_counter()
        sales.sell_range(
            game=game, series=series, first=first, last=first + CARDS - 1, actor=users[Role.CASHIER]
        )
        sale_times.append(time.perf_counter() - start)

    # Baseline: 6,000 rows by one plain INSERT ... SELECT into a table like bingo_soldcard (its unique
    # constraints and indexes), committed, growing as the game's sold cards do.
    insert_times = []
    with psycopg.connect(url) as plain:
        plain.execute("DROP TABLE IF EXISTS bench_sold")
        plain.execute("CREATE TABLE bench_sold (LIKE bingo_soldcard INCLUDING ALL)")
        plain.commit()
        for i in range(sales_runs):
            first = i * CARDS + 1
            start = time.perf_counter()
            plain.execute(
                "INSERT INTO bench_sold (game_id, card_id, card_key, sale_id) SELECT %s, id, key, 0 "
                "FROM bingo_card WHERE series_id = %s AND serial BETWEEN %s AND %s",
                [game.pk, series.pk, first, first + CARDS - 1],
            )
            plain.commit()
            insert_times.append(time.perf_counter() - start)
        plain.execute("DROP TABLE bench_sold")
        plain.commit()

    ms = 1000
    print(
        f"create_series of {strips * 6} cards on PostgreSQL: "
        + ", ".join(f"{t:.2f} s" for t in series_times)
        + f"; plain COPY of the same rows into a table like bingo_card: {copy_baseline:.2f} s"
    )
    print(
        f"sell_range of {CARDS} cards (game holding up to {sales_runs * CARDS} sold): median "
        f"{statistics.median(sale_times) * ms:.0f} ms, max {max(sale_times) * ms:.0f} ms over {sales_runs}; "
        f"plain INSERT ... SELECT of {CARDS} rows into a table like bingo_soldcard: "
        f"median {statistics.median(insert_times) * ms:.1f} ms"
    )
    return {
        "series_100k_s": statistics.median(series_times),
        "sell_6000_ms": statistics.median(sale_times) * ms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (well under a minute)")
    parser.add_argument("--no-db", action="store_true", help="only the pure generator figures")
    parser.add_argument("--fresh", action="store_true", help="drop and recreate the database first")
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()}")
    figures = pure_part(args.quick)
    url = os.environ.get("DATABASE_URL", "")
    if not args.no_db:
        if not url.startswith("postgres"):
            sys.exit("DATABASE_URL must point at PostgreSQL (or pass --no-db)")
        ensure_database(url, fresh=args.fresh)
        figures |= database_part(args.quick, url)
    print(f"load after: {os.getloadavg()}")
    line = f"cards={CARDS} " + " ".join(
        f"{key}={figures[key]:.2f}" if key in figures else f"{key}=n/a"
        for key in ("gen_ms", "master_ms", "baseline_ms", "series_100k_s", "sell_6000_ms")
    )
    print(line)


if __name__ == "__main__":
    main()
