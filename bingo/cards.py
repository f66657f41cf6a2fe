"""Bingo cards: the 3x9 grid, its validation, and deterministic generation from a seed.

Rules (Melilla regulation art. 147-149): numbers 1..90; a card is 3 rows x 9 columns holding
15 distinct numbers, 5 per row, 1 to 3 per column; column c holds its decade (column 0 = 1..9,
column 8 = 80..90) and numbers ascend down a column.  A strip is 6 cards holding 1..90 once each.

Generation uses only hashlib/hmac (never `random`) so any master card can be recomputed from
the stored series seed, on any machine and Python version.  The generator here is version "v1",
kept unchanged to recompute the series it made; new series are made by "v2" (bingo.cardgen),
vectorised, whose master cards are recomputed without replaying the series.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TypeVar

import numpy as np

ROWS = 3
COLUMNS = 9
NUMBERS_PER_CARD = 15
NUMBERS_PER_ROW = 5
CARDS_PER_STRIP = 6
MAX_NUMBER = 90

Row = tuple[int | None, ...]
Rows = tuple[Row, Row, Row]

_T = TypeVar("_T")


class InvalidCard(ValueError):
    """A grid that breaks the card rules; `problems` lists every broken rule."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


def column_of(number: int) -> int:
    """The 0-based column a number belongs in (90 joins the 80s)."""
    return min(number // 10, COLUMNS - 1)


def _column_numbers(col: int) -> range:
    """All numbers of column `col`: 9 in the first, 10 in the middle, 11 in the last."""
    return range(max(1, col * 10), (MAX_NUMBER + 1) if col == COLUMNS - 1 else col * 10 + 10)


def _column_label(col: int) -> str:
    numbers = _column_numbers(col)
    return f"column {col + 1} ({numbers[0]}-{numbers[-1]})"


def validate_card(rows: object) -> list[str]:
    """Return human-readable problems with `rows` (empty list = valid card).

    Accepts anything (e.g. decoded JSON) so callers can validate untrusted input.
    Rows and columns are numbered from 1 in the messages, as printed on paper.
    """
    if not isinstance(rows, list | tuple) or len(rows) != ROWS:
        return [f"a card must have {ROWS} rows"]
    shape = [
        f"row {r + 1} must have {COLUMNS} cells"
        for r, row in enumerate(rows)
        if not isinstance(row, list | tuple) or len(row) != COLUMNS
    ]
    if shape:
        return shape

    problems: list[str] = []
    grid: list[list[int | None]] = [[None] * COLUMNS for _ in range(ROWS)]
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            where = f"row {r + 1}, column {c + 1}"
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                problems.append(f"{where}: {value!r} is neither a number nor blank")
            elif not 1 <= value <= MAX_NUMBER:
                problems.append(f"{where}: {value} is outside 1-{MAX_NUMBER}")
            elif column_of(value) != c:
                problems.append(f"{where}: {value} belongs in {_column_label(column_of(value))}")
            else:
                grid[r][c] = value

    numbers = [v for row in grid for v in row if v is not None]
    for n in sorted({n for n in numbers if numbers.count(n) > 1}):
        problems.append(f"number {n} appears more than once")
    # Counts use every non-blank cell, even a bad one, so one typo is not reported twice.
    filled = [[v is not None for v in row] for row in rows]
    total = sum(map(sum, filled))
    if total != NUMBERS_PER_CARD:
        problems.append(f"a card holds {NUMBERS_PER_CARD} numbers, this one has {total}")
    for r in range(ROWS):
        count = sum(filled[r])
        if count != NUMBERS_PER_ROW:
            problems.append(f"row {r + 1} has {count} numbers, needs {NUMBERS_PER_ROW}")
    for c in range(COLUMNS):
        count = sum(filled[r][c] for r in range(ROWS))
        if not 1 <= count <= ROWS:
            problems.append(f"{_column_label(c)} has {count} numbers, needs 1 to {ROWS}")
        column = [grid[r][c] for r in range(ROWS) if grid[r][c] is not None]
        for upper, lower in itertools.pairwise(column):
            if upper is not None and lower is not None and upper >= lower:
                problems.append(f"{_column_label(c)} must ascend downwards: {upper} is above {lower}")
    return problems


@dataclass(frozen=True)
class CardGrid:
    """A valid card (construction validates). `None` cells are blanks."""

    rows: Rows

    def __post_init__(self) -> None:
        # Normalise lists to tuples so the grid is hashable and truly immutable.
        object.__setattr__(self, "rows", tuple(tuple(row) for row in self.rows))
        problems = validate_card(self.rows)
        if problems:
            raise InvalidCard(problems)

    @cached_property
    def numbers(self) -> frozenset[int]:
        return frozenset(n for row in self.rows for n in row if n is not None)

    @cached_property
    def row_numbers(self) -> tuple[frozenset[int], frozenset[int], frozenset[int]]:
        first, second, third = (frozenset(n for n in row if n is not None) for row in self.rows)
        return first, second, third

    def to_json(self) -> list[list[int | None]]:
        return [list(row) for row in self.rows]

    @classmethod
    def from_json(cls, data: object) -> CardGrid:
        """Build from decoded JSON, raising InvalidCard with every problem found."""
        problems = validate_card(data)
        if problems:
            raise InvalidCard(problems)
        assert isinstance(data, list | tuple)  # guaranteed by validate_card; narrows for mypy
        first, second, third = (tuple(row) for row in data)
        return cls((first, second, third))

    def key(self) -> str:
        """Canonical 23-hex-digit form of the 90-bit number mask: equal iff same numbers."""
        mask = 0
        for n in self.numbers:
            mask |= 1 << (n - 1)
        return f"{mask:023x}"


PACKED_LENGTH = NUMBERS_PER_CARD  # bytes: row 1's five numbers ascending, then row 2's, then row 3's


def pack_numbers(card: CardGrid) -> bytes:
    """The compact form stored beside each card: its 15 numbers as bytes, row by row.

    Written once from a validated grid when the series is made and never re-validated on read, so the
    winner detector builds its index from these bytes without parsing any JSON.
    """
    return bytes(n for row in card.rows for n in row if n is not None)


def unpack_rows(packed: bytes) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The three rows' numbers of a packed card (the inverse of `pack_numbers`, without validation)."""
    if len(packed) != PACKED_LENGTH:
        raise ValueError(f"a packed card has {PACKED_LENGTH} bytes, not {len(packed)}")
    values = tuple(packed)
    return values[0:5], values[5:10], values[10:15]


def security_code(secret: bytes, series_code: str, serial: int, card: CardGrid) -> str:
    """10-char base32 HMAC tag binding a card's numbers to its series and serial.

    Printed on paper cards: a forger without the hall secret cannot produce a matching code.
    Fields are '|'-joined; serial and key never contain '|', so the encoding is unambiguous.
    """
    return security_code_of_key(secret, series_code, serial, card.key())


def security_code_of_key(secret: bytes, series_code: str, serial: int, key: str) -> str:
    """`security_code` from the card's key (CardGrid.key): series made in bulk build no CardGrid."""
    message = f"bingo-card/v1|{series_code}|{serial}|{key}".encode()
    digest = hmac.new(secret, message, hashlib.sha256).digest()
    return base64.b32encode(digest).decode("ascii")[:10]


_BASE32 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def security_codes(
    secret: bytes, series_code: str, keys: Sequence[str], *, first_serial: int = 1
) -> list[str]:
    """`security_code` of many cards at once: keys[i] is the key of serial first_serial + i.

    The same codes, faster: the one-shot HMAC, and the ten base32 characters (the digest's first 50 bits)
    picked for all cards at once instead of encoding each whole digest.
    """
    prefix = f"bingo-card/v1|{series_code}|"
    heads = b"".join(
        hmac.digest(secret, f"{prefix}{serial}|{key}".encode(), "sha256")[:8]
        for serial, key in enumerate(keys, start=first_serial)
    )
    bits = np.frombuffer(heads, dtype=">u8").astype(np.uint64)
    shifts = np.arange(59, 9, -5, dtype=np.uint64)  # the ten 5-bit groups from the top
    chars = np.frombuffer(_BASE32, dtype=np.uint8)[
        ((bits[:, None] >> shifts) & np.uint64(31)).astype(np.intp)
    ]
    return [code.decode("ascii") for code in np.ascontiguousarray(chars).view("S10").ravel()]


# --- deterministic generation, version "v1" ---------------------------------------------------
# Stored series are recomputed from their seed: any change to the stream or the algorithm
# below changes every card ever sold, so it must come with a new label, never in place.
# "v2" is bingo.cardgen; CardSeries.generator says which one made a series.


class _Drbg:
    """SHA-256 in counter mode keyed by HMAC(seed, label): a reproducible random stream."""

    def __init__(self, seed: bytes, label: str) -> None:
        self._key = hmac.new(seed, label.encode(), hashlib.sha256).digest()
        self._block = 0
        self._buffer = b""
        self._pos = 0

    def _u32(self) -> int:
        if self._pos + 4 > len(self._buffer):
            self._buffer = hashlib.sha256(self._key + self._block.to_bytes(8, "big")).digest()
            self._block += 1
            self._pos = 0
        value = int.from_bytes(self._buffer[self._pos : self._pos + 4], "big")
        self._pos += 4
        return value

    def below(self, n: int) -> int:
        """Uniform integer in [0, n) by rejection sampling (no modulo bias)."""
        limit = (1 << 32) - (1 << 32) % n
        while True:
            value = self._u32()
            if value < limit:
                return value % n

    def shuffle(self, items: list[_T]) -> None:
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


def _feasible(row_sums: Sequence[int], col_sums: Sequence[int], cap: int) -> bool:
    """Can a matrix with entries 0..cap have these row and column sums?

    Max-flow/min-cut (Gale-Ryser for bounded entries): for every k, the k largest column
    sums must fit in sum(min(row, cap * k)).  Checking it before each random choice means the
    generators below never dead-end, so they need no backtracking at all.
    """
    if sum(row_sums) != sum(col_sums):
        return False
    top = 0
    for k, col in enumerate(sorted(col_sums, reverse=True), start=1):
        top += col
        if top > sum(min(r, cap * k) for r in row_sums):
            return False
    return True


def _choose(rng: _Drbg, options: list[_T], ok: Callable[[_T], bool]) -> _T:
    """Pick a random option accepted by `ok`; one exists whenever the state is feasible."""
    options = list(options)
    while options:
        pick = options.pop(rng.below(len(options)))
        if ok(pick):
            return pick
    raise AssertionError("no feasible choice: generator invariant broken")


# Vectors of extra numbers (0..2 each) handed to the 6 cards of a strip, by total.
_EXTRA_VECTORS = {
    total: [v for v in itertools.product(range(3), repeat=CARDS_PER_STRIP) if sum(v) == total]
    for total in range(3, 6)
}
_ROW_SETS = {k: list(itertools.combinations(range(ROWS), k)) for k in range(1, ROWS + 1)}


def _column_counts(rng: _Drbg) -> list[list[int]]:
    """counts[card][col]: how many numbers of column col go to each card (1..3, 15 per card)."""
    # Every card gets one number per column; the 36 extras are spread 0..2 per cell.
    extras = [len(_column_numbers(c)) - CARDS_PER_STRIP for c in range(COLUMNS)]
    need = [NUMBERS_PER_CARD - COLUMNS] * CARDS_PER_STRIP
    counts = [[1] * COLUMNS for _ in range(CARDS_PER_STRIP)]
    for col in range(COLUMNS):
        rest = extras[col + 1 :]

        def ok(vector: tuple[int, ...], rest: list[int] = rest) -> bool:
            left = [n - v for n, v in zip(need, vector, strict=True)]
            return min(left) >= 0 and _feasible(left, rest, cap=2)

        vector = _choose(rng, _EXTRA_VECTORS[extras[col]], ok)
        for card, extra in enumerate(vector):
            counts[card][col] += extra
            need[card] -= extra
    return counts


def _row_layout(rng: _Drbg, counts: Sequence[int]) -> list[tuple[int, ...]]:
    """For one card, the rows (ascending) used in each column so every row gets 5 numbers."""
    need = [NUMBERS_PER_ROW] * ROWS
    layout: list[tuple[int, ...]] = [()] * COLUMNS
    order = list(range(COLUMNS))
    rng.shuffle(order)
    for pos, col in enumerate(order):
        rest = [counts[c] for c in order[pos + 1 :]]

        def ok(rows: tuple[int, ...], rest: list[int] = rest) -> bool:
            left = [n - (r in rows) for r, n in enumerate(need)]
            return min(left) >= 0 and _feasible(left, rest, cap=1)

        rows = _choose(rng, _ROW_SETS[counts[col]], ok)
        for r in rows:
            need[r] -= 1
        layout[col] = rows
    return layout


def _build_strip(seed: bytes, index: int, attempt: int) -> tuple[CardGrid, ...]:
    """One strip from its own DRBG stream over (seed, index, attempt)."""
    rng = _Drbg(seed, f"bingo-strip/v1|{index}|{attempt}")
    counts = _column_counts(rng)
    layouts = [_row_layout(rng, card_counts) for card_counts in counts]
    cells: list[list[list[int | None]]] = [
        [[None] * COLUMNS for _ in range(ROWS)] for _ in range(CARDS_PER_STRIP)
    ]
    for col in range(COLUMNS):
        pool = list(_column_numbers(col))
        rng.shuffle(pool)
        start = 0
        for card in range(CARDS_PER_STRIP):
            take = counts[card][col]
            mine = sorted(pool[start : start + take])
            start += take
            # Rows in a layout are ascending, so sorted numbers ascend down the column.
            for r, n in zip(layouts[card][col], mine, strict=True):
                cells[card][r][col] = n
    return tuple(CardGrid((tuple(g[0]), tuple(g[1]), tuple(g[2]))) for g in cells)


def generate_strip(seed: bytes, index: int, *, attempt: int = 0) -> tuple[CardGrid, ...]:
    """Strip number `index` (0-based) of a seed: 6 valid cards holding 1..90 exactly once.

    `attempt` re-derives the strip from a fresh stream; generate_series bumps it only when a
    strip would repeat an earlier card, so prefer generate_series/card_from_seed for serials.
    """
    if index < 0 or attempt < 0:
        raise ValueError("index and attempt must be >= 0")
    return _build_strip(seed, index, attempt)


_MAX_ATTEMPTS = 1000  # a repeat needs a 1-in-10^12+ collision; 1000 in a row means a bug


def iter_series(seed: bytes) -> Iterator[tuple[CardGrid, ...]]:
    """The strips of a series in order, never repeating a card's numbers.

    A strip whose card duplicates an earlier card is derived again with the next attempt
    counter, so strip k depends on strips 0..k-1; that is why serials are recomputed by
    replaying the series from its start.
    """
    seen: set[str] = set()
    for index in itertools.count():
        for attempt in range(_MAX_ATTEMPTS):
            strip = _build_strip(seed, index, attempt)
            keys = {card.key() for card in strip}
            if seen.isdisjoint(keys):
                break
        else:
            raise RuntimeError(f"strip {index}: no duplicate-free strip after {_MAX_ATTEMPTS} attempts")
        seen |= keys
        yield strip


def generate_series(seed: bytes, strips: int) -> list[CardGrid]:
    """`strips` strips as a flat list in serial order (serial s is item s - 1)."""
    if strips < 0:
        raise ValueError("strips must be >= 0")
    return [card for strip in itertools.islice(iter_series(seed), strips) for card in strip]


def card_from_seed(seed: bytes, serial: int) -> CardGrid:
    """Recompute master card `serial` (1-based) of the series generated from `seed`.

    Equals generate_series(seed, n)[serial - 1] for any large enough n.  Because of the
    duplicate avoidance it replays every strip up to the card's own (about 2 ms per strip).
    """
    if serial < 1:
        raise ValueError("serial numbers start at 1")
    strip_index, position = divmod(serial - 1, CARDS_PER_STRIP)
    strip = next(itertools.islice(iter_series(seed), strip_index, None))
    return strip[position]
