"""Benchmark: the caller console's answers at a real hall's size (issue 9: <= 100 ms and <= 50 kB per answer
at 100,000 sold cards).

Not a test. In a scratch PostgreSQL database (created and migrated if missing) it sells N cards in one game
(copies of a real generated series, inserted with bulk_create in series of 6,000), closes the sales, starts
the draw, and times, through the whole Django + DRF stack (token auth, in process):

- ``GET /api/games/<id>/``          the game view (what the console polled every second on main);
- ``GET /api/rooms/<id>/console/``  the console's snapshot (loaded once, then on a gap or reconnect);
- ``emit_unclaimed``                the staff-stream event each ball's step numbers and publishes;
- baseline: ``GET /api/rooms/<id>/`` a small answer through the same stack, in the same run;

on sale, then before any ball, then after BALLS balls (the state a console lives in during a game),
and also the size of the uncut unclaimed-winners list main's view carried. Repeats stop at --repeats or
once --budget seconds are spent on one endpoint (at least 3 calls). The last line is the summary, for
the drawing state:

    cards=N p50_ms=… p99_ms=… bytes=… snapshot_p99_ms=… snapshot_bytes=… publish_ms=… baseline_p99_ms=…

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench_console REDIS_URL=redis://127.0.0.1:6379/4 \\
        flock /tmp/hall-bench.lock .venv/bin/python bench/console.py [--cards 100000] [--quick] [--fresh]

The unclaimed winners come from ``bingo.traditional.services.readmodels.unclaimed_winners``: the game view is
as fast
as it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/hall_bench_console")

PER_SERIES = 6_000
# Forty balls: no Line claimed yet, so the unclaimed lines are many (about 4.5 % of the cards).
BALLS = [7, 81, 33, 52, 14, 68, 25, 90, 41, 3, 59, 76, 18, 47, 62, 29, 85, 10, 36, 71, 54, 22, 88, 5, 66, 43,
         12, 79, 31, 57, 2, 64, 38, 73, 16, 49, 84, 27, 60, 9]  # fmt: skip


def ensure_database(url: str, *, fresh: bool) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1].split("?")[0]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if fresh:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def setup_django() -> None:
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def build_game(cards: int) -> tuple[Any, Any, str]:
    """A venue, a caller, a room with an open session and a game on sale with ``cards`` cards sold."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone
    from rest_framework.authtoken.models import Token

    from bingo.traditional.models import Card, CardSeries, SaleKind, SaleOperation, SoldCard
    from bingo.traditional.services import games
    from bingo.traditional.services import series as series_services
    from halls.models import HallCategory, Jurisdiction, Role, Room, StaffRole, Venue
    from halls.services import sessions

    run = uuid.uuid4().hex[:8]
    venue = Venue.objects.create(
        name=f"Bench console {run}",
        licence_number=f"BENCH-C-{run}",
        jurisdiction=Jurisdiction.ML,
        hall_category=HallCategory.FIRST,
        line_percent=Decimal("10"),
        bingo_percent=Decimal("50"),
    )
    caller = get_user_model().objects.create_user(username=f"bench-caller-{run}")
    StaffRole.objects.create(user=caller, venue=venue, role=Role.OPERATOR)
    token = Token.objects.create(user=caller).key
    room = Room.objects.create(venue=venue, name="Sala bench")
    sessions.open_session(
        room=room, actor=caller, blower_ok=True, reserve_ok=True, reader_ok=True,
        inspection_balls=list(range(1, 91)),
    )  # fmt: skip
    template = series_services.create_series(
        venue=venue, code="T", face_value=Decimal("1.00"), strips=PER_SERIES // 6, actor=caller, seed=run * 8
    )
    game = games.open_sales(
        game=games.create_game(room=room, actor=caller, draw_source="manual"), actor=caller
    )
    models = list(Card.objects.filter(series=template).order_by("serial"))
    copied = [
        f.attname for f in Card._meta.concrete_fields if f.attname not in ("id", "series_id", "serial", "key")
    ]
    now = timezone.now()
    made = 0
    while made < cards:
        count = min(PER_SERIES, cards - made)
        series = CardSeries.objects.create(
            venue=venue, code=f"S{made // PER_SERIES:03d}", face_value=Decimal("1.00"),
            strips=(count + 5) // 6, seed=template.seed, created_at=now, created_by=caller,
        )  # fmt: skip
        rows = Card.objects.bulk_create(
            Card(
                series=series,
                serial=i + 1,
                key=f"{made + i:023x}",
                **{n: getattr(models[i], n) for n in copied},
            )
            for i in range(count)
        )
        sale = SaleOperation.objects.create(
            game=game, series=series, kind=SaleKind.SELL, first_serial=1, last_serial=count, cards=count,
            amount=Decimal(count), cashier=caller, created_at=now,
        )  # fmt: skip
        SoldCard.objects.bulk_create(SoldCard(game=game, card=c, card_key=c.key, sale=sale) for c in rows)
        made += count
    return game, caller, token


