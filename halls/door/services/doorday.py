"""The door's day and stream: when a venue's door day begins and ends (a hall open past midnight keeps its
evening's people: HALL_DOOR_DAY_START_HOUR), and the stream its pages follow. No service imports: the
door's services (presence, players) and the cards' admission read it."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.utils import timezone

from halls.models import Venue

__all__ = ["day_start_hour", "door_day", "door_stream"]


def day_start_hour(venue: Venue) -> int:
    """The hour of the venue's local time at which the door's day begins (0 to 23; 6 by default)."""
    overrides = settings.HALL_DOOR_BY_JURISDICTION.get(venue.jurisdiction, {})
    hour = int(overrides.get("day_start_hour", settings.HALL_DOOR_DAY_START_HOUR))
    return min(max(hour, 0), 23)


def door_day(venue: Venue, instant: datetime) -> tuple[date, datetime, datetime]:
    """The door day holding ``instant``: its date (the day it starts on), its start and its end."""
    zone = ZoneInfo(venue.time_zone)
    hour = day_start_hour(venue)
    local = timezone.localtime(instant, zone)
    day = local.date() if local.hour >= hour else local.date() - timedelta(days=1)
    start = datetime.combine(day, time(hour), tzinfo=zone)
    end = datetime.combine(day + timedelta(days=1), time(hour), tzinfo=zone)
    return day, start, end


def door_stream(venue_id: int) -> str:
    """The venue's door stream: the live count after each visit and exit, and the alerts
    (halls.door.consumers)."""
    return f"door.{venue_id}"
