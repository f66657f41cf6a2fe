"""Card generator "v2": whole series of strips at once with NumPy, any master card recomputed alone.

Each strip is derived on its own from (seed, strip index, attempt): its random words are SHAKE-128 output
keyed by HMAC(seed, label), read little-endian, so the stream is the same on every machine and every NumPy
version (no NumPy distribution is used: shuffles are argsorts of those words, written out here).  A strip is
built in three steps, each vectorised over every strip of the batch:

1. how many numbers of each column each card gets (1..3, 15 per card): the 36 numbers beyond one per card
   and column are dealt at random, six to a card, and a deal that gives a card three extras of one column is
   dealt again from the next words of the strip's stream (about half of the deals are kept);
2. which rows of a card hold each column: the card's columns in a random order, each column's cells laid one
   after the other on the rows 0, 1, 2, 0, 1, ... (every row gets five, a column never repeats a row), then
   the three rows permuted at random;
3. which numbers: each column's numbers shuffled and handed out in that order, ascending down the column.

Strips never depend on each other, so card `serial` is recomputed from its own strip alone.  The one thing
that spans strips is that no two cards of a series hold the same numbers: a strip that repeats a card of a
lower strip is derived again with the next attempt counter.  That is rare (two cards agree with probability
about 2e-16, so about one 100,000-card series in a million has a repeat); the series stores those
(strip index, attempt) pairs, and recomputing a card takes them as an argument.

Stored series are recomputed from their seed: changing anything here changes cards already sold, so a
change needs a new label ("v3"), never an edit in place.  Version "v1" (bingo.cards) stays as it was.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import permutations

import numpy as np
import numpy.typing as npt

from bingo import cards
from bingo.cards import CARDS_PER_STRIP, COLUMNS, MAX_NUMBER, NUMBERS_PER_CARD, ROWS, CardGrid

V1 = "v1"
V2 = "v2"
GENERATORS = (V1, V2)
CURRENT = V2

U8 = npt.NDArray[np.uint8]
U32 = npt.NDArray[np.uint32]
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]

_LABEL = b"bingo-strip/v2"
_NUMBERS = np.arange(1, MAX_NUMBER + 1)
_COLUMN_OF = np.minimum(_NUMBERS // 10, COLUMNS - 1)  # column of number n is _COLUMN_OF[n - 1]
_COLUMN_SIZES = np.bincount(_COLUMN_OF, minlength=COLUMNS)  # 9, 10 x 7, 11
_COLUMN_STARTS = np.concatenate(([0], np.cumsum(_COLUMN_SIZES)[:-1]))  # index of each column's first number
_POSITION_IN_COLUMN = np.arange(MAX_NUMBER) - _COLUMN_STARTS[_COLUMN_OF]
# The extras: every card holds one number of each column, the other 36 are dealt (column label per extra).
_EXTRAS = np.repeat(np.arange(COLUMNS), _COLUMN_SIZES - CARDS_PER_STRIP)
_EXTRAS_PER_CARD = len(_EXTRAS) // CARDS_PER_STRIP  # 6 = 15 - 9
_ROW_ORDERS = np.array(list(permutations(range(ROWS))))  # the 6 orders of 3 rows
_ROW_RANKS = np.argsort(_ROW_ORDERS, axis=1)  # inverse of each order: where row r was sent

# Words of a strip's stream: the fixed part first, then one block per deal of the extras.
_NUMBER_WORDS = MAX_NUMBER  # a sort key per number (column shuffles)
_COLUMN_ORDER_WORDS = CARDS_PER_STRIP * COLUMNS  # a sort key per card and column (layout order)
_ROW_ORDER_WORDS = CARDS_PER_STRIP  # one word per card picks one of the 6 row orders
_FIXED_WORDS = _NUMBER_WORDS + _COLUMN_ORDER_WORDS + _ROW_ORDER_WORDS
_DEAL_WORDS = len(_EXTRAS)
_FIRST_DEALS = 2  # read at once; about 4 strips in 5 keep one of them
_MAX_DEALS = 4096  # a deal is kept with probability ~0.54: 4096 refusals in a row means a bug
_BATCH = 256  # strips built together
_MAX_ROUNDS = 1000  # rounds of re-derivation: one is needed in about a million 100,000-card series


def _key(seed: bytes) -> bytes:
    return hmac.new(seed, _LABEL, hashlib.sha256).digest()


def _stream(key: bytes, index: int, attempt: int, words: int) -> bytes:
    """The first `words` 32-bit words of strip (index, attempt): SHAKE-128 over the key and both counters."""
    message = key + index.to_bytes(8, "big") + attempt.to_bytes(4, "big")
    return hashlib.shake_128(message).digest(4 * words)


def _words(key: bytes, indices: Ints, attempts: Ints, words: int) -> U32:
    """(strips, words) array of each strip's stream, read little-endian on every machine."""
    raw = b"".join(_stream(key, int(i), int(a), words) for i, a in zip(indices, attempts, strict=True))
    return np.frombuffer(raw, dtype="<u4").reshape(len(indices), words).astype(np.uint32)


