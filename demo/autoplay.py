"""The demo's self-playing rooms: sell, draw, claim the winning cards and start again, through the same
services a caller and a cashier use. Only the rooms in demo.AutoplayRoom are touched."""

from __future__ import annotations

import secrets
from collections.abc import Collection
from datetime import timedelta
from decimal import Decimal

from django.contrib.auth.models import User
from django.db.models import Max
from django.utils import timezone

from bingo.traditional.models import CardSeries, DrawSource, Game, GameState, SoldCard
from bingo.traditional.services import claims, games, readmodels, sales, series
from bingo.traditional.services.readmodels import current_game
from demo.actors import autoplay_actor, robot_shift
from demo.models import AutoplayRoom
from halls.errors import DomainError
from halls.models import GameSession, Room
from halls.services import sessions

# How long a finished game's result stays up, and how long a winner is shown before the caller confirms.
RESULT_PAUSE = timedelta(seconds=8)
CONFIRM_PAUSE = timedelta(seconds=3)


def tick(room: Room) -> str:
    """One step of the room's autoplay; returns what it did (for logs and tests).

    Each service call is its own transaction, so a crash (a killed worker, a lost database) can leave a game
    between any two of them: scheduled, on sale, sales closed, or paused. Every tick takes the game from
    wherever it is to the draw (a draw that stalled is the reaper's), so a room never stops for good.
    """
    actor = autoplay_actor()
    if not GameSession.objects.filter(room=room, closed_at__isnull=True).exists():
        balls = list(range(1, 91))
        sessions.open_session(
            room=room, actor=actor, blower_ok=True, reserve_ok=True, reader_ok=True, inspection_balls=balls
        )
    game = current_game(room)
    now = timezone.now()
    if game is None or (
        game.state in (GameState.CLOSED, GameState.VOID) and now - (game.closed_at or now) > RESULT_PAUSE
    ):
        game = games.create_game(room=room, actor=actor, draw_source=DrawSource.RNG)
        _to_the_draw(game, actor)
        return f"started game {game.number}"
    if game.state in (GameState.SCHEDULED, GameState.ON_SALE, GameState.SALES_CLOSED):
        # Left there by a crash between two steps of an earlier tick.
        try:
            _to_the_draw(game, actor)
        except DomainError:
            return "waiting"  # another tick moved it on meanwhile
        return f"resumed game {game.number}"
    # A claim pauses the draw in its own transaction; a pause with no claim is a person's, and stays.
    if (
        game.state == GameState.PAUSED
        and game.claim_window
        and now - (game.last_ball_at or now) > CONFIRM_PAUSE
    ):
        claims.confirm_claims(game=game, kind=game.claim_window, actor=actor)
        return f"confirmed {game.claim_window} of game {game.number}"
    if game.state == GameState.DRAWING:
        return claim_winners(game)
    return "waiting"


def _to_the_draw(game: Game, actor: User) -> None:
    """From any state before the draw: open the sales, sell (unless some cards are sold already), close
    them and start the draw."""
    if game.state == GameState.SCHEDULED:
        game = games.open_sales(game=game, actor=actor)
    if game.state == GameState.ON_SALE:
        if not SoldCard.objects.filter(game=game).exists():
            _sell_some(game, actor)
        game = games.close_sales(game=game, actor=actor)
    if game.state == GameState.SALES_CLOSED:
        games.start_draw(game=game, actor=actor)


def claim_winners(game: Game) -> str:
    """Call every winning card, as players in the room would."""
    actor = autoplay_actor()
    found = readmodels.unclaimed_winners(game)
    filed = 0
    kinds = ["bingo"] if found["bingo"] else (["line"] if found["line"] else [])
    for kind in kinds:
        for row in found[kind]:
            try:
                claims.file_claim(
                    game=game,
                    kind=kind,
                    series_code=str(row["series"]),
                    serial=int(str(row["serial"])),
                    actor=actor,
                )
            except DomainError:
                continue  # the game moved on (another tick claimed it, or it closed): nothing to do
            filed += 1
    return f"filed {filed} claims" if filed else "drawing"


def _sell_some(game: Game, actor: User) -> None:
    """Sell two or three ranges of 20–60 cards, from a fresh demo series when the current one runs out, on
    the robot cashier's shift."""
    robot_shift(game.room.venue)
    for _ in range(2 + secrets.randbelow(2)):
        wanted = 20 + secrets.randbelow(41)
        card_series = _series_with_room(game, wanted, actor)
        last_sold = (
            SoldCard.objects.filter(card__series=card_series).aggregate(m=Max("card__serial"))["m"] or 0
        )
        sales.sell_range(
            game=game, series=card_series, first=last_sold + 1, last=last_sold + wanted, actor=actor
        )


def _series_with_room(game: Game, wanted: int, actor: User) -> CardSeries:
    venue = game.room.venue
    for candidate in CardSeries.objects.filter(venue=venue, code__startswith="AUTO-").order_by("pk"):
        last = SoldCard.objects.filter(card__series=candidate).aggregate(m=Max("card__serial"))["m"] or 0
        if last + wanted <= candidate.card_count:
            return candidate
    code = f"AUTO-{CardSeries.objects.filter(venue=venue).count() + 1:03d}"
    return series.create_series(venue=venue, code=code, face_value=Decimal("1.00"), strips=200, actor=actor)


def playing_rooms() -> list[Room]:
    return list(Room.objects.filter(pk__in=AutoplayRoom.objects.values("room_id")).order_by("pk"))


def playing_room_ids(room_ids: Collection[int]) -> set[int]:
    """Of ``room_ids``, the rooms that play by themselves (bingo.traditional.hooks: the console marks
    them)."""
    return set(AutoplayRoom.objects.filter(room_id__in=room_ids).values_list("room_id", flat=True))


def after_ball(game: Game) -> None:
    """After each ball of a self-playing room's game, its winning cards are claimed
    (bingo.traditional.hooks)."""
    if AutoplayRoom.objects.filter(room_id=game.room_id).exists():
        claim_winners(game)
