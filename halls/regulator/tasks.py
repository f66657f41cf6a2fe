"""The node's periodic work (Celery beat): thin, ids and services only."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from halls.regulator.services import silence


@shared_task(ignore_result=True)
def watch_silence() -> int:
    """Installations silent past their window raise an alarm (on the regulator's node only)."""
    if settings.HALL_ROLE != "regulator":
        return 0
    return silence.sweep()
