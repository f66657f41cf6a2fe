"""The cage's pure core (no Django): one person's payouts added up over a window, and play between a
cash-in and a cash-out.

- `structuring(earlier, new, threshold=, window=)`: the payouts a new one completes a split of, or ().
  Only payouts each under the threshold count (one at or above it was identified on its own); the new
  payout is flagged when the sum of those within the window ending at it reaches the threshold while the
  sum without it did not. Processed in the order they are paid, this flags at least once whenever any
  window's sum of small payouts reaches the threshold, and never when none does (tests: hypothesis).
- `cycle(moves)` and `little_play(...)`: what was cashed in and played on a card since its last cash-out,
  and whether that play is under the jurisdiction's percent of the cash-in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum

ZERO = Decimal(0)
HUNDRED = Decimal(100)


@dataclass(frozen=True, slots=True)
class Paid:
    """One payout of a person: its record's id, when, how much."""

    ref: int
    at: datetime
    amount: Decimal


def within(earlier: Iterable[Paid], at: datetime, window: timedelta) -> list[Paid]:
    """The payouts in the window ending at ``at``: after ``at - window``, not after ``at``; oldest first."""
    return sorted((p for p in earlier if at - window < p.at <= at), key=lambda p: (p.at, p.ref))


def structuring(
    earlier: Iterable[Paid], new: Paid, *, threshold: Decimal, window: timedelta
) -> tuple[Paid, ...]:
    """The small payouts (each under ``threshold``) of the window ending at ``new`` with ``new`` last,
    when ``new`` makes their sum reach the threshold; () otherwise (``new`` at or above the threshold, the
    sum still under it, or reached before ``new`` and flagged then)."""
    if new.amount >= threshold:
        return ()
    small = [p for p in within(earlier, new.at, window) if p.amount < threshold and p.ref != new.ref]
    before = sum((p.amount for p in small), ZERO)
    if before >= threshold or before + new.amount < threshold:
        return ()
    return (*small, new)


class Move(StrEnum):
    """What a ledger move does to a card, for the little-play check."""

    IN = "in"  # money brought in: cash or a bank card at the till, notes at a bill reader, a ticket loaded
    PLAY = "play"  # money played: a purchase at a terminal
    WIN = "win"  # a prize credited
    OUT = "out"  # money taken out: cashed out, printed onto a ticket, moved to a replacement card


@dataclass(frozen=True, slots=True)
class Cycle:
    """Since the card's last move out: what was brought in and what was played."""

    cashed_in: Decimal
    played: Decimal


def cycle(moves: Sequence[tuple[Move, Decimal]]) -> Cycle:
    """The moves (oldest first, amounts positive) after the last OUT among them."""
    cashed_in = played = ZERO
    for move, amount in moves:
        if move is Move.OUT:
            cashed_in = played = ZERO
        elif move is Move.IN:
            cashed_in += amount
        elif move is Move.PLAY:
            played += amount
    return Cycle(cashed_in, played)


def little_play(found: Cycle, *, percent: Decimal, minimum: Decimal) -> bool:
    """A cash-in of at least ``minimum`` of which under ``percent`` % was played."""
    if found.cashed_in <= ZERO or found.cashed_in < minimum:
        return False
    return found.played * HUNDRED < found.cashed_in * percent
