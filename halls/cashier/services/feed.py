"""The cashier's facts on the authority's feed: the totals of each of the venue's ended days (cashier.day),
once per day (halls.feed.services.daily), from the day report every till's figures add up to
(halls.cashier.services.reports.day_report)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from halls.cashier.services.reports import Line, day_report
from halls.feed.kinds import FeedKind
from halls.feed.services import facts
from halls.models import Venue
from halls.services import feed_days as daily


def _sum(lines: Iterable[Line]) -> Decimal:
    return sum((line.amount for line in lines), Decimal(0))


def cashier_payload(venue: Venue, day: date) -> dict[str, Any]:
    """The day's card sales less returns, prizes paid, money loaded onto cards (tills and devices) and
    cashed out of them."""
    report = day_report(venue=venue, day=day)
    return {
        "venue": venue.licence_number,
        "day": facts.day(day),
        "sales": facts.amount(report.net_sales),
        "payouts": facts.amount(_sum(report.payouts_by_kind.values())),
        "cash_in": facts.amount(_sum(report.cash_in.values()) + report.device_cash_in.amount),
        "cash_out": facts.amount(_sum(report.cash_out.values())),
    }


def report_cashier_days(now: datetime | None = None) -> int:
    """The beat's: every fed venue's ended days not reported yet; how many were."""
    return daily.report_ended_days(kind=FeedKind.CASHIER_DAY, payload_of=cashier_payload, now=now)
