"""A program change, recorded: the audit entry in the venue's chain and the event on the room's screens."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halls.actors import Actor
from halls.eventtypes import EventType
from halls.models import Room
from halls.services.changes import record_change


def note(room: Room, actor: Actor, type: EventType, obj: Any, data: Mapping[str, Any]) -> None:
    """Audit a program change in the venue's chain and tell the room's screens (after commit). A program's
    terms are public: the screens get what the audit keeps, `data`, a payload of `type`."""
    record_change(
        venue_id=room.venue_id, actor=actor, type=type, obj=obj, data=data, stream=room.stream, public=data
    )
