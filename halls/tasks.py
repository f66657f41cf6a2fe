"""Celery doors of halls: thin periodic tasks (beat).

- anchor_audit_heads (every HALL_AUDIT_ANCHOR_SECONDS, default 60 s): publishes every audit and seal
  chain head that moved, signed, outside the database (halls.services.anchors).
- expire_proposals (every HALL_FOUR_EYES_SWEEP_SECONDS, default 60 s): four-eyes proposals past their
  expiry are marked expired (halls.services.proposals).
"""

from __future__ import annotations

from celery import shared_task

from halls.services import anchors, proposals


@shared_task(ignore_result=True)
def anchor_audit_heads() -> int:
    """Anchor the chain heads that moved since their last anchor; returns how many."""
    return len(anchors.write())


@shared_task(ignore_result=True)
def expire_proposals() -> int:
    """Mark the four-eyes proposals nobody decided in time as expired; returns how many."""
    return proposals.expire_proposals()
