"""Winner detection of electronic bingo per ball: the product's `PatternIndex` beside the traditional
game's detector (`bingo.detect_index.GameIndex`, built for a million cards) on the same cards, same run.

Random 90-ball cards (15 distinct numbers 1-90 each, three rows of five ascending) are made with NumPy under
random unique ids; no database. For each of `--games` random ball orders both indexes are built (timed) on
the same cards, and the 90 balls are applied one by one, the two detectors alternating ball by ball (so both
see the same load of this shared machine). The product plays the patterns of a speciality with Line, Bingo
and two figures (`line`, `full`, `corners`, `x`); the baseline knows only lines and bingos, and the two must
agree on those at every ball. Per ball: wall time (what the draw step waits) and this thread's CPU time
(what the ball costs when the machine is not shared). `game` is the balls a played game draws: up to the
first Bingo (the game ends there); `all` is every one of the 90. `mem_mb` is the peak of the product's
allocations while building (tracemalloc: the build's temporaries and the index), the most a worker
holds for a game at that size; `index` what the built index keeps while the game plays.

    flock /tmp/hall-bench.lock .venv/bin/python bench/electronic_detection.py              # 1,000,000 cards
    .venv/bin/python bench/electronic_detection.py --quick                                 # 100,000 cards
    .venv/bin/python bench/electronic_detection.py --layout 75 --quick       # the 75-ball card, no baseline

Target (issue 13): <= 5 ms p99 per ball at 1,000,000 cards. Ends with one line:
cards=N build_s=… p50_ms=… p99_ms=… game_p99_ms=… cpu_p99_ms=… mem_mb=… baseline_p50_ms=… baseline_p99_ms=…
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bingo.detect_index import GameIndex
from bingo.electronic.detector import PatternIndex
from bingo.electronic.layouts import layout_of

PATTERNS = ("line", "full", "corners", "x")


def cards_90(count: int, rng: np.random.Generator, chunk: int = 50_000) -> np.ndarray:
    """(count, 15) uint8: 15 distinct numbers per card, rows of five ascending (the packed 90-ball card)."""
    parts = []
    for start in range(0, count, chunk):
        n = min(chunk, count - start)
        picks = rng.random((n, 90)).argsort(axis=1)[:, :15].astype(np.uint8) + 1
        parts.append(np.sort(picks.reshape(n, 3, 5), axis=2).reshape(n, 15))
    return np.concatenate(parts) if parts else np.zeros((0, 15), dtype=np.uint8)


def cards_75(count: int, rng: np.random.Generator, chunk: int = 50_000) -> np.ndarray:
    """(count, 25) uint8: five of each column's fifteen numbers, the free centre 0."""
    parts = []
    for start in range(0, count, chunk):
        n = min(chunk, count - start)
        columns = [rng.random((n, 15)).argsort(axis=1)[:, :5] + 15 * c + 1 for c in range(5)]
        card = np.stack(columns, axis=2).reshape(n, 25).astype(np.uint8)  # row r, column c at 5r + c
        card[:, 12] = 0
        parts.append(card)
    return np.concatenate(parts) if parts else np.zeros((0, 25), dtype=np.uint8)


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q)) * 1e3 if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cards", type=int, default=1_000_000)
    parser.add_argument("--games", type=int, default=3, help="random ball orders, every ball of each")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--layout", choices=("90", "75"), default="90")
    parser.add_argument("--quick", action="store_true", help="100,000 cards")
    args = parser.parse_args()
    count = 100_000 if args.quick else args.cards
    layout = layout_of(args.layout)
    patterns = {name: layout.pattern(name) for name in PATTERNS}
    rng = np.random.default_rng(args.seed)

    load = os.getloadavg()
    print(f"load {load[0]:.2f} {load[1]:.2f}; making {count:,} random {layout.code}-ball cards", flush=True)
    cells = cards_90(count, rng) if layout.code == "90" else cards_75(count, rng)
    ids = rng.permutation(np.arange(1, 3 * count + 1, dtype=np.int64))[:count]
    packed = cells.tobytes()
    with_baseline = layout.code == "90"

    builds: list[float] = []
    wall_all: list[float] = []
    wall_game: list[float] = []
    cpu_all: list[float] = []
    base_builds: list[float] = []
    base_all: list[float] = []
    base_game: list[float] = []
    peak = index_bytes = base_bytes = 0
    completions = 0
    for game in range(args.games):
        balls = [int(b) for b in rng.permutation(np.arange(1, layout.max_number + 1))]
        tracemalloc.start()  # the build's peak (its temporaries and what it keeps); the balls untraced
        t0 = time.perf_counter()
        index = PatternIndex(layout, ids, cells, patterns)
        builds.append(time.perf_counter() - t0)
        peak = max(peak, tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        baseline = None
        if with_baseline:
            t0 = time.perf_counter()
            baseline = GameIndex(ids, packed)
            base_builds.append(time.perf_counter() - t0)
            base_bytes = baseline.nbytes
        playing = True  # until the first Bingo
        first_bingo = 0
        for ball in balls:
            t0, c0 = time.perf_counter(), time.thread_time()
            result = index.apply(ball)
            cpu_all.append(time.thread_time() - c0)
            wall_all.append(time.perf_counter() - t0)
            if playing:
                wall_game.append(wall_all[-1])
            if baseline is not None:
                t0 = time.perf_counter()
                done = baseline.apply(ball)
                base_all.append(time.perf_counter() - t0)
                if playing:
                    base_game.append(base_all[-1])
                if not (
                    np.array_equal(result.of("line"), done.lines)
                    and np.array_equal(result.of("full"), done.bingos)
                ):
                    raise SystemExit(f"the product and the baseline disagree at ball {ball}")
            completions += sum(a.size for a in result.completed.values())
            if playing and result.of("full").size:
                playing, first_bingo = False, result.ordinal
        index_bytes = index.nbytes
        print(
            f"game {game + 1}: build {builds[-1]:.3f} s"
            + (f" (baseline {base_builds[-1]:.3f} s)" if base_builds else "")
            + f", first Bingo at ball {first_bingo}, index {index_bytes / 1e6:.1f} MB",
            flush=True,
        )
        del index, baseline

    p50, p99 = percentile(wall_all, 50), percentile(wall_all, 99)
    g99, c50, c99 = percentile(wall_game, 99), percentile(cpu_all, 50), percentile(cpu_all, 99)
    b50, b99, bg99 = percentile(base_all, 50), percentile(base_all, 99), percentile(base_game, 99)
    print(
        f"product : build max {max(builds):.3f} s; per ball (all) p50 {p50:.2f} ms p99 {p99:.2f} ms, "
        f"(game) p99 {g99:.2f} ms; CPU p50 {c50:.2f} ms p99 {c99:.2f} ms; "
        f"index {index_bytes / 1e6:.0f} MB, peak {peak / 1e6:.0f} MB"
    )
    if with_baseline:
        print(
            f"baseline: build max {max(base_builds):.3f} s; per ball (all) p50 {b50:.2f} ms "
            f"p99 {b99:.2f} ms, "
            f"(game) p99 {bg99:.2f} ms; index {base_bytes / 1e6:.0f} MB (lines and bingos only)"
        )
        print(f"agreed on every line and bingo; {completions:,} completions over {len(wall_all)} balls")
    load = os.getloadavg()
    print(f"load {load[0]:.2f} {load[1]:.2f} (2 cores shared: wall includes waiting for a core)")
    print(
        f"cards={count} layout={layout.code} build_s={max(builds):.3f} p50_ms={p50:.2f} p99_ms={p99:.2f} "
        f"game_p99_ms={g99:.2f} cpu_p99_ms={c99:.2f} mem_mb={peak / 1e6:.0f} "
        f"baseline_p50_ms={b50:.2f} baseline_p99_ms={b99:.2f}"
    )


if __name__ == "__main__":
    main()
