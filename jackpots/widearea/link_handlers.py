"""Wide-area pools on the link (halls.link.registry): the central's handlers of a venue's messages and a
venue's handlers of the central's entries. Each only reads the message and calls one service."""

from __future__ import annotations

from typing import Any

from halls.link.kinds import LinkKind
from halls.link.registry import CentralEntry, VenueMessage, on_central_entry, on_venue_message
from jackpots.widearea.services import central, venue


@on_venue_message(LinkKind.WA_CONTRIBUTIONS)
def contributions(message: VenueMessage) -> dict[str, Any]:
    return central.accept_contributions(venue_id=message.venue_id, payload=message.payload)


@on_venue_message(LinkKind.WA_HIT)
def hit(message: VenueMessage) -> dict[str, Any]:
    return central.accept_hit(venue_id=message.venue_id, payload=message.payload)


@on_venue_message(LinkKind.WA_METERS)
def meters(message: VenueMessage) -> dict[str, Any]:
    return central.accept_meters(
        venue_id=message.venue_id, payload=message.payload, sequence=message.sequence
    )


@on_central_entry(LinkKind.WA_LEVELS)
def levels(entry: CentralEntry) -> None:
    venue.levels_heard(entry.payload)


@on_central_entry(LinkKind.WA_DECISION)
def decision(entry: CentralEntry) -> None:
    venue.decided(entry.payload)


@on_central_entry(LinkKind.WA_RECONCILED)
def reconciled(entry: CentralEntry) -> None:
    venue.reconciled(entry.payload)
