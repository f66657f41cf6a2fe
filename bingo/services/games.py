"""The game lifecycle: scheduled → on sale → sales closed → drawing ⇄ paused → closed, or void."""

from __future__ import annotations

from decimal import Decimal

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from bingo.announce import SeriesSales, contiguous_ranges, sales_formula
from bingo.models import BallSet, DrawSource, Game, GameState, SoldCard
from bingo.prizes import prize_from_sales
from bingo.services import console, detection, draw
from bingo.services.common import lock_game, record, transition
from bingo.services.programs import clock as program_clock
from bingo.services.programs import play as programs
from halls import events
from halls.actors import Actor
from halls.errors import Conflict, InvalidInput
from halls.models import GameSession, Room, Venue


def create_game(
    *,
    room: Room,
    actor: Actor,
    draw_source: str = DrawSource.RNG,
    pace_seconds: Decimal | None = None,
    ball_set: BallSet | None = None,
) -> Game:
    if draw_source not in DrawSource.values:
        raise InvalidInput(
            f"Unknown draw source {draw_source!r}: use one of {DrawSource.values}.", code="bad_source"
        )
    if ball_set is not None and ball_set.venue_id != room.venue_id:
        raise InvalidInput("The ball set belongs to another venue.", code="bad_ball_set")
    if pace_seconds is not None and pace_seconds < Decimal("0.05"):
        raise InvalidInput("The pace between balls is at least 0.05 s.", code="bad_pace")
    try:
        with transaction.atomic():
            Room.objects.select_for_update().get(pk=room.pk)
            session = GameSession.objects.filter(room=room, closed_at__isnull=True).first()
            if session is None:
                raise Conflict(
                    f"Room {room.name} has no open session: open one with its checks first.",
                    code="no_session",
                )
            number = (session.games.aggregate(n=Max("number"))["n"] or 0) + 1
            game = Game.objects.create(
                room=room,
                session=session,
                number=number,
                draw_source=draw_source,
                pace_seconds=pace_seconds or room.ball_pace_seconds,
                ball_set=ball_set or room.venue.ball_sets.order_by("pk").first(),
                line_percent=room.venue.line_percent,
                bingo_percent=room.venue.bingo_percent,
                created_at=timezone.now(),
            )
            record(game, actor, "game.created", {"draw_source": draw_source})
    except IntegrityError as exc:
        raise Conflict(f"Room {room.name} already has a game in play.", code="game_in_play") from exc
    return game


def open_sales(*, game: Game, actor: Actor) -> Game:
    with transaction.atomic():
        game = lock_game(game.pk)
        transition(game, game.open_sales, "open sales")
        game.save()
        record(game, actor, "game.sales_opened")
    return game


def sales_by_series(game: Game) -> list[SeriesSales]:
    rows = (
        SoldCard.objects.filter(game=game)
        .values_list("card__series__code", "card__series__face_value", "card__serial")
        .order_by("card__series__code", "card__serial")
    )
    grouped: dict[tuple[str, Decimal], list[int]] = {}
    for code, face_value, serial in rows:
        grouped.setdefault((code, face_value), []).append(serial)
    return [
        SeriesSales(series=code, face_value=face, ranges=contiguous_ranges(serials))
        for (code, face), serials in grouped.items()
    ]


