"""The feed to the regulator's node in this installation's outbox (issue 29; halls.feed): written with its
fact (`write`, the hook halls.feed.services.emit calls), read, signed and acknowledged by the link process's
feed sender (halls.link.transport.FeedSender), each call one short transaction.

One sequence per installation (the stream "feed.regulator"), whatever venue the fact is of: the node
accepts an installation's messages once and in order. A row's payload is ``{"at": <the fact's time, ISO
8601>, "payload": <the kind's payload>}``; it is signed when sent (halls.feed.envelope, with the
installation's anchor key: Ed25519 signs the same bytes the same way every time, so a message sent again
carries the same signature and the node answers it as a duplicate).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Count, Max, Min, QuerySet
from django.utils import timezone

from halls import events
from halls.feed import envelope
from halls.feed.kinds import FeedKind
from halls.feed.schema import validate_payload
from halls.feed.services import emit
from halls.link.models import Destination, OutboxMessage
from halls.services import anchor_key, installation

REGULATOR = Destination.REGULATOR
STREAM = "feed.regulator"


def _feed() -> QuerySet[OutboxMessage]:
    return OutboxMessage.objects.filter(destination=REGULATOR)


def write(kind: str, payload: dict[str, Any], venue_id: int | None, at: datetime) -> None:
    """Append one message (emit's writer: inside the fact's transaction, its payload already validated).
    Numbered in commit order: the stream's cursor row stays locked till commit."""
    sequence = events.next_seq(STREAM)
    OutboxMessage.objects.create(
        venue_id=venue_id,
        destination=REGULATOR,
        sequence=sequence,
        kind=kind,
        payload={"at": at.isoformat(), "payload": payload},
    )


def heartbeat() -> int | None:
    """A heartbeat message (nothing else to send for a while), when this installation feeds its node: its
    sequence, or None when the feed is off."""
    with transaction.atomic():
        if not emit.installation_on():
            return None
        last = events.next_seq(STREAM) - 1  # the heartbeat's own number is taken here, the one before it said
        payload = {"last_sequence": last}
        validate_payload(FeedKind.HEARTBEAT, payload)
        OutboxMessage.objects.create(
            venue_id=None,
            destination=REGULATOR,
            sequence=last + 1,
            kind=str(FeedKind.HEARTBEAT),
            payload={"at": timezone.now().isoformat(), "payload": payload},
        )
    return last + 1


def next_batch(*, limit: int) -> list[dict[str, Any]]:
    """The oldest unacknowledged messages in order, each as sent: the signed envelope's JSON."""
    uid = installation.identity()
    key = anchor_key.signing_key()
    rows = _feed().filter(acked_at__isnull=True).order_by("sequence")[:limit]
    return [
        envelope.to_json(
            envelope.sign(
                envelope.Envelope(
                    installation=uid,
                    sequence=row.sequence,
                    kind=row.kind,
                    at=str(row.payload["at"]),
                    payload=row.payload["payload"],
                ),
                key,
            )
        )
        for row in rows
    ]


def acknowledge(*, up_to: int) -> int:
    """The node accepted every message up to `up_to`: marked sent; how many (a repeat marks none)."""
    return _feed().filter(sequence__lte=up_to, acked_at__isnull=True).update(acked_at=timezone.now())


def rewind(*, expected: int) -> tuple[int, int]:
    """The node expects `expected` next: everything before it is there (marked sent), everything from it
    on is sent again (a node restored from a backup, an acknowledgement lost). (marked sent, to send again)"""
    with transaction.atomic():
        acked = acknowledge(up_to=expected - 1)
        again = _feed().filter(sequence__gte=expected, acked_at__isnull=False).update(acked_at=None)
    return acked, again


def backlog() -> tuple[int, float]:
    """How many messages wait for the node, and the age in seconds of the oldest (0 when none): the feed's
    lag on /metrics."""
    found = _feed().filter(acked_at__isnull=True).aggregate(n=Count("pk"), first=Min("created_at"))
    oldest = found["first"]
    age = max(0.0, (timezone.now() - oldest).total_seconds()) if oldest is not None else 0.0
    return int(found["n"]), age


def last_sequence() -> int:
    return int(_feed().aggregate(m=Max("sequence"))["m"] or 0)
