"""A venue's rooms and screens, set up by its operator (issue 15): created, renamed, a screen switched off.
Each write is audited in the venue's chain."""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from halls.errors import Conflict, InvalidInput
from halls.eventtypes import EventType, RoomRenamed, ScreenRenamed
from halls.models import Room, Screen, Venue
from halls.services import audit, locks
from halls.services.changes import record_change

MIN_PACE = Decimal("0.05")
MAX_PACE = Decimal("999")


def _name(name: str, what: str, code: str) -> str:
    name = " ".join(name.split())
    if not name or len(name) > 80:
        raise InvalidInput(_("A %(what)s needs a name of 1 to 80 characters.") % {"what": what}, code=code)
    return name


def create_room(
    *,
    venue: Venue,
    name: str,
    actor: User,
    ball_pace_seconds: Decimal = Decimal("4"),
    claim_window_seconds: int = 20,
) -> Room:
    """A bingo room of the venue: where one game at a time is played and shown on its screens."""
    name = _name(name, _("room"), "bad_room_name")
    if not MIN_PACE <= ball_pace_seconds <= MAX_PACE:
        raise InvalidInput(
            _("The pace between balls is %(min)s to %(max)s s.") % {"min": MIN_PACE, "max": MAX_PACE},
            code="bad_pace",
        )
    if not 0 <= claim_window_seconds <= 600:
        raise InvalidInput(_("The any-more-claims window is 0 to 600 s."), code="bad_claim_window")
    try:
        with transaction.atomic():
            room = Room.objects.create(
                venue=venue,
                name=name,
                ball_pace_seconds=ball_pace_seconds,
                claim_window_seconds=claim_window_seconds,
            )
            audit.record(
                venue_id=venue.pk,
                actor=actor,
                action="room.created",
                obj=room,
                data={
                    "name": name,
                    "ball_pace_seconds": ball_pace_seconds,
                    "claim_window_seconds": claim_window_seconds,
                },
            )
    except IntegrityError as exc:
        raise Conflict(
            _("%(venue)s already has a room %(name)s.") % {"venue": venue.name, "name": name},
            code="room_exists",
        ) from exc
    return room


def _screen_name_free(room: Room, name: str, *, screen_id: int | None = None) -> None:
    """Refuse (409 screen_exists, naming it) a name another screen of the room has, whatever its case.

    Checked under the room's lock (a room's screens change under it), not by a database constraint: halls
    whose setup accepted a repeated name before this check may hold such rows, and a migration would fail
    on them."""
    others = room.screens.filter(name__iexact=name)
    if screen_id is not None:
        others = others.exclude(pk=screen_id)
    taken = others.values_list("name", flat=True).first()
    if taken is not None:
        raise Conflict(
            _("Room %(room)s already has a screen named “%(name)s”: choose another name.")
            % {"room": room.name, "name": taken},
            code="screen_exists",
            screen=taken,
        )


def create_screen(*, room: Room, name: str, actor: User) -> Screen:
    """A public display of the room, reached by its unguessable token URL; its name unique among the
    room's screens (409 screen_exists naming the other, nothing written)."""
    name = _name(name, _("screen"), "bad_screen_name")
    with transaction.atomic():
        room = locks.lock_room(room.pk)
        _screen_name_free(room, name)
        screen = Screen.objects.create(venue=room.venue, room=room, name=name)
        # The token is a credential: the audit keeps that a screen was made, not its token.
        audit.record(
            venue_id=room.venue_id,
            actor=actor,
            action="screen.created",
            obj=screen,
            data={"room": room.pk, "name": name},
        )
    return screen


def set_screen_active(*, screen: Screen, active: bool, actor: User) -> Screen:
    """Switch a screen off (its URL stops answering) or on again."""
    with transaction.atomic():
        locks.lock_room(screen.room_id)  # a room's screens change under its lock
        screen = Screen.objects.get(pk=screen.pk)
        if screen.active == active:
            return screen
        screen.active = active
        screen.save(update_fields=["active"])
        audit.record(
            venue_id=screen.venue_id,
            actor=actor,
            action="screen.activated" if active else "screen.deactivated",
            obj=screen,
            data={"room": screen.room_id, "name": screen.name},
        )
    return screen


def rename_room(*, room: Room, name: str, actor: User) -> Room:
    """A new name for the room, unique in its venue; its screens show it at once (``room.renamed``)."""
    name = _name(name, _("room"), "bad_room_name")
    taken = Conflict(
        _("%(venue)s already has a room %(name)s.") % {"venue": room.venue.name, "name": name},
        code="room_exists",
    )
    try:
        with transaction.atomic():
            room = locks.lock_room(room.pk)
            old = room.name
            if old == name:
                return room
            if Room.objects.filter(venue_id=room.venue_id, name__iexact=name).exclude(pk=room.pk).exists():
                raise taken
            room.name = name
            room.save(update_fields=["name"])
            record_change(
                venue_id=room.venue_id,
                actor=actor,
                type=EventType.ROOM_RENAMED,
                obj=room,
                data={"old": old, "new": name},
                stream=room.stream,
                public=RoomRenamed(room=room.pk, name=name),
            )
    except IntegrityError as exc:  # another room took the name meanwhile
        raise taken from exc
    return room


def rename_screen(*, screen: Screen, name: str, actor: User) -> Screen:
    """A new name for the screen, unique among its room's screens; its page shows it at once."""
    name = _name(name, _("screen"), "bad_screen_name")
    with transaction.atomic():
        room = locks.lock_room(screen.room_id)  # a room's screens change under its lock
        screen = Screen.objects.get(pk=screen.pk)
        old = screen.name
        if old == name:
            return screen
        _screen_name_free(room, name, screen_id=screen.pk)
        screen.name = name
        screen.save(update_fields=["name"])
        record_change(
            venue_id=screen.venue_id,
            actor=actor,
            type=EventType.SCREEN_RENAMED,
            obj=screen,
            data={"room": room.pk, "old": old, "new": name},
            stream=room.stream,
            public=ScreenRenamed(room=room.pk, screen=screen.pk, name=name),
        )
    return screen
