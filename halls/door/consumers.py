"""The door page's WebSocket: staff only, read-only (halls.venue_streams); it forwards the venue's door
stream (``door.<venue id>``: the live count of who is inside after each visit and exit, and the door's
alerts; counts and ids only, never a person) to the venue's door staff (and operator; the inspector reads).
"""

from __future__ import annotations

from typing import Any

from halls import access
from halls.door.services.doorday import door_stream
from halls.models import Role
from halls.venue_streams import VenueStreamConsumer


class DoorConsumer(VenueStreamConsumer):
    label = "door"

    def stream(self, venue_id: int) -> str:
        return door_stream(venue_id)

    def check(self, user: Any, venue_id: int) -> None:
        access.venue_for(user, venue_id, Role.DOOR)
