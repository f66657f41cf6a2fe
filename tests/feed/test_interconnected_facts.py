"""The interconnected prize on the authority's feed, at the venues (issue 29): when the central's decision
gives a hall winning cards, the hall's game that won says game.prize in the hall's own messages (its cards,
the sum of their shares, the decision's ball, the network pool's code, where: the hall), for a traditional
room's game and for an electronic speciality's Gran prize alike; a decision applied again says nothing
again; the central's pool.award stays the pool's own fact."""

from __future__ import annotations

from decimal import Decimal

import pytest

from bingo.network.interconnected.models import EGameRound, RoundGame
from bingo.network.interconnected.services import prizes
from tests.bingo.network.interconnected import gran_support, ib_support
from tests.bingo.traditional.game_support import fresh_process, no_celery  # noqa: F401 (autouse fixtures)
from tests.feed.conftest import Feed

pytestmark = pytest.mark.django_db


def test_a_traditional_rounds_shares_are_prizes_of_the_games_that_won_them(feed: Feed) -> None:
    halls = [ib_support.make_hall(n) for n in (1, 2, 3)]
    prize = ib_support.make_prize(ib_support.make_network(halls), halls)
    prizes.open_round(prize=prize, actor="central-operator")
    ib_support.follow()
    played = [ib_support.on_sale(hall) for hall in halls]
    for hall in halls:
        ib_support.deliver(hall)
    # Halls 1 and 2 bingo at ball 15 (card A-7 each), hall 3 at ball 20: 1 and 2 share the pool.
    ib_support.bingo_at(halls[0], played[0], serial=7, fillers=0)
    ib_support.bingo_at(halls[1], played[1], serial=7, fillers=0)
    ib_support.bingo_at(halls[2], played[2], serial=7, fillers=5)
    for hall in halls:
        ib_support.deliver(hall)
    feed.clear()
    feed.run(ib_support.follow)
    won = [p for p in feed.messages("game.prize") if p["prize"] == "IB1"]
    games = {row.venue.licence_number: row.game for row in RoundGame.objects.select_related("venue", "game")}
    assert won == [
        {
            "venue": licence,
            "room": games[licence].room.name,
            "game": f"traditional-{games[licence].pk}",
            "prize": "IB1",
            "name": won[0]["name"],
            "amount": "59.00",
            "ordinal": 15,
            "cards": ["A-0007"],
            "pool": prize.pool.code,
            "where": licence,
        }
        for licence in ("ML-B-0001", "ML-B-0002")
    ]
    assert won[0]["name"]  # the round's name, as the central announced it
    feed.clear()
    feed.run(ib_support.follow)  # the decision is applied once
    assert feed.messages("game.prize") == []


def test_an_electronic_gran_prize_is_a_prize_of_the_speciality_game_that_won_it(feed: Feed) -> None:
    halls = [gran_support.make_ehall(n) for n in (1, 2, 3)]
    gran = gran_support.make_gran(gran_support.make_network(halls), halls)
    gran_support.follow()
    played = [gran_support.sell(hall) for hall in halls]
    for p, at in zip(played, (6, 6, 8), strict=True):
        gran_support.play(p, gran_support.line_at(at))
    for hall in halls:
        gran_support.deliver(hall)
    feed.clear()
    feed.run(gran_support.follow)
    won = feed.messages("game.prize")
    rows = {r.venue.licence_number: r for r in EGameRound.objects.select_related("venue")}
    assert [(p["venue"], p["game"], p["prize"], p["ordinal"], p["where"]) for p in won] == [
        (licence, f"electronic-{rows[licence].game_id}", rows[licence].table_code, 6, licence)
        for licence in ("ML-B-0001", "ML-B-0002")
    ]
    assert [p["cards"] for p in won] == [[f"E-{played[0].a:04d}"], [f"E-{played[1].a:04d}"]]
    assert {p["amount"] for p in won} == {"50.30"} and {p["pool"] for p in won} == {gran.pool.code}
    assert sum(Decimal(p["amount"]) for p in won) == Decimal("100.60")  # the pool less its remainder
