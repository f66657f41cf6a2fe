"""The venue's clock: the one place that says what time it is at a venue, for everything that decides by
the venue's time (the scheduled prizes' hours and operating days, the close of sales that fixes a game's
start for them: bingo.traditional.services.programs.clock reads it; electronic bingo's close of sales,
bingo.electronic.services.games and sales; the day the regions' agreements are judged on for a network's
venues, halls.services.regions).

In production it is the real time, always. Elsewhere (a certification lab, the tests, the demo) a venue's
clock can be moved forward (``move``: the API door ``POST /api/venues/{id}/lab-clock/`` and ``manage.py
lab_clock``), so a lab can play the 20:00 game or the next operating day black-box without waiting for
them: the venue's time is then the real time plus the venue's offset. It never goes back: what was already
stamped with it (a game's close of sales) stays in the past. Each move is recorded (``VenueClock``) and
audited on the venue's chain.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from halls.actors import Actor
from halls.errors import Conflict, InvalidInput, NotFound
from halls.models import Venue, VenueClock
from halls.services import audit, locks

ZERO = timedelta(0)
# A lab moves days or weeks ahead, not centuries: far enough for any schedule, short of overflowing a date.
MAX_OFFSET = timedelta(days=3660)


def enabled() -> bool:
    """Whether venues' clocks can be moved here: never in production (HALL_ENV=production)."""
    return not settings.HALL_PRODUCTION


def offset(venue_id: int) -> timedelta:
    """How far ahead of the real time the venue's clock runs: zero in production, without a query."""
    if not enabled():
        return ZERO
    found = VenueClock.objects.filter(venue_id=venue_id).values_list("offset", flat=True).first()
    return found or ZERO


def at(venue_id: int, instant: datetime) -> datetime:
    """The venue's time at the real instant `instant` (the one function that applies the offset)."""
    return instant + offset(venue_id)


def now(venue_id: int) -> datetime:
    """The venue's time now."""
    return at(venue_id, timezone.now())


def today(venue: Venue) -> date:
    """The venue's date now, in its time zone: what a rule dated by the day is judged by at the venue (the
    regions' agreements, halls.services.regions)."""
    return timezone.localtime(now(venue.pk), ZoneInfo(venue.time_zone)).date()


def _refuse_in_production() -> None:
    if not enabled():
        # As if it were not there: production has no lab clock.
        raise NotFound(_("There is no lab clock in production."), code="not_found")


def move(
    *, venue: Venue, actor: Actor, to: datetime | None = None, forward: timedelta | None = None
) -> VenueClock:
    """Set the venue's clock forward: to the instant `to`, or `forward` ahead of where it is now. Refused in
    production, backwards (409 clock_backward: the venue's time never goes back past what it stamped),
    further than MAX_OFFSET ahead of the real time, or with neither or both given."""
    _refuse_in_production()
    if (to is None) == (forward is None):
        raise InvalidInput(_("Give either the time to set the clock to or how far forward."), code="invalid")
    if to is not None and (to.tzinfo is None or to.utcoffset() is None):
        raise InvalidInput(_("The time to set the clock to needs its time zone."), code="invalid", field="to")
    if forward is not None and forward <= ZERO:
        raise InvalidInput(_("A venue's clock moves forward only."), code="clock_backward", field="forward")
    with transaction.atomic():
        locks.lock_venue(venue.pk)
        real = timezone.now()
        clock = VenueClock.objects.filter(venue_id=venue.pk).first()
        before = clock.offset if clock is not None else ZERO
        shown = real + before
        target = to if to is not None else shown + (forward or ZERO)
        if target < shown:
            raise Conflict(
                _("The clock of %(venue)s is at %(now)s already: it moves forward only.")
                % {
                    "venue": venue.name,
                    "now": timezone.localtime(shown, ZoneInfo(venue.time_zone)).isoformat(),
                },
                code="clock_backward",
            )
        after = target - real
        if after > MAX_OFFSET:
            raise InvalidInput(
                _("A lab clock runs at most %(days)d days ahead of the real time.")
                % {"days": MAX_OFFSET.days},
                code="clock_too_far",
            )
        if clock is None:
            clock = VenueClock(venue=venue)
        clock.offset, clock.moved_at = after, real
        clock.moved_by = actor if isinstance(actor, User) else None
        clock.save()
        audit.record(
            venue_id=venue.pk,
            actor=actor,
            action="venue.lab_clock_moved",
            obj=venue,
            data={
                "from": shown.isoformat(),
                "to": target.isoformat(),
                "offset_seconds": after.total_seconds(),
                "real": real.isoformat(),
            },
        )
    return clock


def reading(venue: Venue) -> dict[str, object]:
    """What the door and the command show: the venue's time (in its zone), the real time and the offset."""
    _refuse_in_production()
    real = timezone.now()
    ahead = offset(venue.pk)
    return {
        "venue": venue.pk,
        "now": timezone.localtime(real + ahead, ZoneInfo(venue.time_zone)).isoformat(),
        "real": real.isoformat(),
        "offset_seconds": ahead.total_seconds(),
    }
