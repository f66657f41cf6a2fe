"""The caller's voice of a room (spec §2.7 S10, TB-42): which of its screens plays it through the hall's
loudspeakers (the operator's choice), and whether it is muted and how loud (the caller's, from the console).

Each change is audited and told to the room's screens at once (`room.voice` on the room stream), so the audio
screen falls silent, changes volume or starts speaking without a reload. What is said is bingo's
(bingo.traditional.voice); this is only where and how loud.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from halls import events
from halls.actors import Actor
from halls.errors import InvalidInput
from halls.eventtypes import EventType, RoomVoice
from halls.models import Room, Screen
from halls.services import audit, locks


def voice_state(room: Room) -> RoomVoice:
    audio = room.screens.filter(plays_audio=True).values_list("pk", flat=True).first()
    return RoomVoice(room=room.pk, audio_screen=audio, muted=room.voice_muted, volume=room.voice_volume)


def _tell(room: Room) -> RoomVoice:
    state = voice_state(room)
    events.emit(room.stream, EventType.ROOM_VOICE, state)
    return state


def choose_audio_screen(*, room: Room, screen: Screen | None, actor: Actor) -> RoomVoice:
    """Make `screen` the room's audio screen (None: the room has none); the one before stops playing."""
    if screen is not None and screen.room_id != room.pk:
        raise InvalidInput(_("The audio screen must be one of the room's own screens."), code="bad_screen")
    with transaction.atomic():
        room = locks.lock_room(room.pk)
        before = room.screens.filter(plays_audio=True).values_list("pk", flat=True).first()
        wanted = screen.pk if screen is not None else None
        if before == wanted:
            return voice_state(room)
        room.screens.filter(plays_audio=True).update(plays_audio=False)
        if wanted is not None:
            Screen.objects.filter(pk=wanted).update(plays_audio=True)
        audit.record(
            venue_id=room.venue_id,
            actor=actor,
            action="room.audio_screen_chosen",
            obj=room,
            data={"old": before, "new": wanted},
        )
        return _tell(room)


def set_voice(*, room: Room, actor: Actor, muted: bool | None = None, volume: int | None = None) -> RoomVoice:
    """Mute or unmute the room's voice and set its volume (0–100); None keeps a value."""
    if volume is not None and (isinstance(volume, bool) or not 0 <= volume <= 100):
        raise InvalidInput(_("The volume is a whole number from 0 to 100."), code="bad_volume")
    with transaction.atomic():
        room = locks.lock_room(room.pk)
        wanted: dict[str, Any] = {
            "voice_muted": room.voice_muted if muted is None else muted,
            "voice_volume": room.voice_volume if volume is None else volume,
        }
        old = {name: getattr(room, name) for name, value in wanted.items() if getattr(room, name) != value}
        if not old:
            return voice_state(room)
        new = {name: wanted[name] for name in old}
        for name, value in new.items():
            setattr(room, name, value)
        room.save(update_fields=list(new))
        audit.record(
            venue_id=room.venue_id,
            actor=actor,
            action="room.voice_changed",
            obj=room,
            data={"old": old, "new": new},
        )
        return _tell(room)
