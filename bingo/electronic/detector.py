"""The winner detector of one electronic game: built once at the close of sales, applied ball by ball.

Generalises `bingo.detect_index` (rows and the full card of the 90-ball card) to any layout and any set of
patterns: an inverted index number -> the cells holding it (CSR, grouped by cell position), and one bitmask
of marked cells per card. A ball touches only the cards holding its number (a sixth of them at 90 balls);
for each cell position it checks only the patterns that contain that cell. A card is reported for a pattern
set the first time one of its masks is complete (a card's first line, its bingo, a figure).

Ids are opaque int64 (the database's card ids); positions inside the index are 0..cards-1. Pure: NumPy only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bingo.electronic.layouts import Layout

IdArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class BallResult:
    """The cards (ids, ascending) completing each pattern set for the first time with one ball."""

    ordinal: int
    ball: int
    completed: Mapping[str, IdArray]  # pattern key -> ids; only keys with at least one card

    def of(self, key: str) -> IdArray:
        return self.completed.get(key, _EMPTY)


_EMPTY: IdArray = np.zeros(0, dtype=np.int64)


class PatternIndex:
    """Number -> cells, marks per card, and which cards have completed each pattern set.

    `patterns`: key -> the masks of that pattern set ("line": every line of the layout; "full"; a figure).
    `cells`: (cards, layout.cells) uint8 card values in cell order, 0 for the free cells.
    """

    def __init__(
        self,
        layout: Layout,
        card_ids: npt.ArrayLike,
        cells: npt.ArrayLike,
        patterns: Mapping[str, Sequence[int]],
    ) -> None:
        ids = np.ascontiguousarray(card_ids, dtype=np.int64)
        values = np.ascontiguousarray(cells, dtype=np.uint8).reshape(ids.size, layout.cells)
        if ids.size and (np.sort(ids)[1:] == np.sort(ids)[:-1]).any():
            raise ValueError("a card id appears twice")
        if values.size and int(values.max()) > layout.max_number:
            raise ValueError(f"a card holds a number above {layout.max_number}")
        self.layout = layout
        self.card_ids = ids
        self.keys = tuple(patterns)
        size = layout.cells
        # CSR of number -> flat cells (card * size + position), sorted by (number, position).
        flat_numbers = values.reshape(-1).astype(np.int64) * size + np.tile(np.arange(size), ids.size)
        order = np.argsort(flat_numbers, kind="stable")
        self.positions = (order // size).astype(np.intp)  # the card of each entry
        sorted_keys = flat_numbers[order]
        bounds = np.arange(0, (layout.max_number + 2) * size, dtype=np.int64)
        # starts[n * size + p]: first entry of number n at position p.
        self.starts = np.searchsorted(sorted_keys, bounds)
        self.marks = np.full(ids.size, layout.free, dtype=np.uint32)
        # For each position: the (pattern index, mask) pairs holding it.
        self.by_position: list[list[tuple[int, int]]] = [[] for _ in range(size)]
        # A pattern of one mask completes once (the ball's cell was unmarked before): no `done` check.
        self.single: list[bool] = []
        for k, key in enumerate(self.keys):
            masks = tuple(patterns[key])
            self.single.append(len(masks) == 1)
            if not masks:
                raise ValueError(f"pattern {key!r} has no mask")
            for mask in masks:
                if mask >> size:
                    raise ValueError(f"pattern {key!r} names a cell the layout does not have")
                for p in range(size):
                    if mask >> p & 1:
                        self.by_position[p].append((k, mask & ~layout.free))
        self.done = np.zeros((len(self.keys), ids.size), dtype=bool)
        self.balls: list[int] = []

    @property
    def ordinal(self) -> int:
        return len(self.balls)

    @property
    def cards(self) -> int:
        return int(self.card_ids.size)

    def apply(self, ball: int) -> BallResult:
        """Draw `ball` (the next ordinal): the cards completing each pattern set with it."""
        if isinstance(ball, bool) or not 1 <= int(ball) <= self.layout.max_number:
            raise ValueError(f"ball {ball!r} is not a number 1-{self.layout.max_number}")
        ball = int(ball)
        if ball in self.balls:
            raise ValueError(f"ball {ball} drawn twice")
        size = self.layout.cells
        found: dict[int, list[npt.NDArray[np.int64]]] = {}
        base = ball * size
        for p in range(size):
            lo, hi = int(self.starts[base + p]), int(self.starts[base + p + 1])
            if lo == hi:
                continue
            positions = self.positions[lo:hi]  # a card holds a number once: no repeats
            marks = self.marks[positions] | np.uint32(1 << p)
            self.marks[positions] = marks
            for k, mask in self.by_position[p]:
                complete = positions[(marks & np.uint32(mask)) == mask]
                if complete.size:
                    fresh = complete if self.single[k] else complete[~self.done[k, complete]]
                    if fresh.size:
                        self.done[k, fresh] = True
                        found.setdefault(k, []).append(fresh)
        self.balls.append(ball)
        completed = {
            self.keys[k]: np.sort(self.card_ids[np.concatenate(parts)]) for k, parts in sorted(found.items())
        }
        return BallResult(ordinal=self.ordinal, ball=ball, completed=completed)

    def apply_all(self, balls: Iterable[int]) -> list[BallResult]:
        return [self.apply(ball) for ball in balls]

    def missing(self, key: str) -> npt.NDArray[np.int64]:
        """Per card (index order): the fewest unmarked cells of any mask of pattern `key` ("falta N")."""
        k = self.keys.index(key)
        masks = sorted({mask for cell in self.by_position for kk, mask in cell if kk == k})
        best = np.full(self.cards, self.layout.cells, dtype=np.int64)
        for mask in masks:
            left = np.bitwise_count(np.uint32(mask) & ~self.marks).astype(np.int64)
            np.minimum(best, left, out=best)
        return best


def build(
    layout: Layout,
    card_ids: npt.ArrayLike,
    cells: npt.ArrayLike,
    patterns: Mapping[str, Sequence[int]],
    balls: Sequence[int] = (),
) -> PatternIndex:
    index = PatternIndex(layout, card_ids, cells, patterns)
    index.apply_all(balls)
    return index


def reference(
    layout: Layout,
    cards: Mapping[int, Sequence[int]],
    patterns: Mapping[str, Sequence[int]],
    balls: Sequence[int],
) -> dict[str, dict[int, int]]:
    """The plain answer, for tests: pattern key -> card id -> the ordinal it first completed at."""
    ordinal = {ball: i for i, ball in enumerate(balls, start=1)}
    result: dict[str, dict[int, int]] = {key: {} for key in patterns}
    for card_id, card in cards.items():
        for key, masks in patterns.items():
            best = None
            for mask in masks:
                cells = [p for p in range(layout.cells) if mask >> p & 1 and not layout.free >> p & 1]
                ats = [ordinal.get(card[p]) for p in cells]
                if all(at is not None for at in ats):
                    at = max((a for a in ats if a is not None), default=0)
                    best = at if best is None else min(best, at)
            if best is not None:
                result[key][card_id] = best
    return result
