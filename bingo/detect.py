"""Winner detection: when did each card complete a line and the bingo.

Everything is expressed in ball ordinals (1 = first ball drawn) because the rules compare
claims by the ball at which they happen, and co-winners are those of the same ordinal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bingo.cards import MAX_NUMBER, CardGrid


def ordinal_map(balls: Sequence[int]) -> dict[int, int]:
    """number -> 1-based ordinal at which it was drawn; rejects repeats and bad numbers."""
    ordinals: dict[int, int] = {}
    for ordinal, ball in enumerate(balls, start=1):
        if isinstance(ball, bool) or not isinstance(ball, int) or not 1 <= ball <= MAX_NUMBER:
            raise ValueError(f"ball {ordinal} is {ball!r}, not a number 1-{MAX_NUMBER}")
        if ball in ordinals:
            raise ValueError(f"ball {ball} drawn twice (ordinals {ordinals[ball]} and {ordinal})")
        ordinals[ball] = ordinal
    return ordinals


@dataclass(frozen=True)
class Completion:
    """Ordinals at which a card completed its first row and all 15 numbers (None = not yet)."""

    line_at: int | None
    bingo_at: int | None


def _completed_at(numbers: frozenset[int], ordinals: Mapping[int, int]) -> int | None:
    """The ordinal of the last of `numbers` to be drawn, or None if one is still missing."""
    latest = 0
    for n in numbers:
        ordinal = ordinals.get(n)
        if ordinal is None:
            return None
        latest = max(latest, ordinal)
    return latest


def completion(card: CardGrid, ordinals: Mapping[int, int]) -> Completion:
    """When `card` got its first full row and all 15 numbers, given number -> ordinal."""
    rows = [at for at in (_completed_at(row, ordinals) for row in card.row_numbers) if at is not None]
    return Completion(line_at=min(rows, default=None), bingo_at=_completed_at(card.numbers, ordinals))


@dataclass(frozen=True)
class WinnersTimeline:
    """Which cards completed a line / a bingo at exactly each ordinal.

    `lines` and `bingos` only hold ordinals where something happened; id tuples are sorted.
    A card appears in `lines` once, at its first complete row, whatever happened before.
    """

    lines: Mapping[int, tuple[int, ...]]
    bingos: Mapping[int, tuple[int, ...]]
    completions: Mapping[int, Completion] = field(repr=False)

    @property
    def first_line_ordinal(self) -> int | None:
        return min(self.lines, default=None)

    @property
    def first_bingo_ordinal(self) -> int | None:
        return min(self.bingos, default=None)

    @property
    def line_winners(self) -> tuple[int, ...]:
        """Cards entitled to the line prize: those complete at the first line ordinal."""
        first = self.first_line_ordinal
        return () if first is None else self.lines[first]

    @property
    def bingo_winners(self) -> tuple[int, ...]:
        first = self.first_bingo_ordinal
        return () if first is None else self.bingos[first]

    def lines_at(self, ordinal: int) -> tuple[int, ...]:
        return self.lines.get(ordinal, ())

    def bingos_at(self, ordinal: int) -> tuple[int, ...]:
        return self.bingos.get(ordinal, ())


def winners_at(cards: Mapping[int, CardGrid], balls: Sequence[int]) -> WinnersTimeline:
    """Timeline of completions for `cards` (keyed by opaque card id); O(cards x 15)."""
    ordinals = ordinal_map(balls)
    lines: dict[int, list[int]] = {}
    bingos: dict[int, list[int]] = {}
    completions: dict[int, Completion] = {}
    for card_id, card in cards.items():
        done = completion(card, ordinals)
        completions[card_id] = done
        if done.line_at is not None:
            lines.setdefault(done.line_at, []).append(card_id)
        if done.bingo_at is not None:
            bingos.setdefault(done.bingo_at, []).append(card_id)
    return WinnersTimeline(
        lines={at: tuple(sorted(ids)) for at, ids in sorted(lines.items())},
        bingos={at: tuple(sorted(ids)) for at, ids in sorted(bingos.items())},
        completions=completions,
    )
