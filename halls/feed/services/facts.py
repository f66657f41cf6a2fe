"""What every fact's message shares: whether the feed is on (per jurisdiction), how often the pools are
reported, and how a payload writes money, times and venues.

Settings (legal figures are per jurisdiction, with a default):
- HALL_FEED_ENABLED: the feed of a jurisdiction without its own figure, and a central's own messages;
- HALL_FEED_POOL_INTERVAL_SECONDS: how often each pool's amounts are reported (besides every award);
- HALL_FEED_BY_JURISDICTION: per jurisdiction code, {"enabled": bool, "pool_interval_seconds": int}.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from django.conf import settings

from halls import money
from halls.feed.services import emit
from halls.models import Venue


def enabled_in(jurisdiction: str | None) -> bool:
    """Whether a jurisdiction's venues feed their regulator (None: a central's own messages): emit's rule."""
    if jurisdiction is None:
        return bool(settings.HALL_FEED_ENABLED)
    return emit.enabled_for(jurisdiction)


def feed_on(venue_id: int | None) -> bool:
    """Whether the venue's messages (None: the central's own) go to the regulator: emit's rule (no query
    when the feed is off everywhere)."""
    if venue_id is None:
        return enabled_in(None)
    return emit.venue_on(venue_id)


def pool_interval_seconds(jurisdiction: str | None) -> int:
    """Seconds between two reports of the pools' amounts (None: a central's network pools)."""
    default = int(settings.HALL_FEED_POOL_INTERVAL_SECONDS)
    if jurisdiction is None:
        return default
    return int(emit.jurisdiction_setting(jurisdiction, "pool_interval_seconds", default))


def fed_venues() -> list[Venue]:
    """Every venue of this installation whose jurisdiction has the feed on, by id."""
    return [v for v in Venue.objects.order_by("pk") if enabled_in(v.jurisdiction)]


def amount(value: Decimal | None) -> str:
    """Money as the feed writes it: euros to the cent, rounded down, as a string ("12.50")."""
    return money.text_cents(value if value is not None else Decimal(0))


def instant(value: datetime) -> str:
    return value.isoformat()


def day(value: date) -> str:
    return value.isoformat()


def licence(venue_id: int | None) -> str | None:
    """The venue as the feed names it: its licence number (None: a central's own message)."""
    if venue_id is None:
        return None
    found: str | None = Venue.objects.filter(pk=venue_id).values_list("licence_number", flat=True).first()
    return found
