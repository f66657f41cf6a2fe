"""The one clock of the prize programs: tests monkeypatch ``clock.now`` to play 19:59, 20:01 or a DST day.

Everything that decides by a venue's time reads ``venue_now`` (or ``venue_at``): the real time as ``now``
gives it, through the venue's clock (``halls.services.venueclock``: the real time in production, moved
forward by a certification lab elsewhere). Close of sales stamps ``game.sales_closed_at`` with it: that
instant is the game's start for scheduling (the in-play decision is announced before the first ball, TB-41,
so it is fixed when the sales close).
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from halls.services import venueclock


def now() -> datetime:
    return timezone.now()


def venue_at(venue_id: int, instant: datetime) -> datetime:
    """The venue's time at the real instant `instant`."""
    return venueclock.at(venue_id, instant)


def venue_now(venue_id: int) -> datetime:
    """The venue's time now: what the programs decide by."""
    return venue_at(venue_id, now())
