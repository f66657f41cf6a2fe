"""The traditional close of sales with the draw committed and without (issue 28), on PostgreSQL, no Celery.

Builds bench/draw_step.py's hall (its `build_hall`: a venue, one room per game, CARDS cards sold in bulk in
each game, commitment on and off alternating) and times each `games.close_sales` call to the millisecond
(draw_step prints it to a tenth as "sales closed in"). The extra cost of the close is "on" minus "off".

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench_close REDIS_URL=redis://127.0.0.1:6379/7 \\
        .venv/bin/python bench/close_sales.py [--cards 100000] [--games 2]

The first "on" line is the 60-card warm-up game. The database is created and migrated if needed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import draw_step


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cards", type=int, default=100_000)
    parser.add_argument("--games", type=int, default=2, help="games of each mode")
    args = parser.parse_args()
    draw_step.ensure_database(os.environ["DATABASE_URL"], fresh=False)
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from bingo.traditional.services import games

    call_command("migrate", verbosity=0)
    close = games.close_sales

    def timed(**kwargs: Any) -> Any:
        start = time.perf_counter()
        game = close(**kwargs)
        mode = "on" if settings.HALL_VERIFIABLE_DRAWS else "off"
        print(f"close commitment={mode} seconds={time.perf_counter() - start:.3f}", flush=True)
        return game

    games.close_sales = timed  # make_game looks it up at each call
    draw_step.build_hall(uuid.uuid4().hex[:8], args.cards, args.games, Decimal("0.25"), [True, False])


if __name__ == "__main__":
    main()
