"""A machine's meters over one day, from its cumulative meter snapshots (pure: no Django).

A machine's meters only grow (coin in, coin out, jackpots paid, games played since it was set up); a day's
figures are the growth from the last snapshot before the day to the last one before its end. A machine with
no snapshot before the day started counting that day (its growth is from zero); one whose meter went down
(its memory cleared) counts that meter from zero again (the day's figure is the end value).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TypeVar

ZERO = Decimal(0)
T = TypeVar("T", Decimal, int)


@dataclass(frozen=True)
class Meters:
    coin_in: Decimal = ZERO
    coin_out: Decimal = ZERO
    jackpots: Decimal = ZERO
    games: int = 0

    def __add__(self, other: Meters) -> Meters:
        return Meters(
            self.coin_in + other.coin_in,
            self.coin_out + other.coin_out,
            self.jackpots + other.jackpots,
            self.games + other.games,
        )


def _growth(before: T, after: T) -> T:
    return after - before if after >= before else after


def day_figures(before: Meters | None, at_end: Meters | None) -> Meters:
    """The day's growth of each meter: `before` the last snapshot before the day (None: none), `at_end` the
    last before its end (None: none at all, nothing counted)."""
    if at_end is None:
        return Meters()
    if before is None:
        return at_end
    return Meters(
        _growth(before.coin_in, at_end.coin_in),
        _growth(before.coin_out, at_end.coin_out),
        _growth(before.jackpots, at_end.jackpots),
        _growth(before.games, at_end.games),
    )
