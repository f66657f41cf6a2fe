"""A hall screen's snapshot (read only): what every screen of a room shows (the sections, the venue, the
room, the caller's voice) with the stream's seq, built once per change of the room's stream for the whole
web process (halls.snapshot_cache), and the screen's own few fields put around it without a query.

The same text for the screen's HTTP snapshot (halls.views.screen_snapshot: the token's read and the
cursor's) and for the snapshot a socket is sent when it opens (halls.consumers.ScreenConsumer: nothing
read when cached): 2,000 screens reconnecting after a web process died each built it from the database
(~40 queries), and the walls stayed dark for a minute (issue 30).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.utils import translation

from halls import events, hooks, snapshot_cache
from halls.models import Room, room_stream
from halls.services.voice import voice_state

SNAPSHOT_TYPE = "stream.snapshot"  # the frame a socket opened with ?snapshot=1 is sent first
WHAT = "screen"  # the cache's key beside the stream


@dataclass(frozen=True)
class RoomPart:
    """The room's part, encoded once: the voice object's members and the rest's (each without its braces'
    opening one), so a screen's fields go around them as text."""

    voice: str
    rest: str


def _members(value: dict[str, Any]) -> str:
    """A JSON object's text without its opening brace: '"a":1,…}'."""
    return json.dumps(value, cls=DjangoJSONEncoder, separators=(",", ":"))[1:]


def build_room_part(room_id: int) -> tuple[int, RoomPart]:
    """The stream's seq (read first: no event after it is missed) and the room's part of the snapshot."""
    room = Room.objects.select_related("venue").get(pk=room_id)
    seq = events.current_seq(room.stream)
    with translation.override(room.venue.language):
        sections = {section.name: section.snapshot(room) for section in hooks.screen_sections()}
    rest = {
        "stream": room.stream,
        "seq": seq,
        "venue": room.venue.name,
        "language": room.venue.language,
        "currency": room.venue.currency,
        "room": room.name,
        "sections": sections,
    }
    return seq, RoomPart(voice=_members(dict(voice_state(room))), rest=_members(rest))


def room_part(room_id: int, at_least: int) -> snapshot_cache.Entry:
    """On a thread (a request): the room's part at or past `at_least` (its stream's cursor, read)."""
    return snapshot_cache.cache().get(
        (room_stream(room_id), WHAT), at_least, lambda: build_room_part(room_id)
    )


async def room_part_for_socket(room_id: int, at_least: int) -> snapshot_cache.Entry:
    """On the loop (a socket's connect, its stream joined): the room's part at or past `at_least` (the hub's
    head of the stream before the join), no query when cached."""
    return await snapshot_cache.cache().aget(
        (room_stream(room_id), WHAT), at_least, lambda: build_room_part(room_id)
    )


def text(entry: snapshot_cache.Entry, screen_id: int, screen_name: str, *, frame: bool = False) -> str:
    """The screen's snapshot: its own fields around the room's part (`frame`: as the socket's first frame,
    ``"type": "stream.snapshot"``)."""
    part: RoomPart = entry.value
    own = json.dumps(screen_name)
    kind = f'"type":"{SNAPSHOT_TYPE}",' if frame else ""
    # The voice says which screen this is: the room's audio screen says the balls (halls/voice.js).
    return (
        f'{{{kind}"screen":{own},"screen_id":{screen_id},'
        f'"voice":{{"screen":{screen_id},{part.voice},{part.rest}'
    )
