"""Celery door of interconnected bingo: the central's bounded wait. Thin: it calls the services."""

from __future__ import annotations

from celery import shared_task

from bingo.network.interconnected.services import prizes, rounds


@shared_task(ignore_result=True)
def decide_overdue_rounds() -> int:
    """Beat (every HALL_NETWORK_TICK_SECONDS): rounds past their wait decided among the results received,
    then a fresh round opened for each prize whose rounds open by themselves, then the meters the throttle
    held back sent. A venue installation has no prizes: nothing to do."""
    decided = rounds.decide_overdue()
    prizes.ensure_rounds()
    prizes.send_stale_meters()
    return len(decided)
