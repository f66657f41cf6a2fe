"""The winner detector of one electronic game: built once at the close of sales, applied ball by ball.

Generalises `bingo.detect_index` (rows and the full card of the 90-ball card) to any layout and any set of
patterns: an inverted index number -> the (card, cell position) entries holding it (CSR, cards ascending),
and one bitmask of marked cells per card. A ball touches only the cards holding its number (a sixth of them
at 90 balls), in one ascending sweep of the marks. A card is reported for a pattern set the first time one
of its masks is complete (a card's first line, its bingo, a figure).

What a mark completes, two ways with the same answers:
- layouts of at most 16 cells (the 90-ball card's 15): one table per cell position p, indexed by a card's
  marks after the ball, holds the pattern sets (bit k) that marking p completes for the first time (complete
  now, with no mask of them complete without p). Every state of 15 cells is 32,768 rows, so the tables are
  small and a ball costs the same few array passes whatever the patterns, with nothing else kept per card.
- larger layouts (75 balls, 25 cells): each mask is checked on the touched cards (complete now and holding
  the ball's cell), and a set of several masks (the lines) only for a card with none complete before.

Inside, cards are kept in ascending id order and each number's entries ascend by card, so the completing
cards come out sorted without any sort. Per card cell: an int32 card position and a uint8 cell position;
per card: its marks (2 bytes on the 90-ball card) and its id. Ids are opaque int64 (the database's card
ids). Pure: NumPy only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from bingo.electronic.layouts import Layout

IdArray = npt.NDArray[np.int64]

TABLE_CELLS = 16  # layouts up to this many cells use the completion tables (2**cells rows per position)
_BUILD_CHUNK = 1 << 16  # cards per step of the build: bounds its temporaries


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
    """Number -> cards and cells, marks per card, and what each ball completes for the first time.

    `patterns`: key -> the masks of that pattern set ("line": every line of the layout; "full"; a figure).
    `cells`: (cards, layout.cells) uint8 card values in cell order (the free cells' values are ignored).
    `card_ids` keep the order given (`missing` answers in it); results are ids ascending.
    `tables`: the completion tables (default: when the layout has at most TABLE_CELLS cells) or the masks.
    """

    def __init__(
        self,
        layout: Layout,
        card_ids: npt.ArrayLike,
        cells: npt.ArrayLike,
        patterns: Mapping[str, Sequence[int]],
        *,
        tables: bool | None = None,
    ) -> None:
        ids = np.ascontiguousarray(card_ids, dtype=np.int64).reshape(-1)
        values = np.asarray(cells, dtype=np.uint8).reshape(ids.size, layout.cells)
        size = layout.cells
        self.layout = layout
        self.card_ids = ids
        self.keys = tuple(patterns)
        if len(self.keys) > 64:
            raise ValueError("at most 64 pattern sets")
        self.masks: list[tuple[int, ...]] = []  # per key, its masks without the free cells
        for key in self.keys:
            masks = tuple(int(m) for m in patterns[key])
            if not masks:
                raise ValueError(f"pattern {key!r} has no mask")
            if any(m < 0 or m >> size for m in masks):
                raise ValueError(f"pattern {key!r} names a cell the layout does not have")
            self.masks.append(tuple(m & ~layout.free for m in masks))
        # Inside: ids ascending (`_order` maps back to the caller's order; None when it already is).
        self._order: npt.NDArray[np.intp] | None = None
        if ids.size > 1 and not (ids[1:] > ids[:-1]).all():
            self._order = np.argsort(ids, kind="stable")
            values = values[self._order]
        self._ids = ids if self._order is None else ids[self._order]
        if self._ids.size > 1 and not (self._ids[1:] > self._ids[:-1]).all():
            raise ValueError("a card id appears twice")
        self._starts, self._cards, self._cells = _inverted(values, layout)
        self.marks = np.full(ids.size, layout.free, dtype=np.uint16 if size <= 16 else np.uint32)
        self._one = self.marks.dtype.type(1)
        use_tables = size <= TABLE_CELLS if tables is None else tables
        if use_tables and size > TABLE_CELLS:
            raise ValueError(f"completion tables are for layouts of at most {TABLE_CELLS} cells")
        self._tables = _tables(size, self.masks) if use_tables else None
        self.balls: list[int] = []

    @property
    def ordinal(self) -> int:
        return len(self.balls)

    @property
    def cards(self) -> int:
        return int(self.card_ids.size)

    @property
    def nbytes(self) -> int:
        """The bytes the index holds beside the caller's ids (its tables are shared by every card)."""
        held: list[npt.NDArray[Any]] = [self._cards, self._cells, self.marks]
        held += [a for a in (self._order, self._tables) if a is not None]
        if self._order is not None:
            held.append(self._ids)
        return sum(a.nbytes for a in held)

    def apply(self, ball: int) -> BallResult:
        """Draw `ball` (the next ordinal): the cards completing each pattern set with it."""
        if isinstance(ball, bool) or not 1 <= int(ball) <= self.layout.max_number:
            raise ValueError(f"ball {ball!r} is not a number 1-{self.layout.max_number}")
        ball = int(ball)
        if ball in self.balls:
            raise ValueError(f"ball {ball} drawn twice")
        lo, hi = self._starts[ball], self._starts[ball + 1]
        cards = self._cards[lo:hi].astype(np.intp)  # once: NumPy indexes with intp
        cells = self._cells[lo:hi]
        marked = np.take(self.marks, cards)
        bits = np.left_shift(self._one, cells, dtype=marked.dtype)
        marked |= bits
        self.marks[cards] = marked  # a card holds a number once: no repeats
        if self._tables is not None:
            found = self._found_by_table(cards, cells, marked)
        else:
            found = self._found_by_masks(cards, cells, marked, bits)
        self.balls.append(ball)
        return BallResult(ordinal=self.ordinal, ball=ball, completed=found)

    def _found_by_table(
        self,
        cards: npt.NDArray[np.intp],
        cells: npt.NDArray[np.uint8],
        marked: npt.NDArray[np.unsignedinteger],
    ) -> dict[str, IdArray]:
        assert self._tables is not None
        row = cells.astype(np.intp)
        row <<= self.layout.cells
        row |= marked
        keys = np.take(self._tables, row)  # per entry: the pattern sets it completes first
        hit = np.flatnonzero(keys != 0)  # (a bool array: NumPy counts those much faster)
        found: dict[str, IdArray] = {}
        if not hit.size:
            return found
        hit_ids = np.take(self._ids, np.take(cards, hit))  # ascending
        if len(self.keys) == 1:
            return {self.keys[0]: hit_ids}
        hit_keys = np.take(keys, hit)
        one = hit_keys.dtype.type(1)
        for k, key in enumerate(self.keys):
            # np.compress, not ids[mask]: several times faster on masks of mixed density.
            chosen = np.compress(hit_keys & (one << k) != 0, hit_ids)
            if chosen.size:
                found[key] = chosen
        return found

    def _found_by_masks(
        self,
        cards: npt.NDArray[np.intp],
        cells: npt.NDArray[np.uint8],
        marked: npt.NDArray[np.unsignedinteger],
        bits: npt.NDArray[np.unsignedinteger],
    ) -> dict[str, IdArray]:
        found: dict[str, IdArray] = {}
        dtype = marked.dtype.type
        for key, masks in zip(self.keys, self.masks, strict=True):
            fresh = None  # entries completing a mask of `key` holding the ball's cell
            for mask in masks:
                now = (marked & dtype(mask)) == mask
                now &= (bits & dtype(mask)) != 0
                fresh = now if fresh is None else fresh | now
            assert fresh is not None
            hit = np.flatnonzero(fresh)
            if hit.size and len(masks) > 1:
                # Reported once: keep the cards with no mask of `key` complete before this ball.
                before = marked[hit] ^ bits[hit]
                had = np.zeros(hit.size, dtype=bool)
                for mask in masks:
                    had |= (before & dtype(mask)) == mask
                hit = np.compress(~had, hit)
            if hit.size:
                found[key] = np.take(self._ids, np.take(cards, hit))
        return found

    def apply_all(self, balls: Iterable[int]) -> list[BallResult]:
        return [self.apply(ball) for ball in balls]

    def missing(self, key: str) -> npt.NDArray[np.int64]:
        """Per card (in `card_ids` order): the fewest unmarked cells of any mask of `key` ("falta N")."""
        k = self.keys.index(key)
        best = np.full(self.cards, self.layout.cells, dtype=np.int64)
        for mask in sorted(set(self.masks[k])):
            left = np.bitwise_count(np.bitwise_and(np.invert(self.marks), mask)).astype(np.int64)
            np.minimum(best, left, out=best)
        if self._order is None:
            return best
        out = np.empty_like(best)
        out[self._order] = best
        return out


def _tables(size: int, masks: Sequence[tuple[int, ...]]) -> npt.NDArray[np.unsignedinteger]:
    """Flat (cells * 2**cells): row (p << cells | s), for marks `s` holding cell p, has bit k set when
    marking p completes pattern set k for the first time (a mask of k complete in s, none in s without p)."""
    states = np.arange(1 << size, dtype=np.uint64)
    complete = np.zeros(states.size, dtype=np.uint64)  # the sets with a complete mask in each state
    for k, key_masks in enumerate(masks):
        hit = np.zeros(states.size, dtype=bool)
        for mask in key_masks:
            hit = hit | ((states & np.uint64(mask)) == mask)
        complete[hit] |= np.uint64(1 << k)
    tables = np.zeros((size, states.size), dtype=np.uint64)
    for p in range(size):
        bit = np.uint64(1 << p)
        held = (states & bit) != 0
        tables[p, held] = complete[held] & ~complete[states[held] ^ bit]
    # The smallest unsigned type holding a bit per set: the tables stay in the fastest caches.
    dtype = next(
        t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if len(masks) <= 8 * np.dtype(t).itemsize
    )
    return tables.reshape(-1).astype(dtype)


def _inverted(
    values: npt.NDArray[np.uint8], layout: Layout
) -> tuple[list[int], npt.NDArray[np.int32], npt.NDArray[np.uint8]]:
    """CSR of number -> (card position int32, cell position uint8), cards ascending within each number.

    A stable sort of a chunk of cards' numbers at a time (card-major, so each number's entries ascend by
    card), each number's run appended behind those of the chunks before: temporaries of a chunk's size,
    not 8 bytes per cell of every card. The free cells are left out (never marked by a ball).
    """
    cards, size = values.shape
    top = layout.max_number + 1
    free = [p for p in range(size) if layout.free >> p & 1]
    chunks = range(0, cards, _BUILD_CHUNK)

    def numbers_of(start: int) -> npt.NDArray[np.uint8]:
        chunk = np.array(values[start : start + _BUILD_CHUNK], dtype=np.uint8)
        chunk[:, free] = 0
        return chunk.reshape(-1)

    counts = np.zeros(256, dtype=np.int64)
    for start in chunks:
        counts += np.bincount(numbers_of(start), minlength=256)
    if counts[top:].any():
        raise ValueError(f"a card holds a number above {layout.max_number}")
    counts = counts[:top]
    if counts[0] != cards * len(free):
        raise ValueError("a card holds 0 outside the free cells")
    starts = np.zeros(top + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    starts -= counts[0]  # number 0 (free cells) is not stored
    entries = int(starts[-1])
    card_of = np.empty(entries, dtype=np.int32)
    cell_of = np.empty(entries, dtype=np.uint8)
    filled = starts[:-1].tolist()
    for start in chunks:
        flat = numbers_of(start)
        order = np.argsort(flat, kind="stable")  # by number, then card, then cell
        bounds = np.searchsorted(flat[order], np.arange(top + 1)).tolist()
        chunk_cards = (order // size).astype(np.int32)
        chunk_cards += start
        chunk_cells = (order % size).astype(np.uint8)
        lo = bounds[1]
        if (chunk_cards[lo + 1 :] == chunk_cards[lo:-1]).any():  # same card twice in a number's run
            same = flat[order][lo + 1 :] == flat[order][lo:-1]
            if (same & (chunk_cards[lo + 1 :] == chunk_cards[lo:-1])).any():
                raise ValueError("a card holds a number twice")
        for number in range(1, top):
            a, b = bounds[number], bounds[number + 1]
            if a < b:
                at = filled[number]
                card_of[at : at + b - a] = chunk_cards[a:b]
                cell_of[at : at + b - a] = chunk_cells[a:b]
                filled[number] = at + b - a
    return starts.tolist(), card_of, cell_of


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
