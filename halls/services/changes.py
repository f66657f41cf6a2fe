"""A change told twice, in the caller's transaction: to the venue's audit chain, and to a stream's readers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halls import events
from halls.actors import Actor
from halls.eventtypes import EventType
from halls.services import audit


def record_change(
    *,
    venue_id: int,
    actor: Actor,
    type: EventType,
    obj: Any,
    data: Mapping[str, Any],
    stream: str,
    public: Mapping[str, Any],
) -> None:
    """Audit `data` under the event's name, and emit `public` (a payload of `type`) on `stream` after commit.

    The two are built apart by the caller: the audit keeps what decides money and who did it; the stream's
    readers get only what `public` holds, even where (a table, a program's terms) the two say the same."""
    audit.record(venue_id=venue_id, actor=actor, action=type.value, obj=obj, data=dict(data))
    events.emit(stream, type, public)
