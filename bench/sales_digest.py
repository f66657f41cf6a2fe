"""The sales digest of the close of sales (issue 28), before and after its fast way, same run, no database.

For each wing, N random cards sold, in the shape its close of sales gives bingo.draws: the traditional
wing's (serial "<series>-<serial>", its 15 numbers packed one byte a number, as read from Card.numbers),
the electronic wing's (card ids and a (cards, cells) uint8 array with free cells 0, as
`detection.card_cells` returns them). Timed, best of `--repeat` (this machine is shared):

- `old`: what the close did before: a SoldCard per card (`bingo.draws.services.sales_of`, the electronic
  wing's `commitments.sold` lists first), then `verifiable.sales_digest`;
- `new`: what it does now: `verifiable.sales_digest_of` over the wing's cards (the electronic wing's
  `commitments.packed` first).

Both digests must be equal (the run stops otherwise). The database read of the traditional wing's sold
cards is not in these figures (bench/draw_step.py's "sales closed in" has it).

    .venv/bin/python bench/sales_digest.py            # 100,000 cards
    .venv/bin/python bench/sales_digest.py --quick    # 10,000 cards

Ends with one line per wing: wing=… cards=N old_s=… new_s=… saved_s=…
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from bingo import verifiable  # noqa: E402
from bingo.electronic.services import commitments as electronic  # noqa: E402


def cards_90(count: int, rng: np.random.Generator) -> np.ndarray:
    """(count, 15) uint8: 15 distinct numbers 1-90 per card, rows of five ascending (the packed card)."""
    picks = rng.random((count, 90)).argsort(axis=1)[:, :15].astype(np.uint8) + 1
    return np.sort(picks.reshape(count, 3, 5), axis=2).reshape(count, 15)


def best(repeat: int, run: Callable[[], str]) -> tuple[float, str]:
    times, digest = [], ""
    for _ in range(repeat):
        start = time.perf_counter()
        digest = run()
        times.append(time.perf_counter() - start)
    return min(times), digest


def old_way(game: str, cards: object) -> str:
    sold = tuple(verifiable.SoldCard(str(serial), tuple(numbers)) for serial, numbers in cards)  # type: ignore[attr-defined]
    return verifiable.sales_digest(verifiable.Sales(game=game, max_ball=90, cards=sold))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cards", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="10,000 cards")
    args = parser.parse_args()
    count = 10_000 if args.quick else args.cards
    rng = np.random.default_rng(28)
    numbers = cards_90(count, rng)

    # Traditional: serials of a few series, shuffled (the database gives no order), numbers as bytes.
    order = rng.permutation(count)
    traditional = [(f"{'ABCD'[i % 4]}-{i // 4:04d}", numbers[i].tobytes()) for i in order.tolist()]
    # Electronic: ids ascending, 18 cells (three free) per card.
    ids = np.arange(1, count + 1, dtype=np.int64) * 7
    cells = np.concatenate([numbers, np.zeros((count, 3), dtype=np.uint8)], axis=1)
    cells = np.take_along_axis(cells, rng.random(cells.shape).argsort(axis=1), axis=1)

    runs = {
        "traditional": (
            lambda: old_way("traditional-1", traditional),
            lambda: verifiable.sales_digest_of("traditional-1", 90, traditional),
        ),
        "electronic": (
            lambda: old_way("electronic-1", electronic.sold(ids, cells)),
            lambda: verifiable.sales_digest_of("electronic-1", 90, electronic.packed(ids, cells)),
        ),
    }
    for wing, (old, new) in runs.items():
        old_s, old_digest = best(args.repeat, old)
        new_s, new_digest = best(args.repeat, new)
        if old_digest != new_digest:
            raise SystemExit(f"{wing}: the digests differ: {old_digest} != {new_digest}")
        print(f"wing={wing} cards={count} old_s={old_s:.3f} new_s={new_s:.3f} saved_s={old_s - new_s:.3f}")


if __name__ == "__main__":
    main()
