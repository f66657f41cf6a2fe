"""Simultaneous bingo on the authority's feed, at the central (issue 29): the network game is a session of
its own (family "simultaneous") and a game ("simultaneous-<code>"): its commitment, its network-wide sales
with their digest, each ball, each prize decided with the hall where it was won and the winning cards'
serials, its end and the session's totals; the central's own messages (venue null)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from bingo.draws.models import DrawCommitment
from bingo.network.simultaneous.models import NetworkBall, NetworkGame, NetworkGameState
from bingo.network.simultaneous.services import central, venue
from tests.bingo.network.simultaneous.support import Net, Script, card, draw, make_network, new_game
from tests.feed.conftest import Feed

pytestmark = pytest.mark.django_db


def central_messages(feed: Feed, kind: str) -> list[dict[str, Any]]:
    return [m for m in feed.messages(kind) if m["venue"] is None]


def play(net: Net, monkeypatch: pytest.MonkeyPatch) -> NetworkGame:
    """A network game sold in the first hall only (3 cards), drawn to its first card's Bingo, decided."""
    monkeypatch.setattr(central, "_enqueue_ball", None)
    monkeypatch.setattr(central, "_enqueue_decision", None)
    game = new_game(net, price="1.00", percents=("10", "45", "5"))
    one = net.halls[0]
    hall_game = net.hall_game(one, game)
    venue.sell(
        hall_game=hall_game, first=hall_game.first_serial, last=hall_game.first_serial + 2, actor=one.cashier
    )
    net.sync()
    central.close_sales(game=game, actor=net.boss)
    central.start_draw(game=game, actor=net.boss)
    net.follow()
    net.sync()
    numbers = sorted(card(hall_game, hall_game.first_serial).numbers)
    monkeypatch.setattr(central, "_pick", Script(numbers))
    list(draw(game, len(numbers)))
    net.follow()
    venue.claim(hall_game=hall_game, kind="bingo", serial=hall_game.first_serial, actor=one.caller)
    net.sync()
    central.decide(game=game, actor=net.boss)
    game.refresh_from_db()
    return game


def test_a_network_game_on_the_centrals_feed(feed: Feed, monkeypatch: pytest.MonkeyPatch) -> None:
    net = feed.run(make_network)
    game = feed.run(play, net, monkeypatch)
    assert game.state == NetworkGameState.CLOSED
    name = f"simultaneous-{game.code}"
    (opened,) = central_messages(feed, "session.opened")
    assert {k: v for k, v in opened.items() if k != "opened_at"} == {
        "venue": None,
        "room": "MEL",
        "session": game.code,
        "family": "simultaneous",
        "checks": [],
    }
    row = DrawCommitment.objects.get(room="simultaneous", game_ref=game.code)
    (committed,) = central_messages(feed, "game.committed")
    assert (committed["game"], committed["room"], committed["commitment"]) == (name, "MEL", row.commitment)
    (sold,) = central_messages(feed, "game.sales")
    assert (sold["game"], sold["cards"], sold["sales"], sold["sales_digest"]) == (
        name,
        3,
        "3.00",
        row.sales_digest,
    )
    balls = list(NetworkBall.objects.filter(game=game).order_by("ordinal").values_list("ordinal", "number"))
    assert [(b["ordinal"], b["number"]) for b in central_messages(feed, "game.ball")] == balls
    prizes = {p["prize"]: p for p in central_messages(feed, "game.prize")}
    one = net.halls[0]
    serial = str(net.hall_game(one, game).first_serial)
    assert prizes["bingo"] == {
        "venue": None,
        "room": "MEL",
        "game": name,
        "prize": "bingo",
        "name": "Network Bingo",
        "amount": "1.35",  # 45 % of 3.00
        "ordinal": len(balls),
        "cards": [serial],
        "pool": None,
        "where": one.licence,
    }
    assert (prizes["hall"]["amount"], prizes["hall"]["where"]) == ("0.15", one.licence)
    (ended,) = central_messages(feed, "game.ended")
    assert (ended["game"], ended["state"], ended["balls"]) == (name, "closed", len(balls))
    (closed,) = central_messages(feed, "session.closed")
    assert (closed["session"], closed["games"], closed["sales"], closed["prizes"]) == (
        game.code,
        1,
        "3.00",
        str(Decimal("1.35") + Decimal("0.15")),
    )
    # The halls' copies of the network game are not fed again by the halls: the central's messages say it.
    for kind in ("game.sales", "game.ball", "game.prize", "game.ended"):
        assert [m for m in feed.messages(kind) if m["venue"] is not None] == [], kind
    # ... while each hall's own session (its room, where the copy is played) is the hall's.
    assert {m["venue"] for m in feed.messages("session.opened")} == {None, *(h.licence for h in net.halls)}


def test_with_the_central_feed_off_its_network_game_writes_nothing(
    feed_off: Feed, monkeypatch: pytest.MonkeyPatch
) -> None:
    net = feed_off.run(make_network)
    game = feed_off.run(play, net, monkeypatch)
    assert game.state == NetworkGameState.CLOSED
    assert feed_off.messages() == []
