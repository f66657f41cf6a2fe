"""Card layouts of electronic bingo (EB-03): the number range, the card's cells, its lines and its figures.

A card is a tuple of cell values in the layout's cell order (0 = a free cell, always marked). Patterns are
bitmasks over cell positions (bit p = cell p): a pattern is complete when every cell of it is marked.

- "90": the traditional 3x9 card of 15 numbers (TB-02/TB-03, AB-01), stored as `bingo.cards.pack_numbers`
  does: row 1's five numbers ascending, then row 2's, then row 3's; cell p is row p // 5. Its lines are the
  three rows; its figures are drawn on the 3x5 grid of numbers (the blanks are not cells).
- "75": the 5x5 card (B 1-15, I 16-30, N 31-45, G 46-60, O 61-75) with a free centre; cell p is row p // 5,
  column p % 5. Its lines are the five rows, the five columns and the two diagonals.

Cards are dealt from a seed by HMAC-SHA256 (never `random`), so a purchase's cards can be recomputed from
the seed its purchase keeps. Pure: no Django.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from bingo import cardgen
from bingo.cards import CARDS_PER_STRIP, CardGrid, column_of

Card = tuple[int, ...]


def mask_of(cells: Sequence[int]) -> int:
    mask = 0
    for cell in cells:
        mask |= 1 << cell
    return mask


def cells_of(mask: int) -> tuple[int, ...]:
    return tuple(p for p in range(mask.bit_length()) if mask >> p & 1)


@dataclass(frozen=True)
class Layout:
    code: str
    max_number: int
    rows: int
    columns: int  # of the grid of cells (5 for both: the 90 card's blanks are not cells)
    free: int  # mask of the free cells
    lines: tuple[int, ...]  # every mask that is "a line" (Línea)
    figures: Mapping[str, int] = field(repr=False)  # the named figures this layout offers

    @property
    def cells(self) -> int:
        return self.rows * self.columns

    @property
    def full(self) -> int:
        """The whole card (Bingo)."""
        return (1 << self.cells) - 1

    def pattern(self, name: str) -> tuple[int, ...]:
        """The masks of a pattern name: "line" (any of them), "full", or a figure of the layout."""
        if name == "line":
            return self.lines
        if name == "full":
            return (self.full,)
        if name in self.figures:
            return (self.figures[name],)
        raise ValueError(f"layout {self.code} has no pattern {name!r}")

    def deal(self, seed: bytes, count: int) -> list[Card]:
        """`count` cards dealt from `seed` (the same seed, the same cards)."""
        if count < 0:
            raise ValueError("count must be >= 0")
        return list(_DEALERS[self.code](seed, count))

    def problems(self, card: Sequence[int]) -> list[str]:
        """What is wrong with `card` for this layout (empty: a valid card)."""
        return _CHECKS[self.code](card)

    def grid(self, card: Sequence[int]) -> list[list[int | None]]:
        """The card as printed: rows of columns (None = a blank, 0 = the free cell)."""
        return _GRIDS[self.code](card)


def _rows_and_columns(size: int) -> tuple[list[int], list[int], list[int]]:
    rows = [mask_of([r * size + c for c in range(size)]) for r in range(size)]
    columns = [mask_of([r * size + c for r in range(size)]) for c in range(size)]
    diagonals = [
        mask_of([i * size + i for i in range(size)]),
        mask_of([i * size + size - 1 - i for i in range(size)]),
    ]
    return rows, columns, diagonals


_R75, _C75, _D75 = _rows_and_columns(5)
_ROWS90 = [mask_of(range(5 * r, 5 * r + 5)) for r in range(3)]

NINETY = Layout(
    code="90",
    max_number=90,
    rows=3,
    columns=5,
    free=0,
    lines=tuple(_ROWS90),
    figures={
        "corners": mask_of([0, 4, 10, 14]),
        "x": mask_of([0, 4, 7, 10, 14]),
        "frame": _ROWS90[0] | _ROWS90[2] | mask_of([5, 9]),
        "centre": mask_of([2, 6, 7, 8, 12]),
    },
)

SEVENTY_FIVE = Layout(
    code="75",
    max_number=75,
    rows=5,
    columns=5,
    free=mask_of([12]),
    lines=tuple(_R75 + _C75 + _D75),
    figures={
        "corners": mask_of([0, 4, 20, 24]),
        "x": _D75[0] | _D75[1],
        "frame": _R75[0] | _R75[4] | _C75[0] | _C75[4],
        "cross": _R75[2] | _C75[2],
        "centre": mask_of([6, 7, 8, 11, 12, 13, 16, 17, 18]),
    },
)

LAYOUTS: Mapping[str, Layout] = {layout.code: layout for layout in (NINETY, SEVENTY_FIVE)}


def layout_of(code: str) -> Layout:
    try:
        return LAYOUTS[code]
    except KeyError:
        raise ValueError(f"unknown card layout {code!r}; known: {', '.join(sorted(LAYOUTS))}") from None


# --- 90 balls: strips of the v2 generator, 15 packed numbers per card ------------------------------------


def _deal_90(seed: bytes, count: int) -> Iterator[Card]:
    # The strips 0, 1, ... of the seed's series, each its attempt 0 (cardgen.generate_strip), checked whole
    # by the generator: their first `count` cards' packed numbers, no grid built per card.
    strips = -(-count // CARDS_PER_STRIP)
    for numbers in cardgen.generate_strips(seed, 0, strips).packed()[:count].tolist():
        yield tuple(numbers)


def _check_90(card: Sequence[int]) -> list[str]:
    if len(card) != 15:
        return [f"a 90-ball card has 15 numbers, not {len(card)}"]
    rows = [list(card[5 * r : 5 * r + 5]) for r in range(3)]
    if any(row != sorted(row) for row in rows):
        return ["each row's numbers ascend"]
    grid: list[list[int | None]] = [[None] * 9 for _ in range(3)]
    for r, row in enumerate(rows):
        for n in row:
            if not 1 <= n <= 90:
                return [f"{n} is not a number 1-90"]
            grid[r][column_of(n)] = n
    try:
        CardGrid((tuple(grid[0]), tuple(grid[1]), tuple(grid[2])))
    except ValueError as exc:
        return [str(exc)]
    return []


def _grid_90(card: Sequence[int]) -> list[list[int | None]]:
    grid: list[list[int | None]] = [[None] * 9 for _ in range(3)]
    for p, n in enumerate(card):
        grid[p // 5][column_of(n)] = n
    return grid


# --- 75 balls: five of the column's fifteen numbers, the centre free --------------------------------------


class _Drbg:
    """HMAC-SHA256 in counter mode: unbiased integers below a bound, by rejection."""

    def __init__(self, seed: bytes) -> None:
        self.key = hashlib.sha256(b"hall-75:" + seed).digest()
        self.counter = 0
        self.buffer = b""

    def below(self, bound: int) -> int:
        limit = (1 << 32) - (1 << 32) % bound
        while True:
            if len(self.buffer) < 4:
                self.buffer += hmac.new(self.key, self.counter.to_bytes(8, "big"), hashlib.sha256).digest()
                self.counter += 1
            value, self.buffer = int.from_bytes(self.buffer[:4], "big"), self.buffer[4:]
            if value < limit:
                return value % bound


def _deal_75(seed: bytes, count: int) -> Iterator[Card]:
    rng = _Drbg(seed)
    for _ in range(count):
        cells = [0] * 25
        for c in range(5):
            pool = list(range(15 * c + 1, 15 * c + 16))
            for i in range(len(pool) - 1, 0, -1):  # Fisher-Yates
                j = rng.below(i + 1)
                pool[i], pool[j] = pool[j], pool[i]
            for r in range(5):
                cells[r * 5 + c] = pool[r]
        cells[12] = 0
        yield tuple(cells)


def _check_75(card: Sequence[int]) -> list[str]:
    if len(card) != 25:
        return [f"a 75-ball card has 25 cells, not {len(card)}"]
    problems = []
    if card[12] != 0:
        problems.append("the centre is the free cell (0)")
    seen: set[int] = set()
    for p, n in enumerate(card):
        if p == 12:
            continue
        c = p % 5
        if not 15 * c + 1 <= n <= 15 * c + 15:
            problems.append(f"{n} is not in column {'BINGO'[c]} ({15 * c + 1}-{15 * c + 15})")
        if n in seen:
            problems.append(f"{n} appears twice")
        seen.add(n)
    return problems


def _grid_75(card: Sequence[int]) -> list[list[int | None]]:
    return [list(card[5 * r : 5 * r + 5]) for r in range(5)]


_DEALERS = {"90": _deal_90, "75": _deal_75}
_CHECKS = {"90": _check_90, "75": _check_75}
_GRIDS = {"90": _grid_90, "75": _grid_75}