def timed(client: Any, url: str, repeats: int, budget: float) -> tuple[list[float], int]:
    """Milliseconds of each call (at most ``repeats``, at least 3, within ``budget`` seconds) and the size."""
    timings: list[float] = []
    size = 0
    spent = time.perf_counter()
    while len(timings) < repeats and (len(timings) < 3 or time.perf_counter() - spent < budget):
        start = time.perf_counter()
        answer = client.get(url)
        timings.append((time.perf_counter() - start) * 1000)
        assert answer.status_code == 200, (url, answer.status_code, answer.content[:300])
        size = len(answer.content)
    return timings, size


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def report(label: str, timings: list[float], size: int) -> None:
    print(
        f"  {label:<34} n={len(timings):<3} p50 {p(timings, 0.5):9.1f} ms  p99 {p(timings, 0.99):9.1f} ms"
        f"  {size:>9,} bytes"
    )


def measure(client: Any, game: Any, repeats: int, budget: float) -> dict[str, tuple[list[float], int]]:
    urls = {
        "game view GET /api/games/<id>/": f"/api/games/{game.pk}/",
        "console snapshot": f"/api/rooms/{game.room_id}/console/",
        "baseline GET /api/rooms/<id>/": f"/api/rooms/{game.room_id}/",
    }
    found = {}
    for label, url in urls.items():
        found[label] = timed(client, url, repeats, budget)
        report(label, *found[label])
    return found


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cards", type=int, default=100_000, help="cards sold in the game (default 100,000)")
    parser.add_argument("--quick", action="store_true", help="10,000 cards, fewer calls (under a minute)")
    parser.add_argument("--repeats", type=int, default=50, help="calls per endpoint at most")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds per endpoint at most")
    parser.add_argument("--fresh", action="store_true", help="drop and recreate the scratch database first")
    args = parser.parse_args()
    if args.quick:
        args.cards, args.repeats, args.budget = 10_000, 20, 10.0
    ensure_database(os.environ["DATABASE_URL"], fresh=args.fresh)
    setup_django()

    from django.db import transaction
    from django.test import Client

    from bingo.traditional.services import console, draw, games, readmodels
    from bingo.traditional.services.locks import lock_game

    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    started = time.perf_counter()
    game, caller, token = build_game(args.cards)
    print(f"{args.cards:,} cards sold in game {game.pk} (set up in {time.perf_counter() - started:.1f} s)")
    client = Client(HTTP_AUTHORIZATION=f"Token {token}", HTTP_ACCEPT="application/json")

    print("on sale (running totals):")
    measure(client, game, args.repeats, args.budget)
    game = games.start_draw(game=games.close_sales(game=game, actor=caller), actor=caller)
    print("sales closed, draw started, before the first ball:")
    measure(client, game, args.repeats, args.budget)

    for number in BALLS:
        draw.enter_ball(game=game, number=number, actor=caller)
    game.refresh_from_db()
    print(f"after {len(BALLS)} balls:")
    found = measure(client, game, args.repeats, args.budget)
    start = time.perf_counter()
    with transaction.atomic():  # as a ball's step does it, in its transaction with the game locked
        event = console.emit_unclaimed(lock_game(game.pk))
    publish_ms = (time.perf_counter() - start) * 1000
    shown = event.data
    print(
        f"  staff event console.unclaimed      {publish_ms:9.1f} ms  {len(event.encode()):>9,} bytes"
        f"  (lines {shown['line_count']:,}, bingos {shown['bingo_count']:,}; {len(shown['line'])} listed)"
    )
    uncut = len(json.dumps(readmodels.unclaimed_winners(game), separators=(",", ":")))
    print(f"  the uncut unclaimed list main's view carried: {uncut:,} bytes")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")

    view, view_size = found["game view GET /api/games/<id>/"]
    snap, snap_size = found["console snapshot"]
    base, _ = found["baseline GET /api/rooms/<id>/"]
    print(
        f"cards={args.cards} p50_ms={p(view, 0.5):.1f} p99_ms={p(view, 0.99):.1f} bytes={view_size} "
        f"snapshot_p99_ms={p(snap, 0.99):.1f} snapshot_bytes={snap_size} publish_ms={publish_ms:.1f} "
        f"uncut_unclaimed_bytes={uncut} baseline_p99_ms={p(base, 0.99):.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
