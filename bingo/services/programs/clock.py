"""The one clock of the prize programs: tests monkeypatch ``clock.now`` to play 19:59, 20:01 or a DST day.

Close of sales stamps ``game.sales_closed_at`` with it: that instant is the game's start for scheduling
(the in-play decision is announced before the first ball, TB-41, so it is fixed when the sales close).
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone


def now() -> datetime:
    return timezone.now()
