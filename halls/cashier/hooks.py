"""Payout guards: what the cashier asks before money goes to a person, and tells after (DESIGN §2: the cage
plugs in here, the cashier never imports it).

Every payout to a person (a prize payable, whatever its kind and method; a ticket redeemed in cash; a
player card cashed out) builds a `PayoutClaim`. `check_payout(claim)` runs before anything is written (or
inside the paying transaction before its first write): a guard refuses by raising a DomainError (the cage's
`identification_required`, 409). `payout_made(claim, transaction_id, actor)` runs inside the paying
transaction after the payout's own audit entry (so it holds the venue's audit chain: payouts of a venue are
told one after the other), and writes what the guard keeps (the cage's payout record, its flags).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from halls.actors import Actor


@dataclass(frozen=True, slots=True)
class PayoutClaim:
    venue_id: int
    amount: Decimal
    # A PayableKind value for a prize ("line", "bingo", "accumulated", "table", "machine"), "ticket" for a
    # ticket redeemed in cash, "card_cash_out" for a player card cashed out.
    kind: str
    # The identification the cashier names for the winner (the cage's), or None.
    identification: int | None = None
    payable_id: int | None = None
    ticket_id: int | None = None
    card_id: int | None = None  # the card paid to, or cashed out


class PayoutGuard(Protocol):
    def required(self, venue_id: int, amount: Decimal) -> bool: ...

    def check(self, claim: PayoutClaim) -> None: ...

    def paid(self, claim: PayoutClaim, transaction_id: int, actor: Actor) -> None: ...


_guards: list[PayoutGuard] = []


def register_payout_guard(guard: PayoutGuard) -> None:
    if guard not in _guards:
        _guards.append(guard)


def identification_required(venue_id: int, amount: Decimal) -> bool:
    """Whether a payout of ``amount`` in the venue waits for the winner's identification (the till shows
    it before the cashier tries)."""
    return any(guard.required(venue_id, amount) for guard in _guards)


def check_payout(claim: PayoutClaim) -> None:
    """Raise the first guard's refusal of the claim, if any."""
    for guard in _guards:
        guard.check(claim)


def payout_made(claim: PayoutClaim, transaction_id: int, actor: Actor) -> None:
    for guard in _guards:
        guard.paid(claim, transaction_id, actor)
