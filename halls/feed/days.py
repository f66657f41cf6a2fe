"""When the feed's periodic reports are due (pure: no Django).

- The pools' amounts, every `interval` seconds: a tick of the beat every `tick` seconds reports a venue when a
  multiple of its interval (since the epoch) fell in the tick's span (now - tick, now]. One beat, one tick a
  span: each interval's end is reported once (a tick lost loses that report, the next interval's comes).
- The daily reports, once a venue's day has ended: each day from `back` days ago to yesterday (the venue's
  local calendar) that was not reported yet, oldest first.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from datetime import date, timedelta


def interval_ended(now: float, interval: float, tick: float) -> bool:
    """Whether an interval's end (a multiple of `interval` seconds) lies in (now - tick, now]."""
    if interval <= 0 or tick <= 0:
        raise ValueError("the interval and the tick are positive")
    if tick >= interval:
        return True  # the beat is slower than the interval: every tick reports
    return math.floor(now / interval) != math.floor((now - tick) / interval)


def days_due(today: date, reported: Collection[date], back: int) -> list[date]:
    """The ended days (before `today`, at most `back` days ago) not reported yet, oldest first."""
    if back < 1:
        return []
    first = today - timedelta(days=back)
    return [first + timedelta(days=n) for n in range(back) if first + timedelta(days=n) not in reported]
