"""Traditional bingo on the authority's feed (issue 29): the session opened with its checks, a game's
sales, each ball, each prize with its ball, cards and venue, the game's end and the session's close with its
totals, each written with its fact and matching its kind's schema; an RNG game's commitment and its seed's
reveal; nothing when the fact rolls back or the feed is off; no player's identity in any payload."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest
from django.db import transaction

from bingo.draws.models import DrawCommitment
from bingo.traditional.models import Card, DrawSource, Game
from bingo.traditional.services import claims, commitments, draw, games, sales
from halls.errors import Conflict
from halls.feed.kinds import FeedKind
from halls.feed.schema import SchemaError
from halls.feed.services.emit import emit
from halls.services import sessions
from tests.bingo.traditional.game_support import fresh_process, grid, no_celery, rng_game  # noqa: F401
from tests.conftest import ALL_BALLS
from tests.feed.conftest import Feed

pytestmark = pytest.mark.django_db

LICENCE = "ML-B-0001"


def stamped(payload: dict[str, Any], *fields: str) -> dict[str, Any]:
    """The payload without its time fields, each checked to be an ISO time with its offset."""
    for name in fields:
        assert datetime.fromisoformat(payload[name]).utcoffset() is not None, payload[name]
    return {k: v for k, v in payload.items() if k not in fields}


def play_manual_game(feed: Feed, room: Any, caller: Any, cashier: Any, series: Any) -> Game:
    """Open the room's session, play a blower's game of 30 cards sold to card 7's Line and Bingo, close."""
    feed.run(
        sessions.open_session,
        room=room,
        actor=caller,
        blower_ok=True,
        reserve_ok=True,
        reader_ok=True,
        inspection_balls=ALL_BALLS,
    )
    game = feed.run(games.create_game, room=room, actor=caller, draw_source=DrawSource.MANUAL)
    feed.run(games.open_sales, game=game, actor=caller)
    feed.run(sales.sell_range, game=game, series=series, first=1, last=30, actor=cashier)
    game = feed.run(games.close_sales, game=game, actor=caller)
    feed.run(games.start_draw, game=game, actor=caller)
    card = grid(series, 7)
    top = sorted(n for n in card.rows[0] if n)
    for number in top:
        feed.run(draw.enter_ball, game=game, number=number, actor=caller)
    feed.run(claims.file_claim, game=game, kind="line", series_code="A", serial=7, actor=caller)
    feed.run(claims.confirm_claims, game=game, kind="line", actor=caller)
    for number in sorted(card.numbers - set(top)):
        feed.run(draw.enter_ball, game=game, number=number, actor=caller)
    feed.run(claims.file_claim, game=game, kind="bingo", series_code="A", serial=7, actor=caller)
    feed.run(claims.confirm_claims, game=game, kind="bingo", actor=caller)
    game.refresh_from_db()
    feed.run(sessions.close_session, session=game.session, actor=caller)
    return game


def test_a_session_and_its_game_write_each_fact_once_in_order(
    feed: Feed, room: Any, caller: Any, cashier: Any, card_series: Any, ball_set: Any
) -> None:
    game = play_manual_game(feed, room, caller, cashier, card_series)
    name = f"traditional-{game.pk}"
    balls = list(game.balls.order_by("ordinal").values_list("ordinal", "number"))
    assert feed.kinds() == [
        "session.opened",
        "game.sales",
        *["game.ball"] * 5,
        "game.prize",
        *["game.ball"] * (len(balls) - 5),
        "game.prize",
        "game.ended",
        "session.closed",
    ]
    (opened,) = feed.messages("session.opened")
    assert stamped(opened, "opened_at") == {
        "venue": LICENCE,
        "room": "Sala 1",
        "session": str(game.session_id),
        "family": "traditional",
        "checks": [
            {"check": "blower", "ok": True},
            {"check": "reserve", "ok": True},
            {"check": "reader", "ok": True},
            {"check": "inspection", "ok": True},
        ],
    }
    (sold,) = feed.messages("game.sales")
    assert stamped(sold, "closed_at") == {
        "venue": LICENCE,
        "room": "Sala 1",
        "game": name,
        "cards": 30,
        "sales": "60.00",
        "sales_digest": None,  # a blower's game commits nothing
    }
    shown = [(b["ordinal"], b["number"]) for b in feed.messages("game.ball")]
    assert shown == balls
    assert all(b["game"] == name and b["venue"] == LICENCE for b in feed.messages("game.ball"))
    line, bingo = feed.messages("game.prize")
    assert line == {
        "venue": LICENCE,
        "room": "Sala 1",
        "game": name,
        "prize": "line",
        "name": "Línea",  # in the venue's language
        "amount": "6.00",
        "ordinal": 5,
        "cards": ["A-0007"],
        "pool": None,
        "where": LICENCE,
    }
    assert bingo == {**line, "prize": "bingo", "name": "Bingo", "amount": "30.00", "ordinal": len(balls)}
    (ended,) = feed.messages("game.ended")
    assert ended == {
        "venue": LICENCE,
        "room": "Sala 1",
        "game": name,
        "state": "closed",
        "balls": len(balls),
        "seed": None,
    }
    (closed,) = feed.messages("session.closed")
    assert stamped(closed, "closed_at") == {
        "venue": LICENCE,
        "room": "Sala 1",
        "session": str(game.session_id),
        "games": 1,
        "sales": "60.00",
        "prizes": "36.00",
    }


