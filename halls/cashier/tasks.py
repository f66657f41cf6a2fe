"""Celery doors of the cashier: thin periodic tasks (beat).

- expire_tickets (every HALL_TICKET_EXPIRY_SECONDS, default 300 s): tickets past their validity go to the
  house (halls.cashier.services.tickets.expire_tickets).
"""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from halls.cashier.services import feed, tickets


@shared_task(ignore_result=True)
def expire_tickets() -> int:
    """Expire the tickets whose time ran out; returns how many."""
    return tickets.expire_tickets(timezone.now())


@shared_task(ignore_result=True)
def feed_cashier_days() -> int:
    """The authority's feed: the cashier's totals of each ended day (halls.cashier.services.feed)."""
    return feed.report_cashier_days()
