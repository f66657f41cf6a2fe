"""The door's facts on the authority's feed: the admission counts of each of the venue's ended days
(admissions), once per day (halls.feed.services.daily). Counts only: who came, and why a person was
refused, stay at the door (the refusals are counted by reason)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from halls.door.services.admission import visits_per_day
from halls.feed.kinds import FeedKind
from halls.feed.services import facts
from halls.models import Venue
from halls.services import feed_days as daily


def admissions_payload(venue: Venue, day: date) -> dict[str, Any]:
    (counts,) = visits_per_day(venue, day, day)
    return {
        "venue": venue.licence_number,
        "day": facts.day(day),
        "admitted": counts.admitted,
        "refused": counts.refused,
        "refused_by_reason": {
            "minor": counts.minor,
            "prohibited": counts.prohibited,
            "self_excluded": counts.self_excluded,
        },
    }


def report_admissions(now: datetime | None = None) -> int:
    """The beat's: every fed venue's ended days not reported yet; how many were."""
    return daily.report_ended_days(kind=FeedKind.ADMISSIONS, payload_of=admissions_payload, now=now)
