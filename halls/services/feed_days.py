"""The daily reports of the feed (machine meters, cashier totals, admission counts): each once per venue and
ended day, from a periodic task of the app that keeps the figures (machines, the cashier, the door).

Once only: each report writes its venue's audit entry "feed.day_reported" ({"kind", "day"}) in its own
transaction, under the venue's lock, and a day with that entry is never reported again (a second beat, a
retried task, a task that runs twice in a day: nothing more is written).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from halls.feed import days
from halls.feed.kinds import FeedKind
from halls.feed.services import facts
from halls.feed.services.emit import emit
from halls.models import AuditEntry, Venue
from halls.services import audit, locks

ACTION = "feed.day_reported"
ACTOR = "feed"

# payload_of(venue, day): the report's payload (its "venue" and "day" included)
PayloadOf = Callable[[Venue, date], dict[str, Any]]


def local_today(venue: Venue, now: datetime | None = None) -> date:
    return (now or timezone.now()).astimezone(ZoneInfo(venue.time_zone)).date()


def _reported(venue_id: int, kind: FeedKind, since: date) -> set[date]:
    found = AuditEntry.objects.filter(
        venue_id=venue_id, action=ACTION, data__kind=str(kind), data__day__gte=since.isoformat()
    ).values_list("data", flat=True)
    return {date.fromisoformat(d["day"]) for d in found if isinstance(d, dict) and "day" in d}


def report_day(*, venue: Venue, kind: FeedKind, day: date, payload_of: PayloadOf) -> bool:
    """Report one venue's day (its message and its audit entry, one transaction); False if done before."""
    with transaction.atomic():
        locks.lock_venue(venue.pk)
        if day in _reported(venue.pk, kind, day):
            return False
        payload = payload_of(venue, day)
        data = {"kind": str(kind), "day": day.isoformat()}
        audit.record(venue_id=venue.pk, actor=ACTOR, action=ACTION, obj=venue, data=data)
        emit(kind, payload, venue_id=venue.pk)  # last: its number is the last lock (halls.locks)
    return True


def report_ended_days(*, kind: FeedKind, payload_of: PayloadOf, now: datetime | None = None) -> int:
    """Every fed venue's ended days not reported yet (HALL_FEED_DAYS_BACK at most); how many were."""
    back = int(settings.HALL_FEED_DAYS_BACK)
    done = 0
    for venue in facts.fed_venues():
        today = local_today(venue, now)
        reported = _reported(venue.pk, kind, today - timedelta(days=back))
        for day in days.days_due(today, reported, back):
            done += report_day(venue=venue, kind=kind, day=day, payload_of=payload_of)
    return done
