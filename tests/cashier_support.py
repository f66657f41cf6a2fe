"""Sellers on shift: traditional bingo's card sales are cash into the drawer of the seller's open shift, so
every test that sells from a user of its own first puts that user on shift at a till."""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth.models import User

from halls.cashier.models import Shift, ShiftState, Till
from halls.cashier.services import shifts
from halls.models import Venue


def till_of(venue: Venue | int, name: str = "Caja 1") -> Till:
    """The venue's till of that name, made on first use."""
    venue_id = venue if isinstance(venue, int) else venue.pk
    till, _created = Till.objects.get_or_create(venue_id=venue_id, name=name)
    return till


def on_shift(
    user: User, venue: Venue | int, *, float: Decimal = Decimal("0"), till: Till | None = None
) -> Shift:
    """The user's open shift in the venue: the one already open, or a new one (counted float `float`) on
    `till` (by default a till of the user's own, "Caja <username>"). The user must hold the cashier role
    there."""
    venue_id = venue if isinstance(venue, int) else venue.pk
    shift = Shift.objects.filter(venue_id=venue_id, cashier=user, state=ShiftState.OPEN).first()
    if shift is not None:
        return shift
    till = till or till_of(venue_id, f"Caja {user.get_username()}")
    return shifts.open_shift(till=till, cashier=user, float_amount=float, actor=user)
