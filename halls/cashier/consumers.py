"""The till page's WebSocket: staff only, read-only (halls.venue_streams); it forwards the venue's cashier
stream (``cashier.<venue id>``: prizes waiting and paid, shifts opened and closed, tickets) as its events
come, to the venue's cashiers (and operator; the inspector reads).
"""

from __future__ import annotations

from typing import Any

from halls import access
from halls.models import Role
from halls.venue_streams import VenueStreamConsumer


def cashier_stream(venue_id: int) -> str:
    """The venue's cashier stream (the services publish their till events on it)."""
    return f"cashier.{venue_id}"


class CashierConsumer(VenueStreamConsumer):
    label = "cashier"

    def stream(self, venue_id: int) -> str:
        return cashier_stream(venue_id)

    def check(self, user: Any, venue_id: int) -> None:
        access.require_role(user, venue_id, Role.CASHIER)
