"""Celery doors of the cage: thin periodic tasks (beat).

- purge_identifications (every HALL_AML_PURGE_SECONDS, default a day): identifications past their
  retention deleted, the payouts' and flags' digests cleared (halls.cage.services.identification).
"""

from __future__ import annotations

from celery import shared_task

from halls.cage.services import identification


@shared_task(ignore_result=True)
def purge_identifications() -> int:
    """Delete the identifications past their retention; returns how many."""
    return identification.purge_identifications()