def _shuffle_order(sort_keys: npt.NDArray[np.integer]) -> Ints:
    """Random order from random sort keys along the last axis (ties, ~1e-7 per shuffle, keep position)."""
    return np.argsort(sort_keys, axis=-1, kind="stable").astype(np.int64)


def _deal_extras(words: U32) -> tuple[Ints, Bools]:
    """Deal the 36 extras by one shuffle per strip: (extras per card and column, whether the deal is kept)."""
    strips = len(words)
    dealt = _EXTRAS[_shuffle_order(words)]  # (strips, 36): card k gets positions 6k..6k+5
    card = np.arange(len(_EXTRAS)) // _EXTRAS_PER_CARD
    cell = (np.arange(strips)[:, None] * CARDS_PER_STRIP + card) * COLUMNS + dealt
    extras = np.bincount(cell.ravel(), minlength=strips * CARDS_PER_STRIP * COLUMNS)
    extras = extras.reshape(strips, CARDS_PER_STRIP, COLUMNS).astype(np.int64)
    return extras, np.asarray((extras <= ROWS - 1).all(axis=(1, 2)), dtype=np.bool_)


def _column_counts(key: bytes, indices: Ints, attempts: Ints, words: U32) -> Ints:
    """counts[strip, card, column]: 1..3 numbers, 15 per card, the column's size per column.

    Deal d of a strip reads words _FIXED_WORDS + 36 d onwards; the first deal that gives no card three
    extras of one column is kept, so each strip's counts depend on its own stream only.
    """
    extras = np.zeros((len(indices), CARDS_PER_STRIP, COLUMNS), dtype=np.int64)
    pending = np.arange(len(indices))  # strips still without a valid deal; `stream` has their rows
    stream = words
    read = _FIRST_DEALS
    deal = 0
    while len(pending):
        if deal == read:  # rare: read a longer stream for the strips still pending
            if read >= _MAX_DEALS:
                raise RuntimeError("no valid deal of the extras: generator invariant broken")
            read = min(read * 8, _MAX_DEALS)
            stream = _words(key, indices[pending], attempts[pending], _FIXED_WORDS + read * _DEAL_WORDS)
        start = _FIXED_WORDS + deal * _DEAL_WORDS
        dealt, valid = _deal_extras(stream[:, start : start + _DEAL_WORDS])
        extras[pending[valid]] = dealt[valid]
        pending, stream = pending[~valid], stream[~valid]
        deal += 1
    return extras + 1


def _row_membership(counts: Ints, words: U32) -> Bools:
    """member[strip, card, column, row]: whether that cell holds a number (5 per row, counts per column).

    The card's columns in a random order lay their cells one after the other on rows 0, 1, 2, 0, ...:
    15 cells give each row five, and a column's (at most 3) consecutive cells fall on distinct rows.
    """
    strips = len(counts)
    order_keys = words[:, :_COLUMN_ORDER_WORDS].reshape(strips, CARDS_PER_STRIP, COLUMNS)
    order = _shuffle_order(order_keys)  # columns in laying order
    laid = np.take_along_axis(counts, order, axis=-1)
    starts = np.empty_like(counts)  # first cell of each column in the laying sequence
    np.put_along_axis(starts, order, np.cumsum(laid, axis=-1) - laid, axis=-1)
    # Lemire's multiply-shift picks one of 6 row orders (bias below 6 / 2**32).
    pick = (words[:, _COLUMN_ORDER_WORDS:].astype(np.uint64) * len(_ROW_ORDERS)) >> np.uint64(32)
    ranks = _ROW_RANKS[pick.astype(np.int64)]  # (strips, 6, 3): sequence slot (mod 3) of each row
    # Row r is used by a column starting at slot s with n cells iff (rank(r) - s) mod 3 < n.
    offset = (ranks[:, :, None, :] - starts[..., None]) % ROWS
    return offset < counts[..., None]


