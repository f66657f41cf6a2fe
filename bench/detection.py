"""Winner detection per ball: the game's index (bingo.detect_index) beside a plain NumPy inverted index.

Random cards (15 distinct numbers 1-90 each, three rows of five ascending) are made with NumPy; no
database. For each of `--games` random ball orders the product's index is built (timed) and all 90 balls
are applied one by one (timed per ball, completions included: the ids of the cards completing their
first line and their bingo). The baseline, built in the same run on the same cards and balls, is the
plainest inverted index: one argsort of all numbers, row and card counters, the same per-ball question.
Both must agree ball by ball. `mem_mb` is the peak of NumPy allocations while building and playing the
product's index (tracemalloc), i.e. what a worker holds per game at that size.

    flock /tmp/hall-bench.lock .venv/bin/python bench/detection.py --cards 1000000
    .venv/bin/python bench/detection.py --quick     # 100,000 cards

The file the service writes at the close of sales is timed too (written, then mapped and caught up).

Ends with one line: cards=N build_s=… p50_ms=… p99_ms=… mem_mb=… baseline_p99_ms=…
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bingo.detect_index import GameIndex, load, save


def random_cards(count: int, rng: np.random.Generator, chunk: int = 50_000) -> np.ndarray:
    """(count, 15) uint8: 15 distinct numbers per card, rows of five ascending."""
    parts = []
    for start in range(0, count, chunk):
        n = min(chunk, count - start)
        picks = rng.random((n, 90)).argsort(axis=1)[:, :15].astype(np.uint8) + 1
        parts.append(np.sort(picks.reshape(n, 3, 5), axis=2).reshape(n, 15))
    return np.concatenate(parts) if parts else np.zeros((0, 15), dtype=np.uint8)


class Baseline:
    """The plain inverted index: argsort of every number, counters per row and card."""

    def __init__(self, ids: np.ndarray, numbers: np.ndarray) -> None:
        flat = numbers.reshape(-1)
        order = np.argsort(flat, kind="stable")
        self.rows = order // 5
        self.starts = np.searchsorted(flat[order], np.arange(92))
        self.ids = ids
        self.row_left = np.full(ids.size * 3, 5, dtype=np.int8)
        self.card_left = np.full(ids.size, 15, dtype=np.int8)
        self.lined = np.zeros(ids.size, dtype=bool)

    def apply(self, ball: int) -> tuple[np.ndarray, np.ndarray]:
        rows = self.rows[self.starts[ball] : self.starts[ball + 1]]
        self.row_left[rows] -= 1
        cards = rows // 3
        self.card_left[cards] -= 1
        full = cards[self.row_left[rows] == 0]
        new = full[~self.lined[full]]
        self.lined[new] = True
        return np.sort(self.ids[new]), np.sort(self.ids[cards[self.card_left[cards] == 0]])


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q)) if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cards", type=int, default=1_000_000)
    parser.add_argument("--games", type=int, default=3, help="random ball orders, 90 balls each")
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="100,000 cards")
    args = parser.parse_args()
    cards = 100_000 if args.quick else args.cards
    rng = np.random.default_rng(args.seed)

    print(
        f"load {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; making {cards:,} random cards", flush=True
    )
    numbers = random_cards(cards, rng)
    ids = rng.permutation(np.arange(1, 3 * cards + 1, dtype=np.int64))[:cards]
    packed = numbers.tobytes()

    builds: list[float] = []
    per_ball: list[float] = []
    baseline_builds: list[float] = []
    baseline_ball: list[float] = []
    peak = 0
    completions = 0
    for game in range(args.games):
        balls = [int(b) for b in rng.permutation(np.arange(1, 91))]
        tracemalloc.start()
        t0 = time.perf_counter()
        index = GameIndex(ids, packed)
        builds.append(time.perf_counter() - t0)
        product = []
        for ball in balls:
            t0 = time.perf_counter()
            done = index.apply(ball)
            per_ball.append(time.perf_counter() - t0)
            product.append(done)
        peak = max(peak, tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()

        t0 = time.perf_counter()
        baseline = Baseline(ids, numbers)
        baseline_builds.append(time.perf_counter() - t0)
        for ball, done in zip(balls, product, strict=True):
            t0 = time.perf_counter()
            lines, bingos = baseline.apply(ball)
            baseline_ball.append(time.perf_counter() - t0)
            if not (np.array_equal(lines, done.lines) and np.array_equal(bingos, done.bingos)):
                raise SystemExit(f"the index and the baseline disagree at ball {ball}")
            completions += lines.size + bingos.size
        first_bingo = next(d.ordinal for d in product if d.bingos.size)
        print(
            f"game {game + 1}: build {builds[-1]:.3f} s (baseline {baseline_builds[-1]:.3f} s), "
            f"first bingo at ball {first_bingo}, index {index.nbytes / 1e6:.1f} MB",
            flush=True,
        )
        del index, baseline

    # What another process of the host pays instead of a build: map the file written at the close of sales.
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "game.idx"
        t0 = time.perf_counter()
        save(GameIndex(ids, packed), path)
        saved = time.perf_counter() - t0
        t0 = time.perf_counter()
        mapped = load(path)
        mapped.apply_all(balls[:40])
        caught_up = time.perf_counter() - t0
        print(f"index file: written in {saved:.3f} s, mapped and caught up to ball 40 in {caught_up:.3f} s")
        del mapped

    p50, p99 = percentile(per_ball, 50) * 1e3, percentile(per_ball, 99) * 1e3
    b50, b99 = percentile(baseline_ball, 50) * 1e3, percentile(baseline_ball, 99) * 1e3
    print(f"product : build max {max(builds):.3f} s, per ball p50 {p50:.2f} ms p99 {p99:.2f} ms")
    print(f"baseline: build max {max(baseline_builds):.3f} s, per ball p50 {b50:.2f} ms p99 {b99:.2f} ms")
    print(f"agreed on {completions:,} completions over {len(per_ball)} balls; load {os.getloadavg()[0]:.2f}")
    print(
        f"cards={cards} build_s={max(builds):.3f} p50_ms={p50:.2f} p99_ms={p99:.2f} "
        f"mem_mb={peak / 1e6:.0f} baseline_p99_ms={b99:.2f}"
    )


if __name__ == "__main__":
    main()
