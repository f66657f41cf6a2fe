"""Celery doors of halls: thin periodic tasks (beat).

- anchor_audit_heads (every HALL_AUDIT_ANCHOR_SECONDS, default 60 s): publishes every audit and seal
  chain head that moved, signed, outside the database (halls.services.anchors).
"""

from __future__ import annotations

from celery import shared_task

from halls.services import anchors


@shared_task(ignore_result=True)
def anchor_audit_heads() -> int:
    """Anchor the chain heads that moved since their last anchor; returns how many."""
    return len(anchors.write())
