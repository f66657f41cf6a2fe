"""What the room's screens acknowledged showing (issue 28), read for the caller's console (has every screen
shown the current ball?) and the inspector's game record (when each ball was shown on each screen, the
gaps, and one ball on every screen for a claim dispute). The acks themselves: halls.services.acks."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from bingo.traditional.models import Ball, Game, GameState
from halls.eventtypes import EventType
from halls.models import Room
from halls.services import acks

FRAME = str(EventType.BALL_DRAWN)  # the event that puts a ball of a traditional game on a screen


def _drawn(game: Game) -> list[acks.DrawnBall]:
    return [
        acks.DrawnBall(ordinal=o, ball=n, drawn_at=at)
        for o, n, at in Ball.objects.filter(game=game)
        .order_by("ordinal")
        .values_list("ordinal", "number", "drawn_at")
    ]


def game_screens(game: Game) -> list[acks.ScreenRecord]:
    """Per screen of the game's room (and any other that acknowledged its balls), each ball's showing."""
    return acks.ball_record(
        stream=game.room.stream,
        game=game.pk,
        frame=FRAME,
        drawn=_drawn(game),
        devices=acks.room_screens(game.room),
    )


def ball_on_screens(game: Game, number: int) -> list[dict[str, Any]]:
    """A claim dispute ("my screen never showed 43"): that ball on every screen, from the record. Empty when
    the ball was not drawn in the game."""
    return [
        {"screen": record.name, "device": record.device, "shown": shown}
        for record, shown in acks.ball_on(game_screens(game), number)
    ]


def console_screens(room: Room, *, now: datetime | None = None) -> dict[str, Any]:
    """For the caller's console: the room's game drawing, its last ball, and whether each screen has shown it
    (`late` once the setting's seconds have passed without its ack)."""
    game = (
        Game.objects.filter(room=room, state__in=[GameState.DRAWING, GameState.PAUSED])
        .select_related("room")
        .order_by("-pk")
        .first()
    )
    last = Ball.objects.filter(game=game).order_by("-ordinal").first() if game else None
    return acks.watch(
        stream=room.stream,
        game=game.pk if game else None,
        frame=FRAME,
        last=acks.DrawnBall(ordinal=last.ordinal, ball=last.number, drawn_at=last.drawn_at) if last else None,
        devices=acks.room_screens(room),
        now=now or timezone.now(),
    )
