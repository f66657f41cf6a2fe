"""The caller console's live state: its snapshot, and the staff stream that carries what screens never see.

The console's socket delivers two streams, each numbered on its own (DESIGN §4):
- the room's public stream (``room.7``): balls, sales, claims, prizes, the game's steps, as screens get them;
- the room's staff stream (``room.7.staff``): the winning cards nobody has claimed (``console.unclaimed``),
  recomputed once per change, after the ball, claim or prize that changed them has committed.

A console loads ``console_snapshot`` (each stream's sequence number first, then the state), applies the
events that follow, and reloads the snapshot on a gap in either stream or a reconnect.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_save

from bingo.models import Ball, BallCorrection, Claim, Game, PrizeResult
from bingo.services import readmodels
from halls import events
from halls.models import Room, StreamCursor

log = logging.getLogger("hall.console")

UNCLAIMED_EVENT = "console.unclaimed"


def staff_stream(room_id: int) -> str:
    """The room's staff-only stream: what the caller's console sees beyond the public screens."""
    return f"room.{room_id}.staff"


def console_streams(room: Room) -> list[str]:
    return [room.stream, staff_stream(room.pk)]


def stream_seqs(room: Room) -> dict[str, int]:
    return {stream: events.current_seq(stream) for stream in console_streams(room)}


def console_snapshot(room: Room) -> dict[str, Any]:
    """The room, its current game as the caller sees it, and the sequence numbers read before them."""
    seqs = stream_seqs(room)  # first: an event committed meanwhile is then applied again, never missed
    game = readmodels.current_game(room)
    return {"streams": seqs, "room": room, "game": readmodels.caller_view(game) if game else None}


def publish_unclaimed(*, game_id: int, ordinal: int | None = None) -> events.Event | None:
    """Emit the game's unclaimed winners on the staff stream; None when there is nothing new to say.

    ``ordinal`` names the ball that asked for it: once a later ball is drawn, that ball's own request
    covers it, so a slow computation never queues behind itself.
    """
    game = Game.objects.select_related("room", "ball_set").filter(pk=game_id).first()
    if game is None or (ordinal is not None and game.balls_drawn != ordinal):
        return None
    stream = staff_stream(game.room_id)
    with transaction.atomic():
        # One publisher at a time per room: the later sequence number always carries the later list.
        StreamCursor.objects.get_or_create(stream=stream)
        StreamCursor.objects.select_for_update().get(stream=stream)
        game.refresh_from_db(fields=["state", "balls_drawn", "line_won_at", "claim_window"])
        return events.emit(stream, UNCLAIMED_EVENT, {"game": game.pk, **readmodels.unclaimed_view(game)})


# --- When to publish: after each ball, claim and prize, once its transaction has committed ---------------


def _request(game_id: int, ordinal: int | None) -> None:
    if not settings.HALL_CONSOLE_PUSH:
        return

    def send() -> None:
        from bingo.tasks import publish_console_unclaimed  # the door is looked up when used

        try:
            publish_console_unclaimed.delay(game_id, ordinal)
        except Exception:  # the console reloads its snapshot on reconnect: never fail the ball for this
            log.exception("could not ask for the unclaimed winners of game %s", game_id)

    transaction.on_commit(send)


def _ball_saved(sender: Any, instance: Ball, created: bool, **kwargs: Any) -> None:
    if created:
        _request(instance.game_id, instance.ordinal)


def _at_ball(instance: Claim | PrizeResult) -> int | None:
    """The ball the game is at, when the row was written with its (locked) game at hand; else None."""
    return instance.game.balls_drawn if type(instance).game.is_cached(instance) else None


def _claim_saved(sender: Any, instance: Claim, created: bool, **kwargs: Any) -> None:
    if created and instance.valid:
        _request(instance.game_id, _at_ball(instance))


def _prize_saved(sender: Any, instance: PrizeResult, created: bool, **kwargs: Any) -> None:
    if created:
        _request(instance.game_id, _at_ball(instance))


def _correction_saved(sender: Any, instance: BallCorrection, created: bool, **kwargs: Any) -> None:
    if created:
        _request(instance.game_id, None)  # the corrected ball changes the list whatever ball the game is at


def watch_games() -> None:
    """Connect the requests above (bingo's AppConfig.ready)."""
    post_save.connect(_ball_saved, sender=Ball, dispatch_uid="console-ball")
    post_save.connect(_claim_saved, sender=Claim, dispatch_uid="console-claim")
    post_save.connect(_prize_saved, sender=PrizeResult, dispatch_uid="console-prize")
    post_save.connect(_correction_saved, sender=BallCorrection, dispatch_uid="console-correction")
