"""Simultaneous bingo's facts on the authority's feed, at the central (its own messages: venue null): a
network game is a session of its own (opened with its sales, closed at its end, family "simultaneous") and a
game ("simultaneous-<code>": its sales at their close, each ball, each prize decided with the halls where it
was won and the winning cards' serials, its end). The commitment and the reveal are bingo.draws'."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import Sum
from django.utils import timezone, translation

from bingo.draws import feed
from bingo.draws.models import DrawCommitment
from bingo.network.simultaneous.models import (
    HallGame,
    NetworkClaim,
    NetworkGame,
    NetworkGameState,
    NetworkPrize,
    PrizeKind,
)
from bingo.network.simultaneous.services.commitments import ROOM
from bingo.traditional import hooks as traditional_hooks
from bingo.traditional.models import DrawSource, Game
from halls.feed.services import facts
from halls.feed.services import sessions as feed_sessions
from halls.models import Network


def room_label(code: str) -> str:
    found: str | None = NetworkGame.objects.filter(code=code).values_list("network__code", flat=True).first()
    return found or ""


def _label(game: NetworkGame) -> str:
    code: str | None = Network.objects.filter(pk=game.network_id).values_list("code", flat=True).first()
    return code or ""


def _where(game: NetworkGame) -> dict[str, Any]:
    return {"venue_id": None, "room": ROOM, "game_ref": game.code, "label": _label(game)}


def sales_opened(game: NetworkGame, draw: DrawCommitment | None) -> None:
    """Its sales open: the session opens, and the draw's commitment (written by bingo.draws, not fed there:
    the halls' audit entries come first)."""
    if not facts.feed_on(None):
        return
    feed_sessions.opened(
        venue_id=None,
        room=_label(game),
        session=game.code,
        family="simultaneous",
        opened_at=timezone.now(),
        checks=[],
    )
    if draw is not None:
        feed.committed(draw)


def sales_closed(game: NetworkGame, digest: str | None) -> None:
    if not facts.feed_on(None):
        return
    feed.sales_closed(
        **_where(game), cards=game.cards_sold, sales=game.sales_total, digest=digest, closed_at=timezone.now()
    )


def ball(game: NetworkGame, ordinal: int, number: int, at: datetime) -> None:
    if not facts.feed_on(None):
        return
    feed.ball(**_where(game), ordinal=ordinal, number=number, at=at)


def prize(game: NetworkGame, prize: NetworkPrize, winners: Sequence[NetworkClaim]) -> None:
    """One message per hall where the prize was won: the whole prize when one hall won it, else each hall's
    cards and the shares they won."""
    if not facts.feed_on(None):
        return
    halls: dict[str, list[NetworkClaim]] = {}
    for claim in winners:
        halls.setdefault(claim.venue.licence_number, []).append(claim)
    with translation.override(settings.LANGUAGE_CODE):  # the central's language (a venue's: its own)
        name = str(PrizeKind(prize.kind).label)
    for hall, claims in sorted(halls.items()):
        amount = prize.amount if len(halls) == 1 else prize.share * len(claims)
        feed.prize(
            **_where(game),
            prize=prize.kind,
            name=name,
            amount=amount,
            ordinal=prize.ordinal,
            cards=[str(c.serial) for c in claims],
            where=hall,
            at=prize.decided_at,
        )


def ended(game: NetworkGame) -> None:
    """The game's end, and its session's close with its totals."""
    if not facts.feed_on(None):
        return
    now = timezone.now()
    void = game.state == NetworkGameState.VOID
    feed.ended(**_where(game), void=void, balls=game.balls_drawn, at=now)
    prizes = NetworkPrize.objects.filter(game=game).aggregate(s=Sum("amount"))["s"] or Decimal(0)
    feed_sessions.closed(
        venue_id=None,
        room=_label(game),
        session=game.code,
        closed_at=now,
        games=0 if void else 1,
        sales=Decimal(0) if void else game.sales_total,
        prizes=prizes,
    )


def hall_copy(game: Game) -> bool:
    """A hall's copy of a network game (drawn by hand from the central's balls): the central reports it."""
    return game.draw_source == DrawSource.MANUAL and HallGame.objects.filter(game_id=game.pk).exists()


def register() -> None:
    """At start-up (bingo.network.simultaneous.apps): the room's label; the halls' copies not fed twice."""
    feed.register_room_label(ROOM, room_label)
    traditional_hooks.register_reported_elsewhere(hall_copy)
