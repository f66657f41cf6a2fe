"""How fast a card series is generated from its seed (pure core, no database).

    .venv/bin/python bench/card_generation.py [strips] [repeats]

A hall creates a series once, but recomputing a master card (card_from_seed) replays the strips before it,
so this bounds how long verifying the last card of a large series takes.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bingo.cards import card_from_seed, generate_series


def main() -> None:
    strips = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    timings = []
    for i in range(repeats):
        start = time.perf_counter()
        generate_series(f"bench-{i}".encode(), strips)
        timings.append(time.perf_counter() - start)
    start = time.perf_counter()
    card_from_seed(b"bench-0", strips * 6)
    last_card = time.perf_counter() - start
    print(
        f"series of {strips} strips ({strips * 6} cards): median {statistics.median(timings) * 1000:.1f} ms, "
        f"max {max(timings) * 1000:.1f} ms over {repeats} runs"
    )
    print(f"recompute the last master card (serial {strips * 6}): {last_card * 1000:.1f} ms")


if __name__ == "__main__":
    main()
