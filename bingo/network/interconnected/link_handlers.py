"""Interconnected bingo on the link (halls.link.registry): the central's handlers of a hall's messages and
a venue's handlers of the central's entries. Each only reads the message and calls one service."""

from __future__ import annotations

from typing import Any

from bingo.network.interconnected.services import gran, rounds, venue
from halls.link.kinds import LinkKind
from halls.link.registry import CentralEntry, VenueMessage, on_central_entry, on_venue_message


@on_venue_message(LinkKind.IB_CONTRIBUTION)
def contribution(message: VenueMessage) -> dict[str, Any]:
    return rounds.accept_contribution(venue_id=message.venue_id, payload=message.payload)


@on_venue_message(LinkKind.IB_RESULT)
def result(message: VenueMessage) -> dict[str, Any]:
    return rounds.accept_result(venue_id=message.venue_id, payload=message.payload)


@on_central_entry(LinkKind.IB_ROUND_OPENED)
def round_opened(entry: CentralEntry) -> None:
    venue.round_opened(entry.payload)


@on_central_entry(LinkKind.IB_DECISION)
def decided(entry: CentralEntry) -> None:
    venue.decided(entry.payload)  # a traditional room's winning cards: payables
    gran.apply_decision(entry.payload)  # an electronic speciality's (Gran Línea / Bingo): player cards


@on_central_entry(LinkKind.IB_METER)
def meter(entry: CentralEntry) -> None:
    venue.meter(entry.payload)
    gran.apply_meter(entry.payload)
