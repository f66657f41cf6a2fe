"""A room's ball-drawing devices (TB-30) and their reserve (TB-31), and the switch to another device in the
middle of a game (TB-46): the balls drawn so far stay as they are, the draw goes on from the next ordinal
with the new device, and the switch is kept with who, when, after which ball and why (the recall lists it).

A blower's balls are read by the ball reader and entered by the caller (draw source "manual"); the RNG
draws them itself ("rng"). Switching between the two changes the game's draw source: a game switched to
the RNG while drawing gets its next ball scheduled; one switched to a blower waits for the caller's entry.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from bingo.traditional.models import DeviceSwitch, DrawDevice, DrawDeviceKind, DrawSource, Game, GameState
from bingo.traditional.services import draw
from bingo.traditional.services.locks import lock_game
from bingo.traditional.services.steps import record, step
from halls.errors import Conflict, InvalidInput
from halls.eventtypes import EventType, GameDeviceSwitched
from halls.models import Room
from halls.services import audit

# A switch happens once the draw has begun and before the game ends.
SWITCHABLE = (GameState.DRAWING, GameState.PAUSED)


def register_device(
    *, room: Room, name: str, kind: str, actor: User, reserve: bool = False, homologation_ref: str = ""
) -> DrawDevice:
    """A blower (pneumatic or air-turbine) or the RNG of the room, main or reserve."""
    name = " ".join(name.split())
    if not name or len(name) > 80:
        raise InvalidInput(_("A device needs a name of 1 to 80 characters."), code="bad_device_name")
    if kind not in DrawDeviceKind.values:
        raise InvalidInput(
            _("Unknown device kind %(kind)r: use one of %(kinds)s.")
            % {"kind": kind, "kinds": ", ".join(DrawDeviceKind.values)},
            code="bad_device_kind",
        )
    try:
        with transaction.atomic():
            device = DrawDevice.objects.create(
                room=room,
                name=name,
                kind=kind,
                reserve=reserve,
                homologation_ref=homologation_ref.strip(),
                created_at=timezone.now(),
            )
            audit.record(
                venue_id=room.venue_id,
                actor=actor,
                action="draw_device.registered",
                obj=device,
                data={
                    "room": room.pk,
                    "name": name,
                    "kind": kind,
                    "reserve": reserve,
                    "homologation_ref": device.homologation_ref,
                },
            )
    except IntegrityError as exc:
        raise Conflict(
            _("Room %(room)s already has a device %(name)s.") % {"room": room.name, "name": name},
            code="device_exists",
        ) from exc
    return device


def main_device(room: Room, draw_source: str) -> DrawDevice | None:
    """The device a new game of the room starts with: its first main (not reserve) device of the game's
    draw source, else its first device of that source; None when the room has none registered."""
    for device in DrawDevice.objects.filter(room=room).order_by("reserve", "pk"):
        if device.draw_source == draw_source:
            return device
    return None


def switch_device(*, game: Game, device: DrawDevice, reason: str, actor: User) -> DeviceSwitch:
    """Go on drawing the game with ``device`` (usually the room's reserve, after a failure)."""
    reason = reason.strip()
    if not reason:
        raise InvalidInput(_("Switching the device needs a reason."), code="reason_required")
    if device.room_id != game.room_id:
        raise InvalidInput(
            _("Device %(name)s is not a device of this game's room.") % {"name": device.name},
            code="bad_device",
        )
    with transaction.atomic():
        game = lock_game(game.pk)
        if game.state not in SWITCHABLE:
            raise Conflict(
                _("Game %(number)s is %(state)s: the device is switched while it is drawing or paused.")
                % {"number": game.number, "state": GameState(game.state).label.lower()},
                code="wrong_state",
                state=game.state,
            )
        if game.draw_device_id == device.pk:
            raise Conflict(
                _("Game %(number)s already draws with %(name)s.")
                % {"number": game.number, "name": device.name},
                code="same_device",
            )
        switch = DeviceSwitch.objects.create(
            game=game,
            from_device_id=game.draw_device_id,
            to_device=device,
            from_source=game.draw_source,
            to_source=device.draw_source,
            at_ordinal=game.balls_drawn,
            reason=reason,
            switched_by=actor,
            switched_at=timezone.now(),
        )
        game.draw_device = device
        game.draw_source = device.draw_source
        game.save(update_fields=["draw_device", "draw_source"])
        audited = {
            "from_device": switch.from_device_id,
            "to_device": device.pk,
            "from_source": switch.from_source,
            "to_source": switch.to_source,
            "at_ordinal": switch.at_ordinal,
            "reason": reason,
        }
        shown = GameDeviceSwitched(
            **step(game),
            device=device.name,
            kind=device.kind,
            draw_source=device.draw_source,
            at_ordinal=switch.at_ordinal,
        )
        record(game, actor, EventType.GAME_DEVICE_SWITCHED, audited, shown)
        if device.draw_source == DrawSource.RNG:
            draw.schedule_next_ball(game)  # drawing: the RNG takes over from the next ordinal
    return switch