def test_an_rng_game_writes_its_commitment_its_digest_and_its_seed_once_revealed(
    feed: Feed,
    session: Any,
    room: Any,
    caller: Any,
    cashier: Any,
    card_series: Any,
    ball_set: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reveals: list[int] = []
    monkeypatch.setattr(commitments, "_enqueue_reveal", reveals.append)
    game = feed.run(rng_game, room, session, caller, cashier, card_series, pace="0.5", last=12)
    row = DrawCommitment.objects.get(room="traditional", game_ref=str(game.pk))
    (committed,) = feed.messages("game.committed")
    assert stamped(committed, "committed_at") == {
        "venue": LICENCE,
        "room": "Sala 1",
        "game": f"traditional-{game.pk}",
        "commitment": row.commitment,
    }
    (sold,) = feed.messages("game.sales")
    assert (sold["cards"], sold["sales"], sold["sales_digest"]) == (12, "24.00", row.sales_digest)
    feed.run(games.start_draw, game=game, actor=caller)
    for ordinal in (1, 2, 3):
        feed.run(draw.draw_rng_ball, game_id=game.pk, ordinal=ordinal)
    feed.run(games.void_game, game=Game.objects.get(pk=game.pk), actor=caller, reason="test over")
    (ended,) = feed.messages("game.ended")
    assert (ended["state"], ended["balls"], ended["seed"]) == ("void", 3, None)
    assert feed.messages("game.revealed") == []
    feed.run(commitments.reveal, game_id=game.pk, actor="rng")  # the worker's task
    feed.run(commitments.reveal, game_id=game.pk, actor="rng")  # a second reveal changes nothing
    row.refresh_from_db()
    (revealed,) = feed.messages("game.revealed")
    assert stamped(revealed, "revealed_at") == {
        "venue": LICENCE,
        "room": "Sala 1",
        "game": f"traditional-{game.pk}",
        "commitment": row.commitment,
        "seed": row.seed,
    }


def test_a_fact_that_rolls_back_writes_nothing(feed: Feed, drawing_game: Game, caller: Any) -> None:
    feed.rolled_back(draw.enter_ball, game=drawing_game, number=5, actor=caller)
    assert feed.messages() == []
    feed.run(draw.enter_ball, game=drawing_game, number=5, actor=caller)
    with pytest.raises(Conflict):  # refused: nothing more written
        feed.run(draw.enter_ball, game=drawing_game, number=5, actor=caller)
    assert [(m["ordinal"], m["number"]) for m in feed.messages("game.ball")] == [(1, 5)]


def test_with_the_feed_off_nothing_is_written(
    feed_off: Feed, room: Any, caller: Any, cashier: Any, card_series: Any, ball_set: Any
) -> None:
    game = play_manual_game(feed_off, room, caller, cashier, card_series)
    assert game.balls.exists()
    assert feed_off.messages() == []


@pytest.mark.parametrize(
    ("default", "overrides", "written"),
    [
        (False, {"ML": {"enabled": True}}, True),
        (True, {"ML": {"enabled": False}}, False),
        (False, {"CT": {"enabled": True}}, False),
    ],
)
def test_the_feed_is_switched_per_jurisdiction(
    feed: Feed, settings: Any, drawing_game: Game, caller: Any, default: bool, overrides: Any, written: bool
) -> None:
    settings.HALL_FEED_ENABLED = default
    settings.HALL_FEED_BY_JURISDICTION = overrides
    feed.run(draw.enter_ball, game=drawing_game, number=5, actor=caller)
    assert len(feed.messages("game.ball")) == (1 if written else 0)


def test_a_payload_its_schema_refuses_is_a_bug_raised_before_anything_is_written(
    feed: Feed, venue: Any
) -> None:
    def bad() -> None:
        with transaction.atomic():
            emit(FeedKind.GAME_BALL, {"venue": venue.licence_number, "number": 91}, venue_id=venue.pk)

    with pytest.raises(SchemaError) as refused:
        feed.run(bad)
    assert refused.value.where == "$"
    assert feed.messages() == []


def test_a_card_is_named_by_its_series_and_serial_never_by_who_bought_it(
    feed: Feed, room: Any, caller: Any, cashier: Any, card_series: Any, ball_set: Any
) -> None:
    play_manual_game(feed, room, caller, cashier, card_series)
    text = feed.text()
    assert "A-0007" in text
    for who in ("cashier", "caller", str(cashier.pk)):
        assert f'"{who}"' not in text
    assert Card.objects.filter(series=card_series, serial=7).exists()
    assert Decimal(feed.messages("session.closed")[0]["prizes"]) == Decimal("36.00")