def close_sales(*, game: Game, actor: Actor) -> Game:
    """Count the sales, fix the Line and Bingo prizes and announce them (spec §2.7 S5–S8)."""
    with transaction.atomic():
        game = lock_game(game.pk)
        transition(game, game.close_sales, "close sales")
        sold = sales_by_series(game)
        cards = sum(s.cards for s in sold)
        if cards == 0:
            raise Conflict(
                f"Game {game.number} has no cards sold: sell some or void it.", code="nothing_sold"
            )
        total = sum((s.face_value * s.cards for s in sold), Decimal("0"))
        line = prize_from_sales(total, game.line_percent)
        bingo = prize_from_sales(total, game.bingo_percent)
        game.cards_sold = cards
        game.sales_total = total
        game.line_prize = line.amount
        game.bingo_prize = bingo.amount
        game.prize_rounding_residue = line.residue + bingo.residue
        # The game's start for the scheduled prizes (fixed here: announced before the first ball, TB-41).
        game.sales_closed_at = program_clock.now()
        game.announcement = {
            "formula": sales_formula(sold),
            "series": [
                {
                    "series": s.series,
                    "face_value": str(s.face_value),
                    "cards": s.cards,
                    "ranges": [list(r) for r in s.ranges],
                }
                for s in sold
            ],
            "cards_sold": cards,
            "sales_total": str(total),
            "line_prize": str(line.amount),
            "bingo_prize": str(bingo.amount),
        }
        # Fund the prize programs and announce those in play, before the row says "sales closed" (the
        # pools' open-play guard looks for games in play; a version change in force now syncs its rate).
        game.announcement["programs"] = programs.sales_closed(game=game, actor=actor)
        game.save()
        # The sold set is frozen now: the winner detector's index is built once, here.
        detection.sales_closed(game)
        record(game, actor, "game.sales_closed", {"announcement": game.announcement})
    return game


def start_draw(*, game: Game, actor: Actor) -> Game:
    with transaction.atomic():
        game = lock_game(game.pk)
        transition(game, game.start_draw, "start the draw")
        game.draw_started_at = timezone.now()
        game.save()
        record(game, actor, "game.draw_started", {"draw_source": game.draw_source})
        draw.schedule_next_ball(game)
    return game


def pause_draw(*, game: Game, actor: Actor) -> Game:
    with transaction.atomic():
        game = lock_game(game.pk)
        transition(game, game.pause, "pause the draw")
        game.save()
        record(game, actor, "game.paused", {"by_claim": False})
    return game


def resume_draw(*, game: Game, actor: Actor) -> Game:
    with transaction.atomic():
        game = lock_game(game.pk)
        if game.claim_window:
            raise Conflict(
                f"Confirm the {game.claim_window} claims (any more {game.claim_window}s?) before resuming.",
                code="claims_pending",
            )
        transition(game, game.resume, "resume the draw")
        game.paused_by_claim = False
        game.save()
        record(game, actor, "game.resumed")
        draw.schedule_next_ball(game)
    return game


VOID_MESSAGE_MAX = 200


def void_game(*, game: Game, actor: Actor, reason: str, public_message: str = "") -> Game:
    """Void a live game. `reason` is internal (audit, recall, the caller's console); the room's screens
    get only `public_message`, the caller's words for the hall (none: the screens say the game is void)."""
    reason = reason.strip()
    message = " ".join(public_message.split())
    if not reason:
        raise InvalidInput(_("Voiding a game needs a reason."), code="reason_required")
    if len(message) > VOID_MESSAGE_MAX:
        raise InvalidInput(
            _("The message for the screens is at most %(max)s characters.") % {"max": VOID_MESSAGE_MAX},
            code="message_too_long",
        )
    with transaction.atomic():
        game = lock_game(game.pk)
        transition(game, game.void, "void it")
        game.void_reason = reason
        game.void_message = message
        game.closed_at = timezone.now()
        game.claim_window = ""
        game.save()
        record(
            game,
            actor,
            "game.voided",
            {"reason": reason, "message": message},
            public={"message": message},
        )
        # The caller's consoles hear the reason on the room's staff stream (the public one never has it).
        events.emit(
            console.staff_stream(game.room_id), "game.void_reason", {"game": game.pk, "reason": reason}
        )
    return game


def session_close_guard(session: GameSession) -> str | None:
    live = session.games.exclude(state__in=[GameState.CLOSED, GameState.VOID]).first()
    return f"game {live.number} is still {GameState(live.state).label.lower()}" if live else None


def between_games_guard(venue: Venue) -> str | None:
    """A venue's prize percentages change only with no game in play (halls.services.venues): a game copies
    them when it is created, so a scheduled one counts too."""
    live = (
        Game.objects.filter(room__venue=venue)
        .exclude(state__in=[GameState.CLOSED, GameState.VOID])
        .select_related("room")
        .order_by("pk")
        .first()
    )
    if live is None:
        return None
    return f"game {live.number} in {live.room.name} is still {GameState(live.state).label.lower()}"
