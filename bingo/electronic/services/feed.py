"""Electronic and automatic bingo's facts on the authority's feed (bingo.draws.feed says each message): a
speciality's session opened (with its verification's checks) and closed (with its totals), a game's sales at
their close, each ball, each prize won and its end. The commitment and the reveal are bingo.draws'. A
winning card is its id in the game's sales digest; who bought it never leaves the venue."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db.models import Sum

from bingo.draws import feed
from bingo.electronic.models import EGameState, ElectronicGame, ElectronicSession, EPrize, Speciality
from bingo.electronic.services.commitments import ROOM, ref
from halls.feed.services import emit, facts
from halls.feed.services import sessions as feed_sessions
from jackpots.models import Pool


def room_label(game_ref: str) -> str:
    found: str | None = (
        ElectronicGame.objects.filter(pk=int(game_ref))
        .values_list("speciality__room__name", flat=True)
        .first()
    )
    return found or ""


def _label(speciality: Speciality) -> str:
    return str(speciality.room.name)


def _where(game: ElectronicGame) -> dict[str, Any]:
    speciality = game.speciality
    return {
        "venue_id": speciality.venue_id,
        "room": ROOM,
        "game_ref": ref(game.pk),
        "label": _label(speciality),
    }


def session_opened(session: ElectronicSession) -> None:
    speciality = session.speciality
    if not facts.feed_on(speciality.venue_id):
        return
    verification = session.verification
    checks = [(str(c["check"]), bool(c["ok"])) for c in verification.system_checks]
    checks += [(str(c["test"]), bool(c["ok"])) for c in verification.rng_checks]
    feed_sessions.opened(
        venue_id=speciality.venue_id,
        room=_label(speciality),
        session=str(session.pk),
        family=speciality.family,
        opened_at=session.opened_at,
        checks=checks,
    )


def session_closed(session: ElectronicSession) -> None:
    """Its totals over the games closed so far (a game still playing after the close is reported as its own
    game.sales and game.prize)."""
    speciality = session.speciality
    if not facts.feed_on(speciality.venue_id):
        return
    assert session.closed_at is not None
    played = ElectronicGame.objects.filter(session=session, state=EGameState.CLOSED)
    sales = played.aggregate(s=Sum("sales_total"))["s"] or Decimal(0)
    prizes = EPrize.objects.filter(game__in=played, won=True).aggregate(s=Sum("amount"))["s"] or Decimal(0)
    feed_sessions.closed(
        venue_id=speciality.venue_id,
        room=_label(speciality),
        session=str(session.pk),
        closed_at=session.closed_at,
        games=played.count(),
        sales=sales,
        prizes=prizes,
    )


def sales_closed(game: ElectronicGame, digest: str | None, at: datetime) -> None:
    if not facts.feed_on(game.speciality.venue_id):
        return
    feed.sales_closed(
        **_where(game),
        cards=game.cards_sold,
        sales=game.sales_total,
        digest=digest,
        closed_at=at,
    )


def ball(game: ElectronicGame, ordinal: int, number: int, at: datetime) -> None:
    if not facts.feed_on(game.speciality.venue_id):
        return
    feed.ball(**_where(game), ordinal=ordinal, number=number, at=at)


def prize(game: ElectronicGame, row: EPrize, cards: Sequence[int], pool_id: int | None) -> None:
    """A prize won (one not won is no fact for the authority)."""
    venue_id = game.speciality.venue_id
    if not row.won or not facts.feed_on(venue_id):
        return
    pool = None
    if pool_id is not None:
        pool = Pool.objects.filter(pk=pool_id).values_list("code", flat=True).first()
    feed.prize(
        **_where(game),
        prize=row.code,
        name=row.name,
        amount=row.amount,
        ordinal=row.ordinal,
        cards=[str(card) for card in cards],
        pool=pool,
        where=facts.licence(venue_id),
        at=row.decided_at,
    )


def step(
    game: ElectronicGame,
    ordinal: int,
    number: int,
    at: datetime,
    prizes: Sequence[EPrize],
    winners: Mapping[int, Sequence[int]],
    *,
    over: bool,
    held: emit.Held,
) -> None:
    """A ball step's messages, in the order they happened: the ball, each prize it decided that was won, what
    its payment emitted (`held`: the pools' awards, the seed's reveal at the game's end), the game's end."""
    if not facts.feed_on(game.speciality.venue_id):
        held.release()  # nothing held when the feed is off: emit writes nothing then
        return
    with held.first():
        ball(game, ordinal, number, at)
        for i, row in enumerate(prizes):
            prize(game, row, winners.get(i, ()), row.pool_id)
    held.release()
    if over:
        ended(game, at)


def ended(game: ElectronicGame, at: datetime) -> None:
    if not facts.feed_on(game.speciality.venue_id):
        return
    feed.ended(**_where(game), void=game.state == EGameState.VOID, balls=game.balls_drawn, at=at)


def register() -> None:
    """At start-up (bingo.electronic.apps): the room's label."""
    feed.register_room_label(ROOM, room_label)
