"""The demo's one acting user: every self-played sale, draw, claim and hand is recorded as "autoplay".

Its card sales are cash like any cashier's: it sells on a shift of its own at the demo's robot till."""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction

from halls.cashier.models import Shift, ShiftState, Till
from halls.cashier.services import shifts
from halls.models import Role, StaffRole, Venue
from halls.services import audit

AUTOPLAY_USER = "autoplay"
# The till the self-playing rooms sell from (a robot's drawer: its shift stays open across restarts).
ROBOT_TILL = "Caja automática"


def autoplay_actor() -> User:
    user, _ = get_user_model().objects.get_or_create(username=AUTOPLAY_USER, defaults={"is_active": False})
    return user


def robot_shift(venue: Venue) -> Shift:
    """The autoplay user's open shift in the venue: the one open, or one opened now (float 0) at the robot
    till, made with the cashier role it needs on first use. Idempotent: a restart keeps the shift open."""
    actor = autoplay_actor()
    shift = Shift.objects.filter(venue=venue, cashier=actor, state=ShiftState.OPEN).first()
    if shift is not None:
        return shift
    with transaction.atomic():  # the shift's lock before the audit chain's (halls.locks.Rank)
        _, granted = StaffRole.objects.get_or_create(user=actor, venue=venue, role=Role.CASHIER)
        till, _ = Till.objects.get_or_create(venue=venue, name=ROBOT_TILL)
        shift = shifts.open_shift(till=till, cashier=actor, float_amount=Decimal("0"), actor=actor)
        if granted:
            audit.record(
                venue_id=venue.pk,
                actor="demo",
                action="staff_role.granted",
                obj=actor,
                data={"user": AUTOPLAY_USER, "role": Role.CASHIER},
            )
    return shift
