"""The cage's rules per jurisdiction: settings with defaults (HALL_AML_*), overridden per jurisdiction code
by HALL_AML_BY_JURISDICTION, like the door's (halls.door.services.admission._setting)."""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings

from halls import money
from halls.models import Venue


@dataclass(frozen=True, slots=True)
class Rules:
    threshold: Decimal  # a payout at or above it waits for the winner's identification
    window: timedelta  # one person's payouts within it are added up
    little_play_percent: Decimal  # played under this percent of the cash-in: little play
    little_play_minimum: Decimal  # a cash-in under it is never flagged
    retention_years: int  # how long identifications are kept


def _value(jurisdiction: str, name: str, default: object) -> object:
    overrides = settings.HALL_AML_BY_JURISDICTION.get(jurisdiction, {})
    return overrides.get(name, default)


def rules_for(jurisdiction: str) -> Rules:
    def amount(name: str, default: object) -> Decimal:
        return money.cents(Decimal(str(_value(jurisdiction, name, default))))

    return Rules(
        threshold=amount("threshold", settings.HALL_AML_THRESHOLD),
        window=timedelta(
            hours=int(str(_value(jurisdiction, "window_hours", settings.HALL_AML_WINDOW_HOURS)))
        ),
        little_play_percent=Decimal(
            str(_value(jurisdiction, "little_play_percent", settings.HALL_AML_LITTLE_PLAY_PERCENT))
        ),
        little_play_minimum=amount("little_play_minimum", settings.HALL_AML_LITTLE_PLAY_MINIMUM),
        retention_years=int(str(_value(jurisdiction, "retention_years", settings.HALL_AML_RETENTION_YEARS))),
    )


def rules_of(venue_id: int) -> Rules:
    """The rules of the venue's jurisdiction."""
    jurisdiction = Venue.objects.values_list("jurisdiction", flat=True).get(pk=venue_id)
    return rules_for(jurisdiction)


def years_after(at: datetime, years: int) -> datetime:
    """The same moment ``years`` later (29 February: the 28th of a common year)."""
    year = at.year + years
    day = min(at.day, calendar.monthrange(year, at.month)[1])
    return at.replace(year=year, day=day)
