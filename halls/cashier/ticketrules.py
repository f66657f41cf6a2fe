"""A venue's ticket limits (TITO), decided. Pure: no Django.

Two figures, per venue (halls.cashier.models.CashierSettings, or its jurisdiction's default setting):
- `maximum`: the most one ticket may hold. A ticket above it is never issued (a till's sale, a card's
  cash-out at a terminal, a prize paid as a ticket): the money stays where it was.
- `cage_above`: a ticket above it is redeemed only at the cage (a cashier's till), never at a terminal or a
  kiosk: the ticket is refused there and the player is sent to the cage.

Both compare the ticket's whole-cent amount: a ticket *of* the figure is allowed (at most, not under).
Melilla's regulation of electronic bingo (seeds 000, art. 151.2.f and 154.2.e) speaks of "tickets
canjeables en caja" and names no figure; the defaults (config.settings.HALL_TICKET_*) are the house's
interpretation, to be checked by the operator against each region's law in force.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import Enum


class Problem(Enum):
    """Why a pair of figures cannot be a venue's ticket limits."""

    NOT_POSITIVE = "not_positive"  # a figure at or below zero: no ticket at all could be issued or redeemed
    CAGE_ABOVE_MAXIMUM = "cage_above_maximum"  # the cage's figure above the maximum: it would decide nothing


@dataclass(frozen=True)
class TicketLimits:
    maximum: Decimal
    cage_above: Decimal

    def may_issue(self, amount: Decimal) -> bool:
        """Whether a ticket of `amount` may be issued."""
        return amount <= self.maximum

    def cage_only(self, amount: Decimal) -> bool:
        """Whether a ticket of `amount` is redeemed only at the cage."""
        return amount > self.cage_above

    def may_redeem_at_device(self, amount: Decimal) -> bool:
        return not self.cage_only(amount)


def problem(maximum: Decimal, cage_above: Decimal) -> Problem | None:
    """What is wrong with these figures as a venue's limits, or None."""
    if maximum <= 0 or cage_above <= 0:
        return Problem.NOT_POSITIVE
    if cage_above > maximum:
        return Problem.CAGE_ABOVE_MAXIMUM
    return None


def resolve(
    venue_maximum: Decimal | None,
    venue_cage_above: Decimal | None,
    default_maximum: Decimal,
    default_cage_above: Decimal,
) -> TicketLimits:
    """The limits in force: the venue's own figure where it set one, else its jurisdiction's default."""
    return TicketLimits(
        maximum=default_maximum if venue_maximum is None else venue_maximum,
        cage_above=default_cage_above if venue_cage_above is None else venue_cage_above,
    )
