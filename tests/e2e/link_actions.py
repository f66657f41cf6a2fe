"""What the link's end-to-end test does inside a central or a venue installation: run in that installation's
own process (`manage.py shell -c "from tests.e2e.link_actions import …"`) against its own database, so the
test's process never shares a database connection with either. Each prints one JSON line."""

from __future__ import annotations

import json
from typing import Any

from django.db import transaction

from halls.link.kinds import LinkKind
from halls.link.models import InboxMessage, LinkNotice, OutboxMessage, StreamPosition
from halls.link.services import credentials, notices, outbox, presence, streams
from halls.models import Jurisdiction, Network, Venue

LICENCE = "ML-B-0001"
NETWORK = "NORTE"


def _say(data: Any) -> None:
    print(json.dumps(data, default=str), flush=True)


def _venue() -> Venue:
    venue, _ = Venue.objects.get_or_create(
        licence_number=LICENCE, defaults={"name": "Bingo Melilla Centro", "jurisdiction": Jurisdiction.ML}
    )
    network, _ = Network.objects.get_or_create(
        code=NETWORK, defaults={"name": "Red Norte", "jurisdiction": "ML"}
    )
    network.venues.add(venue)
    return venue


def setup_central() -> None:
    """The central's row of the venue, its network, and its credential (printed once)."""
    issued = credentials.issue(venue=_venue(), actor="e2e")
    _say({"venue_id": issued.venue_id, "key": issued.key, "secret": issued.secret})


def setup_venue() -> None:
    """The venue installation's own row (same licence number) and the network it belongs to."""
    _say({"venue_id": _venue().pk})


def enqueue(count: int, start: int) -> None:
    """`count` messages written at the venue, each in its own transaction (as facts are), numbered n=start…"""
    venue_id = Venue.objects.get(licence_number=LICENCE).pk
    for n in range(start, start + count):
        with transaction.atomic():
            outbox.enqueue(
                venue_id=venue_id,
                kind=LinkKind.HELLO,
                payload={"software": f"hall e2e {n}", "started_at": None},
            )
    _say({"backlog": outbox.backlog(venue_id=venue_id)})


def append(count: int, start: int) -> None:
    """Central: `count` notices on the network's stream and one on the venue's own."""
    venue = Venue.objects.get(licence_number=LICENCE)
    for n in range(start, start + count):
        with transaction.atomic():
            streams.append(stream=f"network.{NETWORK}", kind=LinkKind.NOTICE, payload={"text": f"red {n}"})
    notices.send(venue=venue, text=f"sala {start}", actor="e2e")
    _say({"head": streams.head(stream=f"network.{NETWORK}")})


def central_state() -> None:
    (state,) = [s for s in presence.network_map() if s.licence_number == LICENCE]
    inbox = list(InboxMessage.objects.order_by("sequence").values_list("sequence", "payload"))
    _say(
        {
            "state": state.state,
            "since": state.since,
            "applied": state.applied_sequence,
            "backlog": state.backlog,
            "software": state.software_version,
            "inbox_sequences": [s for s, _ in inbox],
            "inbox_softwares": [p.get("software") for _, p in inbox],
        }
    )


def venue_state() -> None:
    venue_id = Venue.objects.get(licence_number=LICENCE).pk
    _say(
        {
            "backlog": outbox.backlog(venue_id=venue_id),
            "written": OutboxMessage.objects.filter(venue_id=venue_id).count(),
            "notices": list(LinkNotice.objects.order_by("stream", "sequence").values_list("text", flat=True)),
            "positions": dict(StreamPosition.objects.values_list("stream", "applied_sequence")),
        }
    )
