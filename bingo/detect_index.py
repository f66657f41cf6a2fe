"""The winner detector of one game: an inverted index built once from the sold cards' packed numbers.

Built at the close of sales (the sold set is frozen then) from two arrays: the sold cards' ids and their
15 packed numbers (`bingo.cards.pack_numbers`: row 1's five, row 2's, row 3's). For each number the index
lists the card rows holding it (CSR: `starts[n]:starts[n + 1]` of `row_ids`); counters keep how many
numbers each card row and each card still miss. Applying ball n touches only the rows holding n, so a
ball costs O(cards holding n), about a sixth of the cards, never a pass over all of them.

The completions are those of `bingo.detect.winners_at`: a card completes its line at the ball that
completes its FIRST full row, and its bingo at the ball that completes all 15 numbers.
No Django here: the services feed it arrays and record what it returns.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

MAX_NUMBER = 90
ROWS = 3
NUMBERS_PER_ROW = 5
PACKED_LENGTH = ROWS * NUMBERS_PER_ROW

IdArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class BallCompletions:
    """The cards (ids, ascending) that completed their first line / their bingo at one ball."""

    ordinal: int
    ball: int
    lines: IdArray
    bingos: IdArray


def packed_matrix(
    packed: bytes | bytearray | memoryview | npt.NDArray[np.uint8], cards: int
) -> npt.NDArray[np.uint8]:
    """`cards` packed cards (15 bytes each, concatenated) as a (cards, 15) uint8 view, checked cheaply."""
    matrix = np.frombuffer(packed, dtype=np.uint8) if not isinstance(packed, np.ndarray) else packed
    if matrix.size != cards * PACKED_LENGTH:
        raise ValueError(f"{cards} packed cards are {cards * PACKED_LENGTH} bytes, not {matrix.size}")
    matrix = matrix.reshape(cards, PACKED_LENGTH)
    if cards and (int(matrix.min()) < 1 or int(matrix.max()) > MAX_NUMBER):
        raise ValueError(f"a packed card holds a number outside 1-{MAX_NUMBER}")
    return matrix


def _inverted(numbers: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]]:
    """CSR of number -> row ids (card position p's row r is 3p + r), one packed column at a time.

    A column at a time keeps the temporaries to a few bytes per card (a whole-matrix argsort would need
    8 bytes per number, 120 MB at a million cards); each column's rows of number n are copied as one
    slice behind those of the columns before.
    """
    cards = numbers.shape[0]
    columns = [np.ascontiguousarray(numbers[:, j]) for j in range(PACKED_LENGTH)]
    column_counts = [np.bincount(col, minlength=MAX_NUMBER + 1) for col in columns]
    starts = np.zeros(MAX_NUMBER + 2, dtype=np.int64)
    np.cumsum(np.sum(column_counts, axis=0), out=starts[1:])
    row_ids = np.empty(cards * PACKED_LENGTH, dtype=np.int32)
    filled = starts[:-1].tolist()  # where the next row of each number goes
    for j, (col, counts) in enumerate(zip(columns, column_counts, strict=True)):
        rows = np.argsort(col, kind="stable").astype(np.int32)
        rows *= ROWS
        rows += j // NUMBERS_PER_ROW
        taken = 0
        for number, count in enumerate(counts.tolist()):
            if count:
                row_ids[filled[number] : filled[number] + count] = rows[taken : taken + count]
                filled[number] += count
                taken += count
    return starts, row_ids


class GameIndex:
    """Number -> card rows, and what each row and card still miss, at ball `ordinal` of one game.

    `card_ids` are opaque ids (any int64); positions inside the index are 0..cards-1 in the order given.
    """

    def __init__(
        self, card_ids: npt.ArrayLike, packed: bytes | bytearray | memoryview | npt.NDArray[np.uint8]
    ):
        ids = np.ascontiguousarray(card_ids, dtype=np.int64)
        if ids.ndim != 1:
            raise ValueError("card ids are a flat array")
        ordered = np.sort(ids)
        if ordered.size and not (ordered[1:] > ordered[:-1]).all():
            raise ValueError("a card id appears twice")
        numbers = packed_matrix(packed, ids.size)
        self.starts, self.row_ids = _inverted(numbers)
        self.card_ids = ids
        self.row_missing = np.full(ids.size * ROWS, NUMBERS_PER_ROW, dtype=np.uint8)
        # Complete rows per card: 1 is its first line, 3 its bingo (a card's rows share no number).
        self.rows_done = np.zeros(ids.size, dtype=np.uint8)
        self.balls: list[int] = []

    @property
    def ordinal(self) -> int:
        """How many balls have been applied."""
        return len(self.balls)

    @property
    def cards(self) -> int:
        return int(self.card_ids.size)

    @property
    def nbytes(self) -> int:
        arrays = (self.row_ids, self.starts, self.card_ids, self.row_missing, self.rows_done)
        return sum(a.nbytes for a in arrays)

    def apply(self, ball: int) -> BallCompletions:
        """Draw `ball` (the next ordinal): the cards completing their first line and their bingo with it."""
        if isinstance(ball, bool) or not isinstance(ball, int | np.integer) or not 1 <= ball <= MAX_NUMBER:
            raise ValueError(f"ball {ball!r} is not a number 1-{MAX_NUMBER}")
        ball = int(ball)
        if ball in self.balls:
            raise ValueError(
                f"ball {ball} drawn twice (ordinals {self.balls.index(ball) + 1} and {self.ordinal + 1})"
            )
        # Stored as int32 (half the memory); NumPy indexes with intp, so convert once, not per use.
        rows = self.row_ids[self.starts[ball] : self.starts[ball + 1]].astype(np.intp)
        # A row holds a number once, so `rows` has no repeats and the fancy -= is exact.
        left = self.row_missing[rows] - 1
        self.row_missing[rows] = left
        # One ball completes at most one row of a card: the completed rows' cards are distinct too.
        positions = rows[left == 0] // ROWS
        done = self.rows_done[positions] + 1
        self.rows_done[positions] = done
        first = positions[done == 1]
        bingo = positions[done == ROWS]
        self.balls.append(ball)
        return BallCompletions(
            ordinal=self.ordinal, ball=ball, lines=self._ids(first), bingos=self._ids(bingo)
        )

    def apply_all(self, balls: Iterable[int]) -> list[BallCompletions]:
        """Catch up: apply `balls` in order, one result per ball."""
        return [self.apply(ball) for ball in balls]

    @classmethod
    def from_parts(
        cls, card_ids: IdArray, starts: npt.NDArray[np.int64], row_ids: npt.NDArray[np.int32]
    ) -> GameIndex:
        """An index at ball 0 from a saved frozen part (see `save`), checked for consistency."""
        cards = card_ids.size
        if starts.shape != (MAX_NUMBER + 2,) or int(starts[0]) != 0 or int(starts[-1]) != row_ids.size:
            raise ValueError("the saved index's number table is inconsistent")
        if row_ids.size != cards * PACKED_LENGTH or (np.diff(starts) < 0).any():
            raise ValueError("the saved index does not hold 15 numbers per card")
        if cards and (int(row_ids.min()) < 0 or int(row_ids.max()) >= cards * ROWS):
            raise ValueError("the saved index points at rows it does not have")
        index = cls.__new__(cls)
        index.card_ids, index.starts, index.row_ids = card_ids, starts, row_ids
        index.row_missing = np.full(cards * ROWS, NUMBERS_PER_ROW, dtype=np.uint8)
        index.rows_done = np.zeros(cards, dtype=np.uint8)
        index.balls = []
        return index

    def _ids(self, positions: npt.NDArray[np.int32] | npt.NDArray[np.int64]) -> IdArray:
        return np.sort(self.card_ids[positions])


def build(
    card_ids: npt.ArrayLike,
    packed: bytes | bytearray | memoryview | npt.NDArray[np.uint8],
    balls: Sequence[int] = (),
) -> GameIndex:
    """An index for these cards, advanced through `balls` (already drawn)."""
    index = GameIndex(card_ids, packed)
    index.apply_all(balls)
    return index


# --- the frozen part in a file, memory-mapped by every process of the host ----------------------------
# Layout: magic, card count, the number table (92 int64), card ids (int64), row ids (int32), little-endian.
_MAGIC = b"HALLIDX1"


def save(index: GameIndex, path: Path) -> None:
    """Write the index's frozen part (card ids and the number -> rows table), atomically; no counters."""
    # A temporary name of this process and thread: concurrent writers never share one.
    temporary = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with temporary.open("wb") as out:
        out.write(_MAGIC)
        out.write(np.int64(index.cards).astype("<i8").tobytes())
        for array, dtype in ((index.starts, "<i8"), (index.card_ids, "<i8"), (index.row_ids, "<i4")):
            out.write(np.ascontiguousarray(array, dtype=dtype).tobytes())
    os.replace(temporary, path)  # readers see the whole file or none


def load(path: Path) -> GameIndex:
    """The index at ball 0 from a file written by `save`, memory-mapped (read-only, shared page cache)."""
    mapped = np.memmap(path, dtype=np.uint8, mode="r")
    if mapped.size < 16 or bytes(mapped[:8]) != _MAGIC:
        raise ValueError(f"{path} is not a saved index")
    cards = int(np.frombuffer(mapped, dtype="<i8", count=1, offset=8)[0])
    expected = 16 + (MAX_NUMBER + 2) * 8 + cards * 8 + cards * PACKED_LENGTH * 4
    if cards < 0 or mapped.size != expected:
        raise ValueError(f"{path} is {mapped.size} bytes, not the {expected} of {cards} cards")
    offset = 16
    starts = np.frombuffer(mapped, dtype="<i8", count=MAX_NUMBER + 2, offset=offset).astype(np.int64)
    offset += (MAX_NUMBER + 2) * 8
    card_ids = np.frombuffer(mapped, dtype="<i8", count=cards, offset=offset).astype(np.int64)
    offset += cards * 8
    row_ids = np.frombuffer(mapped, dtype=np.int32, count=cards * PACKED_LENGTH, offset=offset)
    return GameIndex.from_parts(card_ids, starts, row_ids)


def pack_ids(ids: np.ndarray) -> bytes:
    """Card ids (ascending) as a completion row's `cards` value: little-endian int64."""
    return np.ascontiguousarray(ids, dtype="<i8").tobytes()


def card_ids(cards: bytes | memoryview) -> np.ndarray:
    """The card ids a completion row's `cards` value holds, ascending."""
    return np.frombuffer(bytes(cards), dtype="<i8").astype(np.int64)
