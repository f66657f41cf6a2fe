"""The interconnected prize's decision for one round, pure (IB-01): no Django, no database.

Each member hall reports its round game's result: the extraction ordinal of its Bingo and the winning
cards, or no Bingo (a void game, or none reported in time: not passed here). The prize goes to the Bingo(s)
at the LOWEST ordinal at or below the max ball, across the halls; every card at that ordinal shares the
pool equally, each share rounded down to the cent (halls.money.share_cents); what cannot be shared (the
cents left over and the meter's sub-cent fraction) is the remainder, which stays in the pool. No Bingo at
or below the max ball: no winner, the whole pool carries over to the next round.

Always: ``sum(shares) + remainder == pool`` exactly, and the winners are exactly the cards of the results
at the minimum ordinal ``<= max_ball``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from halls.money import ZERO, share_cents

MAX_BALL = 90


@dataclass(frozen=True)
class HallResult:
    """One hall's result of its round game. `ordinal` None: no Bingo (void, or the game had none)."""

    hall: str  # the hall's licence number
    ordinal: int | None
    cards: tuple[str, ...] = ()  # the winning cards' labels ("A-0007"), co-winners at that ball


@dataclass(frozen=True)
class Share:
    hall: str
    card: str
    amount: Decimal


@dataclass(frozen=True)
class Decision:
    pool: Decimal  # the pool's meter the decision shared
    ordinal: int | None  # the winning ordinal; None: no winner, the pool carries over
    shares: tuple[Share, ...]
    share: Decimal  # each winner's share (whole cents)
    remainder: Decimal  # what stays in the pool (the whole pool when nobody won)

    @property
    def won(self) -> bool:
        return bool(self.shares)

    @property
    def paid(self) -> Decimal:
        return sum((s.amount for s in self.shares), ZERO)


def winning_ordinal(results: Iterable[HallResult], max_ball: int) -> int | None:
    """The lowest ordinal of a Bingo (with at least one card) at or below the max ball, or None."""
    ordinals = [
        r.ordinal for r in results if r.ordinal is not None and r.cards and 1 <= r.ordinal <= max_ball
    ]
    return min(ordinals) if ordinals else None


def decide(results: Iterable[HallResult], *, max_ball: int, pool: Decimal) -> Decision:
    """The round's decision on `pool` (the meter at the decision, >= 0)."""
    if not 1 <= max_ball <= MAX_BALL:
        raise ValueError(f"the max ball is 1-{MAX_BALL}, not {max_ball}")
    if pool < 0:
        raise ValueError(f"a pool is never negative ({pool})")
    found = list(results)
    halls = [r.hall for r in found]
    if len(set(halls)) != len(halls):
        raise ValueError("one result per hall")
    ordinal = winning_ordinal(found, max_ball)
    if ordinal is None:
        return Decision(pool=pool, ordinal=None, shares=(), share=ZERO, remainder=pool)
    cards = sorted({(r.hall, card) for r in found if r.ordinal == ordinal for card in r.cards})
    share, remainder = share_cents(pool, len(cards))
    return Decision(
        pool=pool,
        ordinal=ordinal,
        shares=tuple(Share(hall, card, share) for hall, card in cards),
        share=share,
        remainder=remainder,
    )
