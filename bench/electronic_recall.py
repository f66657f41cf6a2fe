"""Benchmark: the electronic archive's reads at 100,000 cards in one game (R-01): a terminal's game recall
(its 600 cards with their cells and marks, its prizes and ledger entries), the whole game's recall (sums,
per-terminal lines, the first page of purchases, balls, prizes with their wins, pools, ledger), a page of
cards from the middle of the game, and the day's statistics, each beside a bare read in the same run.

Not a test. On PostgreSQL (``DATABASE_URL``, a database of its own: created and migrated if missing, dropped
first with ``--fresh``) it builds the hall of bench/electronic_draw_step.py (a speciality, one terminal and
player card per 600 cards), sells the cards as that bench does, closes the sales through the engine and
draws the game to its end through `games.draw_ball` (so prizes, wins and ledger entries exist), then times
each read `--repeat` times, alternating with its baseline:

- terminal recall vs the bare read of that terminal's card rows (ids and cells, one query);
- game recall vs a bare SUM over the game's purchases;
- a page of 200 cards vs the bare 200 card rows;
- the statistics of the day vs a bare COUNT of the venue's games of the day.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench_erecall \\
        flock /tmp/hall-bench.lock .venv/bin/python bench/electronic_recall.py [--fresh] [--quick]

The last line: ``cards=… terminal_p50_ms=… terminal_p99_ms=… terminal_base_p99_ms=… game_p99_ms=…
game_base_p99_ms=… page_p99_ms=… page_base_p99_ms=… stats_p99_ms=… stats_base_p99_ms=…``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from bench.electronic_draw_step import PER_PURCHASE, Hall, ensure_database, percentile, sell  # noqa: E402


def timed(fn: Callable[[], Any], base: Callable[[], Any], repeat: int) -> tuple[list[float], list[float]]:
    """`fn` and `base` alternately, `repeat` times each: their durations in seconds."""
    product: list[float] = []
    bare: list[float] = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        product.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        base()
        bare.append(time.perf_counter() - t0)
    return product, bare


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cards", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="10,000 cards")
    parser.add_argument("--fresh", action="store_true", help="drop and recreate the database first")
    args = parser.parse_args()
    cards = 10_000 if args.quick else args.cards
    cards = max(PER_PURCHASE, cards // PER_PURCHASE * PER_PURCHASE)

    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/hall_bench_erecall")
    ensure_database(os.environ["DATABASE_URL"], fresh=args.fresh)

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.db.models import Count, Sum
    from django.utils import timezone

    call_command("migrate", verbosity=0)
    from bingo.electronic.models import ECard, EGameState, ElectronicGame, EPrize, Purchase
    from bingo.electronic.services import games, recall, reports

    games.register_draw_enqueuer(lambda game_id, ordinal, countdown: None)  # the bench drives the steps
    load = os.getloadavg()
    print(f"load {load[0]:.2f} {load[1]:.2f}; {connection.vendor}; {cards:,} cards in one game")
    run = f"{int(time.time())}-{os.getpid()}"
    t0 = time.perf_counter()
    hall = Hall(run, cards)
    games.set_running(speciality=hall.speciality, running=True, actor="bench")
    game = ElectronicGame.objects.get(speciality=hall.speciality, state=EGameState.SELLING)
    sold_in = sell(hall, game, cards, f"{run}:0")
    closed = games.close_sales(game.pk, early=True)
    assert closed is not None, "the sales did not close"
    assert closed.state == EGameState.DRAWING, "the game did not start drawing"
    ordinal = 0
    while ElectronicGame.objects.filter(pk=game.pk, state=EGameState.DRAWING).exists():
        ordinal += 1
        games.draw_ball(game.pk, ordinal, actor="bench")
    game = ElectronicGame.objects.select_related("speciality", "version").get(pk=game.pk)
    won = ", ".join(f"{p.code}@{p.ordinal}x{p.winners}" for p in EPrize.objects.filter(game=game, won=True))
    print(
        f"game: {game.cards_sold:,} cards ({sold_in:.1f} s to sell), {game.balls_drawn} balls, won: {won}; "
        f"built in {time.perf_counter() - t0:.1f} s",
        flush=True,
    )

    terminal = hall.terminals[len(hall.terminals) // 2]
    middle = ECard.objects.filter(game=game).order_by("pk").values_list("pk", flat=True)[cards // 2]
    day = timezone.localdate(game.closed_at)
    venue = hall.venue

    def terminal_base() -> None:
        list(ECard.objects.filter(game=game, purchase__terminal=terminal).values_list("pk", "cells"))

    def game_base() -> None:
        Purchase.objects.filter(game=game).aggregate(n=Count("id"), total=Sum("amount"))

    def page_base() -> None:
        list(ECard.objects.filter(game=game, pk__gt=middle).order_by("pk").values_list("pk", "cells")[:200])

    def stats_base() -> None:
        ElectronicGame.objects.filter(speciality__venue=venue, closed_at__date=day).count()

    figures: dict[str, tuple[list[float], list[float]]] = {}
    shown = recall.terminal_recall(game, terminal=terminal)
    assert len(shown["cards"]) == sum(p["cards"] for p in shown["purchases"])
    figures["terminal"] = timed(
        lambda: recall.terminal_recall(game, terminal=terminal), terminal_base, args.repeat
    )
    figures["game"] = timed(lambda: recall.game_recall(game), game_base, args.repeat)
    figures["page"] = timed(lambda: recall.cards_page(game, after=middle, limit=200), page_base, args.repeat)
    figures["stats"] = timed(
        lambda: reports.statistics(venue=venue, first=day, last=day), stats_base, args.repeat
    )
    for name, (product, bare) in figures.items():
        print(
            f"{name:9s}: p50 {percentile(product, 50):7.1f} ms p99 {percentile(product, 99):7.1f} ms"
            f"   baseline p50 {percentile(bare, 50):6.1f} ms p99 {percentile(bare, 99):6.1f} ms"
        )
    load = os.getloadavg()
    print(f"load {load[0]:.2f} {load[1]:.2f} (2 cores shared with the others' tests)")
    parts = [f"cards={cards}"]
    for name, (product, bare) in figures.items():
        if name == "terminal":
            parts.append(f"terminal_p50_ms={percentile(product, 50):.1f}")
        parts.append(
            f"{name}_p99_ms={percentile(product, 99):.1f} {name}_base_p99_ms={percentile(bare, 99):.1f}"
        )
    print(" ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
