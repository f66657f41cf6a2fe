"""Electronic bingo on the authority's feed (issue 29): the speciality's session opened with its
verification's checks, the game's commitment, its sales with their digest, each ball, each prize won with its
ball and its cards (the accumulated prize with its pool, and the pool's award and amounts), its end and the
session's totals; no player's name, document or card number anywhere."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from bingo.draws.models import DrawCommitment
from bingo.electronic.models import EBall, EGameState, ElectronicGame, Terminal, Verification
from bingo.electronic.services import games, specialities
from bingo.electronic.services import sessions as esessions
from halls.cashier.models import Player
from tests.bingo.electronic.support import (
    buy,
    enqueued,
    forced_balls,
    funded_card,
    make_speciality,
    make_terminal,
)
from tests.bingo.electronic.test_game_known_balls import BALLS, C1, C2, C3, C4, C5, C6, C7
from tests.feed.conftest import Feed

pytestmark = pytest.mark.django_db

LICENCE = "ML-B-0001"


def verified(speciality: Any, operator: Any) -> None:
    now = timezone.now()
    verification = Verification.objects.create(
        speciality=speciality,
        started_at=now,
        finished_at=now,
        passed=True,
        system_checks=[{"check": "terminals", "ok": True, "detail": ""}],
        rng_checks=[{"test": "chi_square", "ok": True, "statistic": "1.0", "detail": ""}],
        actor_label=operator.get_username(),
    )
    Terminal.objects.filter(speciality=speciality).update(verified_by=verification)


def play(feed: Feed, venue: Any, operator: Any, cashier: Any) -> tuple[ElectronicGame, list[list[int]], Any]:
    speciality = make_speciality(venue, operator)
    t1, _ = make_terminal(speciality, operator)
    t2, _ = make_terminal(speciality, operator)
    verified(speciality, operator)
    session = feed.run(esessions.open_session, speciality=speciality, actor=operator)
    p1, p2, p3 = (funded_card(venue, cashier) for _ in range(3))
    p2.player = Player.objects.create(
        venue=venue, name="Lucía Fernández Ruiz", id_document="12345678Z", created_at=timezone.now()
    )
    p2.save(update_fields=["player"])
    with enqueued():
        feed.run(games.set_running, speciality=speciality, running=True, actor=operator)
        game = speciality.games.get(number=1)
        _, (k1, k3, k5) = buy(game, t1, p1, [C1, C3, C5], "a")
        _, (k2, k4) = buy(game, t2, p2, [C2, C4], "b")
        _, (k6, k7) = buy(game, t1, p3, [C6, C7], "c")
        with forced_balls(BALLS):
            feed.run(games.close_sales, game, early=True)
            for ordinal in range(1, len(BALLS) + 1):
                feed.run(games.draw_ball, game.pk, ordinal)
        feed.run(games.set_running, speciality=speciality, running=False, actor=operator)
    game.refresh_from_db()
    session.refresh_from_db()
    feed.run(esessions.close_session, session=session, actor=operator)
    cards = [[k1.pk, k2.pk], [k3.pk], [k4.pk, k5.pk, k6.pk], [k2.pk, k7.pk]]
    return game, cards, [p1, p2, p3]


def of_game(feed: Feed, kind: str, name: str) -> list[dict[str, Any]]:
    return [m for m in feed.messages(kind) if m.get("game") == name]


def test_an_electronic_session_and_game_on_the_feed(
    feed: Feed, venue: Any, operator: Any, cashier: Any
) -> None:
    game, (line, corners, cross, bingo), _ = play(feed, venue, operator, cashier)
    assert game.state == EGameState.CLOSED and game.balls_drawn == len(BALLS)
    name = f"electronic-{game.pk}"
    room = game.speciality.room.name
    (opened,) = feed.messages("session.opened")
    assert {k: v for k, v in opened.items() if k != "opened_at"} == {
        "venue": LICENCE,
        "room": room,
        "session": str(game.session_id),
        "family": "electronic",
        "checks": [{"check": "terminals", "ok": True}, {"check": "chi_square", "ok": True}],
    }
    row = DrawCommitment.objects.get(room="electronic", game_ref=str(game.pk))
    (committed,) = of_game(feed, "game.committed", name)
    assert (committed["venue"], committed["room"], committed["commitment"]) == (LICENCE, room, row.commitment)
    (sold,) = of_game(feed, "game.sales", name)
    assert (sold["cards"], sold["sales"], sold["sales_digest"]) == (7, "3.50", row.sales_digest)
    balls = list(EBall.objects.filter(game=game).order_by("ordinal").values_list("ordinal", "number"))
    assert [(b["ordinal"], b["number"]) for b in of_game(feed, "game.ball", name)] == balls
    prizes = {p["prize"]: p for p in of_game(feed, "game.prize", name)}
    pool = specialities.pool_of(game.speciality, "acumulado").pool
    expected = {
        # code: (ordinal, cards, amount, pool)
        "linea": (9, line, "0.35", None),
        "esquinas": (13, corners, "1.00", None),
        "aspa": (18, cross, "2.00", None),
        "bingo": (29, bingo, "1.75", None),
        "acumulado": (29, bingo, "100.07", pool.code),
    }
    assert set(prizes) == set(expected)
    for code, (ordinal, cards, amount, from_pool) in expected.items():
        found = prizes[code]
        assert (found["ordinal"], sorted(found["cards"]), found["amount"], found["pool"]) == (
            ordinal,
            sorted(str(c) for c in cards),
            amount,
            from_pool,
        ), code
        assert found["where"] == LICENCE and found["venue"] == LICENCE
    (award,) = feed.messages("pool.award")
    assert award == {
        "venue": LICENCE,
        "pool": pool.code,
        "level": pool.levels.get(position=0).name,
        "amount": "100.06",
        "before": "100.07",
        "after": "100.00",
        "where": LICENCE,
    }
    after_award = feed.messages("pool.amounts")
    assert after_award and after_award[-1]["pools"][0]["pool"] == pool.code
    assert after_award[-1]["pools"][0]["family"] == "bingo"
    (ended,) = of_game(feed, "game.ended", name)
    assert (ended["state"], ended["balls"], ended["seed"]) == ("closed", len(BALLS), None)
    (closed,) = feed.messages("session.closed")
    assert (closed["games"], closed["sales"], closed["prizes"]) == (1, "3.50", "105.17")
    kinds = feed.kinds()
    assert kinds.index("game.committed") < kinds.index("game.sales") < kinds.index("game.ball")
    assert kinds.index("pool.award") < kinds.index("game.ended") < kinds.index("session.closed")
    # The last ball's step in the order it happened: the ball, its prizes, then the pool's award that paid
    # one of them (made during the payment, held until the ball was told), its amounts, the game's end.
    last_step = [
        (kind, payload.get("prize") or payload.get("ordinal"))
        for kind, payload in zip(kinds, feed.messages(), strict=True)
        if kind != "game.ball" or payload["ordinal"] == len(BALLS)
    ]
    start = last_step.index(("game.ball", len(BALLS)))
    assert [kind for kind, _ in last_step[start : start + 6]] == [
        "game.ball",
        "game.prize",
        "game.prize",
        "pool.award",
        "pool.amounts",
        "game.ended",
    ]


def test_no_player_identity_in_any_payload(feed: Feed, venue: Any, operator: Any, cashier: Any) -> None:
    _game, _cards, player_cards = play(feed, venue, operator, cashier)
    text = feed.text()
    assert feed.messages("game.prize")
    for secret in ("Lucía", "Fernández", "12345678Z", *(c.number for c in player_cards)):
        assert secret not in text, secret


def test_with_the_feed_off_an_electronic_game_writes_nothing(
    feed_off: Feed, venue: Any, operator: Any, cashier: Any
) -> None:
    game, _cards, _ = play(feed_off, venue, operator, cashier)
    assert game.state == EGameState.CLOSED
    assert feed_off.messages() == []
