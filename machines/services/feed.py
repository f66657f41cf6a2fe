"""The machines' facts on the authority's feed: each machine's meters over each of the venue's ended days
(machine.meters), once per day (halls.feed.services.daily), from the beat (machines.tasks)."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from halls.feed.kinds import FeedKind
from halls.feed.services import facts
from halls.models import Venue
from halls.services import feed_days as daily
from machines.meterdays import Meters, day_figures
from machines.models import Machine, MeterSnapshot


def _last_before(machine_id: int, instant: datetime) -> Meters | None:
    row = (
        MeterSnapshot.objects.filter(machine_id=machine_id, taken_at__lt=instant)
        .order_by("-taken_at", "-seq")
        .values_list("coin_in", "coin_out", "jackpots_paid", "games_played")
        .first()
    )
    return None if row is None else Meters(row[0], row[1], row[2], int(row[3]))


def meters_payload(venue: Venue, day: date) -> dict[str, Any]:
    """Every machine of the venue with meters by the day's end: its growth over the day."""
    zone = ZoneInfo(venue.time_zone)
    start = datetime.combine(day, time.min, tzinfo=zone)
    end = datetime.combine(day + timedelta(days=1), time.min, tzinfo=zone)
    machines = []
    for machine_id, asset, kind in (
        Machine.objects.filter(venue=venue)
        .order_by("asset_number", "pk")
        .values_list("pk", "asset_number", "machine_type")
    ):
        at_end = _last_before(machine_id, end)
        if at_end is None:
            continue  # no meters yet: nothing to say of it
        figures = day_figures(_last_before(machine_id, start), at_end)
        machines.append(
            {
                "machine": asset,
                "type": kind,
                "coin_in": facts.amount(figures.coin_in),
                "coin_out": facts.amount(figures.coin_out),
                "jackpots": facts.amount(figures.jackpots),
                "games": figures.games,
            }
        )
    return {"venue": venue.licence_number, "day": facts.day(day), "machines": machines}


def report_machine_meters(now: datetime | None = None) -> int:
    """The beat's: every fed venue's ended days not reported yet; how many were."""
    return daily.report_ended_days(kind=FeedKind.MACHINE_METERS, payload_of=meters_payload, now=now)