def _deal_numbers(counts: Ints, words: U32) -> Ints:
    """numbers[strip, card, column, i]: the card's i-th smallest number of the column (0 past its count)."""
    strips = len(counts)
    # Sorting by (column, random key) shuffles each column's numbers; slot j keeps column _COLUMN_OF[j].
    sort_keys = (_COLUMN_OF.astype(np.uint64) << np.uint64(32)) | words.astype(np.uint64)
    shuffled = _shuffle_order(sort_keys) + 1  # (strips, 90): the number at each slot
    # Each column's slots go to card 0 (as many as it takes), then card 1, ...
    by_column = counts.transpose(0, 2, 1).ravel()  # strip, column, card
    slot_card = np.repeat(np.tile(np.arange(CARDS_PER_STRIP), strips * COLUMNS), by_column)
    group = slot_card.reshape(strips, MAX_NUMBER) * COLUMNS + _COLUMN_OF  # card * 9 + column
    # Sorting (group, number) lists each card's column in ascending order, groups one after the other.
    ordered = np.sort(group * 128 + shuffled, axis=1)
    group, number = ordered >> 7, ordered & 127
    flat_counts = counts.reshape(strips, CARDS_PER_STRIP * COLUMNS)
    group_start = np.cumsum(flat_counts, axis=1) - flat_counts
    strip_rows = np.arange(strips)[:, None]
    rank = np.arange(MAX_NUMBER) - group_start[strip_rows, group]
    numbers = np.zeros((strips, CARDS_PER_STRIP * COLUMNS, ROWS), dtype=np.int64)
    numbers[strip_rows, group, rank] = number
    return numbers.reshape(strips, CARDS_PER_STRIP, COLUMNS, ROWS)


def _build_strips(key: bytes, indices: Ints, attempts: Ints) -> U8:
    """grids[strip, card, row, column] (0 = blank) of strips (index, attempt), all at once."""
    words = _words(key, indices, attempts, _FIXED_WORDS + _FIRST_DEALS * _DEAL_WORDS)
    counts = _column_counts(key, indices, attempts, words)
    numbers = _deal_numbers(counts, words[:, :_NUMBER_WORDS])
    member = _row_membership(counts, words[:, _NUMBER_WORDS:_FIXED_WORDS])
    # The i-th used row (top down) of a column takes its i-th smallest number: columns ascend.
    used_rank = np.clip(np.cumsum(member, axis=-1) - 1, 0, ROWS - 1)
    cells = np.take_along_axis(numbers, used_rank, axis=-1) * member  # (strips, 6, 9, 3)
    grids = cells.transpose(0, 1, 3, 2).astype(np.uint8)
    problems = strip_problems(grids)
    if problems:
        raise AssertionError("generator invariant broken: " + "; ".join(problems))
    return grids


