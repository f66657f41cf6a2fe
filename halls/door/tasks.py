"""Celery doors of the door: thin periodic tasks (beat).

- purge_visits (every HALL_DOOR_PURGE_SECONDS, default an hour): the visits past their retention keep
  their counts, not the person's document digest (halls.door.services.admission.purge_visits); then the
  players not admitted within their retention lose their document digest (players.purge_players).
"""

from __future__ import annotations

from celery import shared_task

from halls.door.services import admission, feed, players


@shared_task(ignore_result=True)
def purge_visits() -> int:
    """Clear the document digests of the visits, then of the players, past their retention; returns how many
    visits."""
    visits = admission.purge_visits()
    players.purge_players()
    return visits


@shared_task(ignore_result=True)
def feed_admissions() -> int:
    """The authority's feed: the door's admission counts of each ended day (halls.door.services.feed)."""
    return feed.report_admissions()
