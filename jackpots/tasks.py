"""Celery doors of the pool engine: thin periodic tasks (beat) that call one service per pool.

- fold_pools (every HALL_POOL_FOLD_SECONDS, default 1 s): folds every pool with unfolded contributions,
  which also detects must-hit-by (mystery) hits; one task per tick, never one per contribution.
- seal_pools (every HALL_POOL_SEAL_SECONDS, default 60 s): appends a hash-chained seal per pool.
- publish_pool_meters (every 0.25 s): the meters of the pools that changed, to the hall screens.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.utils import timezone

from halls import metrics
from jackpots.models import Pool
from jackpots.services import feed, folding, screen_events, seals

log = logging.getLogger("hall.jackpots")


@shared_task(ignore_result=True)
def fold_pools() -> int:
    """Fold the pools that have unfolded contributions; returns the number of rows folded."""
    folded = 0
    todo = folding.unfolded()
    if todo.oldest_at is not None:
        metrics.FOLD_LAG.observe(max(0.0, (timezone.now() - todo.oldest_at).total_seconds()))
    for pool_id in todo.pools:
        try:
            folded += folding.fold(pool_id).folded
        except Exception:  # one pool's failure must not stop the others; the next tick retries
            log.exception("could not fold pool %s", pool_id)
    return folded


@shared_task(ignore_result=True)
def seal_pools() -> int:
    """Seal every pool's ledger rows appended since its last seal; returns the number of seals made."""
    made = 0
    for pool in Pool.objects.order_by("pk"):
        try:
            made += seals.seal(pool) is not None
        except Exception:
            log.exception("could not seal pool %s", pool.pk)
    return made


# Its name is the one it had in jackpots.screens: the beat schedule and running workers know it by it.
@shared_task(name="jackpots.screens.publish_pool_meters", ignore_result=True)
def publish_pool_meters() -> int:
    """Publish the pools' meters that changed (beat, CELERY_BEAT_SCHEDULE "publish-pool-meters").

    A beat task, not one per contribution: contributions arrive by thousands a second and Celery runs
    about 550 tasks/s per worker (DESIGN §7); 4 ticks a second cost the same whatever the load, and run
    where the hall's worker and single beat already run (the embedded hall's in-process ones too).
    """
    return len(screen_events.publish_meters())


@shared_task(ignore_result=True)
def feed_pool_amounts() -> int:
    """The authority's feed: each venue's pool amounts once its interval ended (jackpots.services.feed)."""
    return feed.report_pool_amounts()
