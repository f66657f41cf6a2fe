"""A return's period: a calendar month or quarter of the venue's days, by jurisdiction (HALL_TAX_PERIOD,
overridden per jurisdiction code by HALL_TAX_BY_JURISDICTION, e.g. {"CT": {"period": "quarter"}})."""

from __future__ import annotations

from datetime import date, datetime, time
from zoneinfo import ZoneInfo

from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from halls.errors import Conflict, InvalidInput
from halls.models import Venue
from halls.services import venueclock
from halls.tax.compute import PERIODS, Period, PeriodError, parse_period, period_of

KINDS = {"month": gettext_lazy("month"), "quarter": gettext_lazy("quarter")}


def period_kind(jurisdiction: str) -> str:
    """How the jurisdiction's venues file: by "month" or by "quarter"."""
    overrides = settings.HALL_TAX_BY_JURISDICTION.get(jurisdiction, {})
    kind = str(overrides.get("period", settings.HALL_TAX_PERIOD))
    if kind not in PERIODS:
        raise ValueError(f"HALL_TAX period for {jurisdiction} must be 'month' or 'quarter', not {kind!r}")
    return kind


def period_for(venue: Venue, label: str) -> Period:
    """The period ``label`` names for the venue's jurisdiction (400 bad_period otherwise)."""
    kind = period_kind(venue.jurisdiction)
    try:
        return parse_period(label, kind)
    except PeriodError as exc:
        shape = "2026-11" if kind == "month" else "2026-Q4"
        raise InvalidInput(
            _("%(venue)s files its returns by %(kind)s: write the period as %(shape)s, not %(label)r.")
            % {"venue": venue.name, "kind": KINDS[kind], "shape": shape, "label": label},
            code="bad_period",
            field="period",
        ) from exc


def bounds(venue: Venue, period: Period) -> tuple[datetime, datetime]:
    """[the first day's local midnight, the next period's first local midnight) in the venue's zone."""
    zone = ZoneInfo(venue.time_zone)
    return (
        datetime.combine(period.first, time.min, tzinfo=zone),
        datetime.combine(period.after, time.min, tzinfo=zone),
    )


def is_closed(venue: Venue, period: Period) -> bool:
    """Whether the period is over at the venue (its clock)."""
    return venueclock.now(venue.pk) >= bounds(venue, period)[1]


def require_closed(venue: Venue, period: Period) -> None:
    if not is_closed(venue, period):
        raise Conflict(
            _(
                "The period %(period)s is not closed yet at %(venue)s: its return is computed from "
                "%(after)s on."
            )
            % {"period": period.label, "venue": venue.name, "after": period.after.isoformat()},
            code="period_not_closed",
            period=period.label,
        )


def current(venue: Venue) -> Period:
    """The period the venue is in now."""
    return period_of(period_kind(venue.jurisdiction), venueclock.today(venue))


def last_closed(venue: Venue) -> Period:
    """The period before the current one (the latest a return can be filed for)."""
    now = current(venue)
    return period_of(now.kind, date.fromordinal(now.first.toordinal() - 1))
