"""Venue side: what the venue owes the central, written with the fact it reports (same transaction)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Max, QuerySet
from django.utils import timezone

from halls import events
from halls.link.kinds import LinkKind
from halls.link.models import OutboxMessage


def _stream(venue_id: int) -> str:
    return f"link.outbox.{venue_id}"


def enqueue(*, venue_id: int, kind: LinkKind, payload: dict[str, Any]) -> OutboxMessage:
    """Write one message to the venue's outbox. Must run inside the transaction of the fact it reports: it
    is sent if and only if that fact commits. Numbered in commit order (the number's row stays locked till
    commit, so a later number never commits first)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("outbox.enqueue must run inside the transaction of the fact it reports")
    sequence = events.next_seq(_stream(venue_id))
    return OutboxMessage.objects.create(venue_id=venue_id, sequence=sequence, kind=str(kind), payload=payload)


def pending(*, venue_id: int, limit: int = 100) -> QuerySet[OutboxMessage]:
    """The venue's unacknowledged messages, oldest first: what the sender sends next, in this order."""
    return OutboxMessage.objects.filter(venue_id=venue_id, acked_at__isnull=True).order_by("sequence")[:limit]


def acknowledge(*, venue_id: int, up_to: int) -> int:
    """The central has accepted every message up to `up_to`: mark them sent. Returns how many were marked
    (a repeated acknowledgement marks none)."""
    return OutboxMessage.objects.filter(venue_id=venue_id, sequence__lte=up_to, acked_at__isnull=True).update(
        acked_at=timezone.now()
    )


def backlog(*, venue_id: int) -> int:
    """How many messages wait to be acknowledged (the venue's queue while the link is down)."""
    return OutboxMessage.objects.filter(venue_id=venue_id, acked_at__isnull=True).count()


def rewind(*, venue_id: int, expected: int) -> tuple[int, int]:
    """The central expects message `expected` next: everything before it is accepted there (marked sent
    here), everything from it on is sent again (a restored central, an acknowledgement lost in a crash).
    Returns (marked sent, marked to send again)."""
    with transaction.atomic():
        acked = acknowledge(venue_id=venue_id, up_to=expected - 1)
        again = OutboxMessage.objects.filter(
            venue_id=venue_id, sequence__gte=expected, acked_at__isnull=False
        ).update(acked_at=None)
    return acked, again


def last_sequence(*, venue_id: int) -> int:
    """The venue's highest message number (what it reports to the central: its backlog there)."""
    return OutboxMessage.objects.filter(venue_id=venue_id).aggregate(m=Max("sequence"))["m"] or 0