def strip_problems(grids: U8) -> list[str]:
    """Every card rule checked at once on grids[strip, card, row, column] (empty list = all valid).

    The same rules as bingo.cards.validate_card, plus: every strip holds 1..90 exactly once.
    """
    problems: list[str] = []
    cells = grids.astype(np.int64)
    filled = cells > 0
    if (filled.sum(axis=-1) != cards.NUMBERS_PER_ROW).any():
        problems.append("a row without 5 numbers")
    per_column = filled.sum(axis=-2)
    if ((per_column < 1) | (per_column > ROWS)).any():
        problems.append("a column without 1 to 3 numbers")
    if (filled & (np.minimum(cells // 10, COLUMNS - 1) != np.arange(COLUMNS))).any():
        problems.append("a number outside its column's decade")
    # Down a column, each number exceeds every filled cell above it (blanks count as 0).
    above = np.maximum.accumulate(cells, axis=-2)
    if (filled[..., 1:, :] & (cells[..., 1:, :] <= above[..., :-1, :])).any():
        problems.append("a column that does not ascend downwards")
    slots = np.arange(len(grids))[:, None] * (MAX_NUMBER + 1) + cells.reshape(len(grids), -1)
    held = np.bincount(slots.ravel(), minlength=len(grids) * (MAX_NUMBER + 1))
    held = held.reshape(len(grids), MAX_NUMBER + 1)[:, 1:]  # (strips, 90): how often each number
    if (held != 1).any():
        problems.append("a strip that does not hold 1-90 once each")
    return problems


def _packed(grids: U8) -> U8:
    """(cards, 15): each card's numbers row by row, as bingo.cards.pack_numbers writes them."""
    flat = grids.reshape(-1, ROWS * COLUMNS)
    return flat[flat > 0].reshape(-1, NUMBERS_PER_CARD)


_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def _masks(packed: U8) -> U8:
    """(cards, 12): the 90-bit set of each card's numbers, big-endian (bit n - 1 is number n)."""
    bits = np.zeros((len(packed), 96), dtype=np.bool_)
    bits[np.arange(len(packed))[:, None], 96 - packed.astype(np.int64)] = True
    return np.packbits(bits, axis=1)


def _mask_keys(masks: U8) -> list[str]:
    """bingo.cards.CardGrid.key of each card: 23 hex digits of its mask."""
    digits = np.stack((_HEX[masks >> 4], _HEX[masks & 15]), axis=-1).reshape(len(masks), 24)
    return _text_rows(digits[:, 1:])


def _repeating_strips(grids: U8) -> Ints:
    """Strips holding a card whose numbers a lower strip's card already has (a strip's cards never repeat)."""
    masks = _masks(_packed(grids))
    halves = np.zeros((len(masks), 16), dtype=np.uint8)
    halves[:, 4:] = masks
    high, low = halves.view(">u8").astype(np.uint64).T
    strip = np.arange(len(masks)) // CARDS_PER_STRIP
    order = np.lexsort((strip, low, high))
    same = (high[order][1:] == high[order][:-1]) & (low[order][1:] == low[order][:-1])
    return np.unique(strip[order][1:][same])


def _text_rows(chars: U8) -> list[str]:
    """Each row of an ASCII byte array as a str."""
    width = chars.shape[1]
    return [text.decode("ascii") for text in np.ascontiguousarray(chars).view(f"S{width}").ravel()]


# A card as JSON text of fixed width: every cell takes 4 characters, "null" or a number padded with spaces.
_CELL_TEXT = np.frombuffer(b"null" + b"".join(f"{n:>4}".encode() for n in range(1, MAX_NUMBER + 1)), np.uint8)
_CELL_TEXT = _CELL_TEXT.reshape(MAX_NUMBER + 1, 4)
_ROW_TEMPLATE = "[" + ",".join(["@@@@"] * COLUMNS) + "]"
_GRID_TEMPLATE = np.frombuffer(("[" + ",".join([_ROW_TEMPLATE] * ROWS) + "]").encode(), dtype=np.uint8)
_GRID_CELLS = np.flatnonzero(ord("@") == _GRID_TEMPLATE).reshape(ROWS * COLUMNS, 4)  # row by row


@dataclass(frozen=True)
class GeneratedSeries:
    """A series' cards in serial order (serial s is row s - 1) and the strips that had to be derived again."""

    grids: U8  # (cards, 3, 9), 0 = blank
    rederived: tuple[tuple[int, int], ...]  # (strip index, attempt), ascending by index

    def __len__(self) -> int:
        return len(self.grids)

    def packed(self) -> U8:
        """(cards, 15): what bingo.cards.pack_numbers gives for each card."""
        return _packed(self.grids)

    def keys(self) -> list[str]:
        """bingo.cards.CardGrid.key of each card."""
        return _mask_keys(_masks(self.packed()))

    def rows(self) -> list[list[list[int | None]]]:
        """Each card's grid as JSON-ready rows (None = blank), as CardGrid.to_json gives it."""
        return [[[n or None for n in row] for row in card] for card in self.grids.tolist()]

    def grid_texts(self) -> list[str]:
        """Each card's grid as JSON text (the same JSON value as `rows`, cells padded to equal width)."""
        text = np.repeat(_GRID_TEMPLATE[None, :], len(self.grids), axis=0)
        text[:, _GRID_CELLS] = _CELL_TEXT[self.grids.reshape(len(self.grids), ROWS * COLUMNS)]
        return _text_rows(text)

    def packed_hex(self) -> list[str]:
        """Each card's packed numbers (`packed`) as 30 hex digits."""
        packed = self.packed()
        digits = np.stack((_HEX[packed >> 4], _HEX[packed & 15]), axis=-1)
        return _text_rows(digits.reshape(len(packed), 2 * NUMBERS_PER_CARD))

    def card(self, index: int) -> CardGrid:
        first, second, third = (tuple(n or None for n in row) for row in self.grids[index].tolist())
        return CardGrid((first, second, third))


def generate_series(seed: bytes, strips: int) -> GeneratedSeries:
    """`strips` strips of 6 cards, all valid, no two cards with the same numbers.

    A strip repeating a card of a lower strip is derived again with its next attempt, so a strip never
    changes because of a higher one: the first n strips of a longer series are the series of n strips.
    """
    if strips < 0:
        raise ValueError("strips must be >= 0")
    key = _key(seed)
    indices = np.arange(strips, dtype=np.int64)
    attempts = np.zeros(strips, dtype=np.int64)
    # Batches small enough to stay in the CPU's cache; strips do not depend on each other.
    grids = np.zeros((strips, CARDS_PER_STRIP, ROWS, COLUMNS), dtype=np.uint8)
    for first in range(0, strips, _BATCH):
        batch = slice(first, first + _BATCH)
        grids[batch] = _build_strips(key, indices[batch], attempts[batch])
    for _ in range(_MAX_ROUNDS):
        again = _repeating_strips(grids.reshape(-1, ROWS, COLUMNS))
        if not len(again):
            break
        attempts[again] += 1
        grids[again] = _build_strips(key, again, attempts[again])
    else:
        raise RuntimeError(f"still repeating cards after {_MAX_ROUNDS} re-derivations")
    rederived = tuple((int(i), int(attempts[i])) for i in np.flatnonzero(attempts))
    return GeneratedSeries(grids.reshape(-1, ROWS, COLUMNS), rederived)


def generate_strips(
    seed: bytes, first: int, count: int, rederived: Iterable[tuple[int, int]] = ()
) -> GeneratedSeries:
    """Strips `first`..`first + count - 1` (0-based) of the v2 series of `seed` alone, each with its attempt
    from the series' stored `rederived` (every other strip attempt 0): the same cards as those strips of
    `generate_series`, without deriving the rest (a hall's share of a network series). Serial s of the
    series is row s - 1 - first * 6 of the result."""
    if first < 0 or count < 0:
        raise ValueError("first and count must be >= 0")
    attempt_of = dict(rederived)
    indices = np.arange(first, first + count, dtype=np.int64)
    attempts = np.array([attempt_of.get(int(i), 0) for i in indices], dtype=np.int64)
    grids = np.zeros((count, CARDS_PER_STRIP, ROWS, COLUMNS), dtype=np.uint8)
    for at in range(0, count, _BATCH):
        batch = slice(at, at + _BATCH)
        grids[batch] = _build_strips(_key(seed), indices[batch], attempts[batch])
    return GeneratedSeries(grids.reshape(-1, ROWS, COLUMNS), ())


def faces_digest(keys: Iterable[str]) -> str:
    """One SHA-256 over the cards' keys in serial order: two parties that made the same cards agree on it
    without exchanging them (a hall's share of a network series against the central's)."""
    digest = hashlib.sha256()
    for key in keys:
        digest.update(key.encode())
        digest.update(b"\n")
    return digest.hexdigest()


def generate_strip(seed: bytes, index: int, *, attempt: int = 0) -> tuple[CardGrid, ...]:
    """Strip `index` (0-based) derived with `attempt`: 6 valid cards holding 1..90 once each."""
    if index < 0 or attempt < 0:
        raise ValueError("index and attempt must be >= 0")
    grids = _build_strips(_key(seed), np.array([index]), np.array([attempt]))[0]
    return tuple(GeneratedSeries(grids, ()).card(i) for i in range(CARDS_PER_STRIP))


def card_from_seed(seed: bytes, serial: int, rederived: Iterable[tuple[int, int]] = ()) -> CardGrid:
    """Master card `serial` (1-based) of the v2 series of `seed`, from its own strip alone.

    `rederived` is the series' stored list of (strip index, attempt); every other strip is attempt 0.
    """
    if serial < 1:
        raise ValueError("serial numbers start at 1")
    index, position = divmod(serial - 1, CARDS_PER_STRIP)
    attempt = dict(rederived).get(index, 0)
    return generate_strip(seed, index, attempt=attempt)[position]


def recompute_card(
    generator: str, seed: bytes, serial: int, rederived: Iterable[tuple[int, int]] = ()
) -> CardGrid:
    """Master card `serial` of a stored series, with the generator version the series was made with."""
    if generator == V1:
        return cards.card_from_seed(seed, serial)
    if generator == V2:
        return card_from_seed(seed, serial, rederived)
    raise ValueError(f"unknown card generator {generator!r}")


def rederived_pairs(stored: object) -> tuple[tuple[int, int], ...]:
    """The (strip index, attempt) pairs of a series' stored JSON list."""
    if not isinstance(stored, list | tuple):
        raise ValueError("rederived strips are a list of [strip index, attempt]")
    pairs = []
    for item in stored:
        if isinstance(item, Mapping):
            raise ValueError("rederived strips are [strip index, attempt] pairs")
        index, attempt = item
        pairs.append((int(index), int(attempt)))
    return tuple(pairs)
