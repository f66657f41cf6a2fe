"""A member hall's screens show the network's prizes as the central decided them, wherever they were won
(issue 26): the Line won in one hall shows won, with its ball and that hall, on every hall's screen, live
(the prize.awarded event) and in every snapshot after (a reload, a reconnect), and the hall's local game
knows its Line is won at that ball. A hall's own prize shows only in that hall."""

from __future__ import annotations

from typing import Any

import pytest

from bingo.network.simultaneous.models import NetworkGame
from bingo.network.simultaneous.services import central, venue
from bingo.traditional.services import readmodels
from halls import events
from halls.eventtypes import EventType
from halls.models import AuditEntry
from tests.bingo.network.simultaneous.support import Net, Script, card, draw, make_network, new_game

pytestmark = pytest.mark.django_db


@pytest.fixture
def net(db: None) -> Net:
    return make_network()


def _playing(net: Net) -> NetworkGame:
    game = new_game(net, price="1.00", percents=("10", "40", "10"))
    for hall, count in zip(net.halls, (6, 4, 2), strict=True):
        hall_game = net.hall_game(hall, game)
        venue.sell(
            hall_game=hall_game,
            first=hall_game.first_serial,
            last=hall_game.first_serial + count - 1,
            actor=hall.cashier,
        )
    net.sync()
    central.close_sales(game=game, actor=net.boss)
    central.start_draw(game=game, actor=net.boss)
    net.follow()
    net.sync()
    game.refresh_from_db()
    return game


def _screen_prizes(net: Net, n: int) -> list[dict[str, Any]]:
    snapshot = readmodels.screen_snapshot(net.halls[n].room)
    assert snapshot["game"] is not None
    return list(snapshot["game"]["prizes"])


def test_the_network_line_won_in_one_hall_shows_won_with_where_on_every_halls_screen(
    net: Net, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = _playing(net)
    one = net.halls[0]
    game_one = net.hall_game(one, game)
    serial = game_one.first_serial
    row = sorted(card(game_one, serial).row_numbers[0])
    monkeypatch.setattr(central, "_pick", Script(row))
    list(draw(game, len(row)))
    net.follow()
    claim = venue.claim(hall_game=game_one, kind="line", serial=serial, actor=one.caller)
    assert claim.valid
    net.sync()
    for n in range(3):  # before the central decides: open everywhere
        assert _screen_prizes(net, n) == []

    shown: list[tuple[str, dict[str, Any]]] = []
    emit = events.emit

    def spy(stream: str, type: EventType, data: Any) -> Any:
        if type == EventType.PRIZE_AWARDED:
            shown.append((stream, dict(data)))
        return emit(stream, type, data)

    monkeypatch.setattr(events, "emit", spy)
    (line,) = central.decide(game=game, actor=net.boss)
    assert (line.kind, line.ordinal) == ("line", len(row))
    net.follow()

    # Live: every hall's room stream heard the Line, the winning card with its hall's name.
    assert sorted(stream for stream, _ in shown) == sorted(h.room.stream for h in net.halls)
    for _stream, data in shown:
        assert (data["kind"], data["ordinal"]) == ("line", len(row))
        assert [(w["serial"], w["hall"]) for w in data["winners"]] == [(serial, one.venue.name)]
    # After a reload: each hall's snapshot has the Line won at its ball, in the first hall.
    for n, hall in enumerate(net.halls):
        (prize,) = _screen_prizes(net, n)
        assert (prize["kind"], prize["ordinal"], prize["amount"]) == ("line", len(row), line.amount)
        assert [(w["serial"], w["hall"]) for w in prize["winners"]] == [(serial, one.venue.name)]
        local = net.hall_game(hall, game).game
        assert local is not None
        local.refresh_from_db()
        assert local.line_won_at == len(row)
        # Applied once, audited in each hall.
        assert AuditEntry.objects.filter(venue=hall.venue, action=EventType.PRIZE_AWARDED.value).count() == 1


def test_a_halls_own_prize_shows_only_in_that_hall(net: Net, monkeypatch: pytest.MonkeyPatch) -> None:
    game = _playing(net)
    three = net.halls[2]
    game_three = net.hall_game(three, game)
    serial = game_three.first_serial
    numbers = sorted(card(game_three, serial).numbers)
    monkeypatch.setattr(central, "_pick", Script(numbers))
    list(draw(game, len(numbers)))
    net.follow()
    assert venue.claim(hall_game=game_three, kind="bingo", serial=serial, actor=three.caller).valid
    net.sync()
    decided = {(p.kind, p.scope) for p in central.decide(game=game, actor=net.boss)}
    assert {("bingo", "network"), ("hall", three.licence)} <= decided
    net.follow()
    kinds = {n: sorted(p["kind"] for p in _screen_prizes(net, n)) for n in range(3)}
    assert kinds[2] == ["bingo", "hall"]
    assert kinds[0] == kinds[1] == ["bingo"]
    (bingo,) = [p for p in _screen_prizes(net, 0) if p["kind"] == "bingo"]
    assert [(w["serial"], w["hall"]) for w in bingo["winners"]] == [(serial, three.venue.name)]
