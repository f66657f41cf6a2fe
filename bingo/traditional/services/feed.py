"""Traditional bingo's facts on the authority's feed (bingo.draws.feed says each message): a game's sales at
their close and its end (a game listener, bingo.traditional.hooks), each ball (the draw's append), each prize
confirmed (the claims' payment), and a session's close with its totals (halls.hooks' session listener). The
session's opening is halls' (halls.services.sessions), the commitment and the reveal bingo.draws'."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db.models import Sum
from django.utils import timezone

from bingo.draws import feed
from bingo.draws.models import DrawCommitment
from bingo.traditional import hooks
from bingo.traditional.models import Ball, ClaimKind, Game, GameProgram, GameState, PrizeResult
from bingo.traditional.services.commitments import ROOM, game_ref
from halls import hooks as hall_hooks
from halls.cashier.services import payables
from halls.feed.services import facts
from halls.feed.services import sessions as feed_sessions
from halls.models import GameSession, Room


def room_label(ref: str) -> str:
    """A traditional game's room as the venue names it."""
    found: str | None = Game.objects.filter(pk=int(ref)).values_list("room__name", flat=True).first()
    return found or ""


def _fed(game: Game) -> bool:
    """Whether the game's facts are this venue's messages: the feed on, and not a hall's copy of a network
    game (the central reports those)."""
    return facts.feed_on(game.room.venue_id) and not hooks.reported_elsewhere(game)


def _where(game: Game) -> dict[str, Any]:
    return {
        "venue_id": game.room.venue_id,
        "room": ROOM,
        "game_ref": game_ref(game.pk),
        "label": game.room.name,
    }


def sales_closed(game: Game) -> None:
    if not _fed(game):
        return
    feed.sales_closed(
        **_where(game),
        cards=game.cards_sold,
        sales=game.sales_total or Decimal(0),
        digest=feed_digest(game),
        closed_at=timezone.now(),
    )


def feed_digest(game: Game) -> str | None:
    """The sales digest of a committed game (fixed at the close of sales), None for one without commitment."""
    if not game.draw_commitment:
        return None
    digest: str | None = (
        DrawCommitment.objects.filter(room=ROOM, game_ref=game_ref(game.pk))
        .values_list("sales_digest", flat=True)
        .first()
    )
    return digest or None


def ball_drawn(game: Game, ball: Ball) -> None:
    if not _fed(game):
        return
    feed.ball(**_where(game), ordinal=ball.ordinal, number=ball.number, at=ball.drawn_at)


def prize_confirmed(game: Game, result: PrizeResult, cards: list[str]) -> None:
    if not _fed(game):
        return
    with payables.venue_language(game.room.venue_id):
        name = str(ClaimKind(result.kind).label)
    feed.prize(
        **_where(game),
        prize=result.kind,
        name=name,
        amount=result.amount,
        ordinal=result.ordinal,
        cards=cards,
        where=facts.licence(game.room.venue_id),
        at=result.confirmed_at,
    )


def programs_won(game: Game, cards: list[str]) -> None:
    """The prize programs won with the confirmed Bingo (paid from their pools: the pool's own award is on the
    feed as pool.award), each with its pool, the Bingo's ball and cards."""
    if not _fed(game):
        return
    won = (
        GameProgram.objects.filter(game=game, won=True, settlement__isnull=False)
        .select_related("program__pool", "settlement")
        .order_by("program_id")
    )
    for gp in won:
        program = gp.program
        feed.prize(
            **_where(game),
            prize=program.code,
            name=program.name,
            amount=(gp.share or Decimal(0)) * gp.winners,
            ordinal=gp.bingo_ordinal,
            cards=cards,
            pool=program.pool.code,
            where=facts.licence(game.room.venue_id),
            at=gp.settlement.created_at if gp.settlement is not None else None,
        )


def ended(game: Game) -> None:
    if not _fed(game):
        return
    feed.ended(
        **_where(game),
        void=game.state == GameState.VOID,
        balls=game.balls_drawn,
        at=game.closed_at or timezone.now(),
    )


def session_closed(session: GameSession, actor: object) -> None:
    """In the session's close: its totals over the games played to their end (void games sold nothing)."""
    room: Room = session.room
    if not facts.feed_on(room.venue_id):
        return
    played = Game.objects.filter(session=session, state=GameState.CLOSED)
    sales = played.aggregate(s=Sum("sales_total"))["s"] or Decimal(0)
    prizes = PrizeResult.objects.filter(game__in=played).aggregate(s=Sum("amount"))["s"] or Decimal(0)
    assert session.closed_at is not None
    feed_sessions.closed(
        venue_id=room.venue_id,
        room=room.name,
        session=str(session.pk),
        closed_at=session.closed_at,
        games=played.count(),
        sales=sales,
        prizes=prizes,
    )


LISTENER = hooks.GameListener(sales_closed=sales_closed, ended=ended)


def register() -> None:
    """At start-up (bingo.traditional.apps): the listeners and the room's label."""
    hooks.register_game_listener(LISTENER)
    hall_hooks.register_session_closed(session_closed)
    feed.register_room_label(ROOM, room_label)
