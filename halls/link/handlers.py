"""The link's own kinds: the central records a venue's HELLO; a venue keeps the central's NOTICEs.
Imported by LinkConfig.ready()."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils.dateparse import parse_datetime

from halls.link.kinds import LinkKind
from halls.link.registry import CentralEntry, VenueMessage, on_central_entry, on_venue_message
from halls.link.services import notices, presence


@on_venue_message(LinkKind.HELLO)
def venue_said_hello(message: VenueMessage) -> dict[str, Any]:
    started: datetime | None = parse_datetime(str(message.payload.get("started_at") or ""))
    presence.hello(
        venue_id=message.venue_id, software=str(message.payload.get("software", "")), started_at=started
    )
    return {"hello": True}


@on_central_entry(LinkKind.NOTICE)
def central_notice(entry: CentralEntry) -> None:
    notices.store(entry)
