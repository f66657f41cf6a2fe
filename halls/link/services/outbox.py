"""Venue side: what the venue owes the central, or the gaming authority, written with the fact it reports
(same transaction). Each destination numbers its own messages (1, 2, 3… per venue and destination) and is
sent in that order by its own sender (halls.link.transport): the central's by `run_link`, the authority's
by the authority sender; every function takes the destination, the central's when left out."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Max, QuerySet
from django.utils import timezone

from halls import events
from halls.link.kinds import LinkKind
from halls.link.models import Destination, OutboxMessage

CENTRAL = Destination.CENTRAL
# The part of a payload only its destination may keep (a document's number): erased when acknowledged.
PERSONAL = "personal"


def _stream(venue_id: int, destination: str) -> str:
    if destination == CENTRAL:
        return f"link.outbox.{venue_id}"
    return f"link.outbox.{venue_id}.{destination}"


def _of(venue_id: int, destination: str) -> QuerySet[OutboxMessage]:
    return OutboxMessage.objects.filter(venue_id=venue_id, destination=destination)


def enqueue(
    *, venue_id: int, kind: LinkKind, payload: dict[str, Any], destination: str = CENTRAL
) -> OutboxMessage:
    """Write one message to the venue's outbox. Must run inside the transaction of the fact it reports: it
    is sent if and only if that fact commits. Numbered in commit order (the number's row stays locked till
    commit, so a later number never commits first)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("outbox.enqueue must run inside the transaction of the fact it reports")
    sequence = events.next_seq(_stream(venue_id, destination))
    return OutboxMessage.objects.create(
        venue_id=venue_id, destination=destination, sequence=sequence, kind=str(kind), payload=payload
    )


def pending(*, venue_id: int, limit: int = 100, destination: str = CENTRAL) -> QuerySet[OutboxMessage]:
    """The venue's unacknowledged messages, oldest first: what the sender sends next, in this order."""
    return _of(venue_id, destination).filter(acked_at__isnull=True).order_by("sequence")[:limit]


def acknowledge(*, venue_id: int, up_to: int, destination: str = CENTRAL) -> int:
    """The destination has accepted every message up to `up_to`: mark them sent, and erase their personal
    part (the destination has it). Returns how many were marked (a repeated acknowledgement marks none)."""
    with transaction.atomic():
        due = _of(venue_id, destination).filter(sequence__lte=up_to, acked_at__isnull=True)
        personal = [m for m in due.filter(payload__has_key=PERSONAL).only("pk", "payload")]
        for message in personal:
            message.payload = {k: v for k, v in message.payload.items() if k != PERSONAL}
        if personal:
            OutboxMessage.objects.bulk_update(personal, ["payload"])
        return due.update(acked_at=timezone.now())


def backlog(*, venue_id: int, destination: str = CENTRAL) -> int:
    """How many messages wait to be acknowledged (the venue's queue while the link is down)."""
    return _of(venue_id, destination).filter(acked_at__isnull=True).count()


def rewind(*, venue_id: int, expected: int, destination: str = CENTRAL) -> tuple[int, int]:
    """The central expects message `expected` next: everything before it is accepted there (marked sent
    here), everything from it on is sent again (a restored central, an acknowledgement lost in a crash).
    Returns (marked sent, marked to send again)."""
    with transaction.atomic():
        acked = acknowledge(venue_id=venue_id, up_to=expected - 1, destination=destination)
        again = (
            _of(venue_id, destination)
            .filter(sequence__gte=expected, acked_at__isnull=False)
            .update(acked_at=None)
        )
    return acked, again


def last_sequence(*, venue_id: int, destination: str = CENTRAL) -> int:
    """The venue's highest message number (what it reports to the central: its backlog there)."""
    return _of(venue_id, destination).aggregate(m=Max("sequence"))["m"] or 0
