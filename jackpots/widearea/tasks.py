"""Celery doors of wide-area pools: thin periodic tasks (beat), each calling one service.

- forward_wide_area (a venue, every HALL_WIDE_AREA_FORWARD_SECONDS): each mirror's new contributions as
  one outbox message (the link process sends it, or keeps it while the line is down).
- publish_wide_area_levels (the central, every HALL_WIDE_AREA_LEVELS_SECONDS): each pool's levels on the
  network's stream when changed, and at least every HALL_WIDE_AREA_HEARTBEAT_SECONDS.
- watch_wide_area (a venue, every second): a mirror silent past its window recorded as withdrawn.
"""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from jackpots.widearea.services import central, venue


@shared_task(ignore_result=True)
def forward_wide_area() -> int:
    return venue.forward_all() if settings.HALL_ROLE != "central" else 0


@shared_task(ignore_result=True)
def publish_wide_area_levels() -> int:
    return central.publish_all() if settings.HALL_ROLE == "central" else 0


@shared_task(ignore_result=True)
def watch_wide_area() -> int:
    return venue.watch() if settings.HALL_ROLE != "central" else 0
