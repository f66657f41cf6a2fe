"""What an electronic (or automatic) speciality's hall screens and player terminals acknowledged showing
(issue 28), read for the operator's watch (has every screen and terminal shown the current ball?) and the
inspector's game record (when each ball was shown on each, the gaps, and one ball on all of them for a claim
dispute). The same read model as the traditional rooms' (halls.services.acks); only the devices and the balls
are the speciality's: the screens of its room and its terminals, which all follow the room's stream."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from bingo.electronic.models import EBall, EGameState, ElectronicGame, Speciality, Terminal, TerminalState
from halls.eventtypes import EventType
from halls.models import DisplayAck
from halls.services import acks

FRAME = str(EventType.EGAME_BALL)  # the event that puts a ball of an electronic game on the glass


def devices(speciality: Speciality) -> list[tuple[str, int, str]]:
    """The room's active screens, then the speciality's terminals not out of service: (kind, id, name)."""
    terminals = [
        (DisplayAck.Kind.TERMINAL, pk, name)
        for pk, name in Terminal.objects.filter(speciality=speciality)
        .exclude(state=TerminalState.OUT_OF_SERVICE)
        .order_by("device__name", "pk")
        .values_list("pk", "device__name")
    ]
    return acks.room_screens(speciality.room) + terminals


def _drawn(game: ElectronicGame) -> list[acks.DrawnBall]:
    return [
        acks.DrawnBall(ordinal=o, ball=n, drawn_at=at)
        for o, n, at in EBall.objects.filter(game=game)
        .order_by("ordinal")
        .values_list("ordinal", "number", "drawn_at")
    ]


def game_devices(game: ElectronicGame) -> list[acks.ScreenRecord]:
    """Per screen and terminal (and any other device that acknowledged its balls), each ball's showing."""
    speciality = game.speciality
    return acks.ball_record(
        stream=speciality.stream,
        game=game.pk,
        frame=FRAME,
        drawn=_drawn(game),
        devices=devices(speciality),
    )


def ball_on_devices(game: ElectronicGame, number: int) -> list[tuple[acks.ScreenRecord, acks.BallShown]]:
    """A claim dispute ("my terminal never showed 43"): that ball on every screen and terminal. Empty when the
    ball was not drawn in the game."""
    return acks.ball_on(game_devices(game), number)


def operator_watch(speciality: Speciality, *, now: datetime | None = None) -> dict[str, Any]:
    """For the operator: the speciality's game drawing, its last ball, and whether each screen and terminal
    has shown it (`late` once HALL_ACK_LATE_SECONDS have passed without its ack)."""
    game = ElectronicGame.objects.filter(speciality=speciality, state=EGameState.DRAWING).first()
    last = EBall.objects.filter(game=game).order_by("-ordinal").first() if game else None
    return acks.watch(
        stream=speciality.stream,
        game=game.pk if game else None,
        frame=FRAME,
        last=acks.DrawnBall(ordinal=last.ordinal, ball=last.number, drawn_at=last.drawn_at) if last else None,
        devices=devices(speciality),
        now=now or timezone.now(),
    )
