"""Notices for a venue's operator: sent by the central on the venue's stream (a NOTICE entry), kept at
the venue to be read (`manage.py link_notices`)."""

from __future__ import annotations

from django.db import transaction
from django.db.models import QuerySet

from halls.actors import Actor
from halls.link.kinds import LinkKind
from halls.link.models import LinkNotice, StreamEntry
from halls.link.registry import CentralEntry
from halls.link.services import streams
from halls.link.services.reach import venue_stream
from halls.models import Venue
from halls.services import audit

LEVELS = ("info", "warning")


def send(*, venue: Venue, text: str, level: str = "info", actor: Actor) -> StreamEntry:
    """Central: a notice to one venue's operator, on the venue's stream, audited."""
    if level not in LEVELS:
        level = "info"
    stream = venue_stream(venue.pk)
    with transaction.atomic():
        # The audit chain's lock comes before the stream's number (halls.locks.Rank).
        audit.record(
            venue_id=venue.pk,
            actor=actor,
            action="link.notice_sent",
            obj=venue,
            data={"stream": stream, "text": text, "level": level},
        )
        entry = streams.append(stream=stream, kind=LinkKind.NOTICE, payload={"text": text, "level": level})
    return entry


def store(entry: CentralEntry) -> None:
    """Venue: keep a NOTICE entry (inside streams.apply's transaction: once per entry)."""
    LinkNotice.objects.get_or_create(
        stream=entry.stream,
        sequence=entry.sequence,
        defaults={
            "text": str(entry.payload.get("text", "")),
            "level": str(entry.payload.get("level", "info")),
        },
    )


def recent(*, limit: int = 50) -> QuerySet[LinkNotice]:
    """Venue: the latest notices, newest first."""
    return LinkNotice.objects.order_by("-received_at", "-pk")[:limit]
