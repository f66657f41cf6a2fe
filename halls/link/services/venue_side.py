"""Venue side of the link process (`manage.py run_link`): what it reads and writes in this installation's
database, each call one short transaction (the process itself only moves bytes: halls.link.transport)."""

from __future__ import annotations

import tomllib
from functools import cache
from typing import Any, cast

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from halls.errors import NotFound
from halls.link import registry
from halls.link.kinds import LinkKind
from halls.link.models import Destination, OutboxMessage, StreamPosition
from halls.link.services import outbox, streams
from halls.models import Venue
from halls.services import audit


@cache
def software_version() -> str:
    try:
        with (settings.BASE_DIR / "pyproject.toml").open("rb") as file:
            return f"hall {tomllib.load(file)['project']['version']}"
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "hall (unknown version)"


def local_venue_id(licence_number: str) -> int:
    """This installation's Venue row for HALL_LINK_VENUE (the licence number the central knows it by)."""
    venue_id = Venue.objects.filter(licence_number=licence_number).values_list("pk", flat=True).first()
    if venue_id is None:
        raise NotFound(
            _("No venue with licence number “%(n)s” in this installation (HALL_LINK_VENUE).")
            % {"n": licence_number},
            code="unknown_venue",
        )
    return int(venue_id)


def say_hello(*, venue_id: int) -> int:
    """A HELLO in the outbox (the process started): its sequence."""
    with transaction.atomic():
        message = outbox.enqueue(
            venue_id=venue_id,
            kind=LinkKind.HELLO,
            payload={"software": software_version(), "started_at": timezone.now().isoformat()},
        )
    return message.sequence


def next_batch(*, venue_id: int, limit: int) -> tuple[list[dict[str, Any]], int]:
    """The next unacknowledged messages in order, as sent, and the highest sequence written so far."""
    messages = [
        {"sequence": m.sequence, "kind": m.kind, "payload": m.payload}
        for m in outbox.pending(venue_id=venue_id, limit=limit)
    ]
    return messages, outbox.last_sequence(venue_id=venue_id)


def authority_batch(*, limit: int) -> list[dict[str, Any]]:
    """The oldest unacknowledged messages owed to the gaming authority, venue by venue, each in its order:
    {"venue_id", "venue": licence number, "sequence", "kind", "payload"}, as the authority sender posts."""
    messages = (
        OutboxMessage.objects.filter(destination=Destination.AUTHORITY, acked_at__isnull=True)
        .select_related("venue")
        .order_by("venue_id", "sequence")[:limit]
    )
    return [
        {
            "venue_id": m.venue_id,
            "venue": m.venue.licence_number if m.venue is not None else "",  # the authority's: a venue's
            "sequence": m.sequence,
            "kind": m.kind,
            "payload": m.payload,
        }
        for m in messages
    ]


def acknowledge_authority(*, venue_id: int, up_to: int, kind: str) -> int:
    """The authority accepted the venue's messages up to ``up_to``: marked sent (their personal part
    erased), audited on the venue's chain (the sequence and kind: the proof the authority was notified)."""
    with transaction.atomic():
        marked = outbox.acknowledge(venue_id=venue_id, up_to=up_to, destination=Destination.AUTHORITY)
        if marked:
            audit.record(
                venue_id=venue_id,
                actor="link.authority",
                action="link.authority_acknowledged",
                obj=Venue(pk=venue_id),
                data={"up_to": up_to, "kind": kind, "messages": marked},
            )
    return marked


def reported(*, venue_id: int) -> int:
    return outbox.last_sequence(venue_id=venue_id)


def acknowledge(*, venue_id: int, up_to: int) -> int:
    return outbox.acknowledge(venue_id=venue_id, up_to=up_to)


def rewind(*, venue_id: int, expected: int) -> tuple[int, int]:
    return outbox.rewind(venue_id=venue_id, expected=expected)


def positions(stream_names: list[str]) -> dict[str, int]:
    """How far this installation has applied each stream (0 before its first entry)."""
    known = dict(
        StreamPosition.objects.filter(stream__in=stream_names).values_list("stream", "applied_sequence")
    )
    return {name: int(known.get(name, 0)) for name in stream_names}


def apply_entries(*, stream: str, entries: list[dict[str, Any]]) -> streams.Applied:
    """Apply entries received from the central (pushed or fetched), in order, each once."""
    parsed = []
    for entry in entries:
        raw = str(entry["kind"])
        # A kind this version does not know (a newer central) is looked up as its plain string, finds no
        # handler, and is counted as read (as streams.apply does for kinds this installation has no use for).
        kind = LinkKind(raw) if raw in LinkKind._value2member_map_ else cast(LinkKind, raw)
        parsed.append(
            registry.CentralEntry(stream, int(entry["sequence"]), kind, dict(entry.get("payload") or {}))
        )
    return streams.apply(stream=stream, entries=parsed)
