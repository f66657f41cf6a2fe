"""The sales announcement of spec §2.7 S6–S8, as data and as the formula the caller reads out."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal


def contiguous_ranges(serials: Iterable[int]) -> list[tuple[int, int]]:
    """[3, 4, 5, 9, 10] -> [(3, 5), (9, 10)]."""
    ranges: list[tuple[int, int]] = []
    for serial in sorted(set(serials)):
        if ranges and serial == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], serial)
        else:
            ranges.append((serial, serial))
    return ranges


@dataclass(frozen=True)
class SeriesSales:
    series: str
    face_value: Decimal
    ranges: Sequence[tuple[int, int]]

    @property
    def cards(self) -> int:
        return sum(last - first + 1 for first, last in self.ranges)


def sales_formula(sold: Sequence[SeriesSales]) -> str:
    """The S6 formula (TB-40): "Cartones vendidos 120, del número 1 al 60 y del número 301 al 360, ..."."""
    total = sum(s.cards for s in sold)
    parts = [
        f"serie {s.series}: " + " y ".join(f"del número {a} al {b}" for a, b in s.ranges)
        for s in sold
        if s.ranges
    ]
    return f"Cartones vendidos {total}, " + "; ".join(parts) + ", de las series en juego."
