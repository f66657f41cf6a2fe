"""Simultaneous bingo (SB-01, OP-19): after the last ball the central keeps the network game open for claims
until every hall with something left to win answered "no more" for ball 90 or the claim window is over,
so a hall running balls behind the central still has its Hall Bingo decided, not refused as not drawing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from bingo.network.simultaneous.models import HallGameState, NetworkGame, NetworkGameState
from bingo.network.simultaneous.services import central, venue
from halls.link.services import loopback
from tests.bingo.network.simultaneous.support import Net, draw, make_network, new_game
from tests.bingo.network.simultaneous.test_simultaneous_game import _to_the_draw

pytestmark = pytest.mark.django_db


@pytest.fixture
def net(db: None) -> Net:
    return make_network()


def _first_hall_won_at_ball_90(net: Net) -> NetworkGame:
    """All 90 balls drawn before any claim reaches the central; the first hall's Bingo is decided (its
    claim window over) while the other halls are still behind."""
    game = _to_the_draw(net, new_game(net))
    list(draw(game, 90))
    net.follow()
    one = net.halls[0]
    game_one = net.hall_game(one, game)
    assert venue.claim(hall_game=game_one, kind="bingo", serial=game_one.first_serial, actor=one.caller).valid
    loopback.deliver(venue_id=one.venue.pk)
    central.decide(game=game, actor="draw")  # the first claim's window is over
    game.refresh_from_db()
    assert set(game.prizes.values_list("kind", "scope")) == {("bingo", "network"), ("hall", one.licence)}
    assert game.state == NetworkGameState.DRAWING  # not closed: the other halls may still claim
    net.follow()
    return game


def test_a_late_hall_bingo_after_ball_90_and_another_halls_decision_is_decided(net: Net) -> None:
    game = _first_hall_won_at_ball_90(net)
    one, two, three = net.halls
    assert net.hall_game(one, game).state == HallGameState.CLOSED  # its own Bingo decided
    game_two = net.hall_game(two, game)
    made = venue.claim(hall_game=game_two, kind="bingo", serial=game_two.first_serial, actor=two.caller)
    assert made.valid
    venue.no_more_claims(hall_game=game_two, actor=two.caller)
    (claimed, answered) = loopback.deliver(venue_id=two.venue.pk)
    assert claimed.answer["status"] == "pending"  # taken, not refused as "not_drawing"
    assert answered.answer["decided"] is False  # the third hall has not answered for ball 90
    game.refresh_from_db()
    assert game.state == NetworkGameState.DRAWING
    # The third hall answers "no more" for ball 90 (the first, whose game closed, is not waited for).
    venue.no_more_claims(hall_game=net.hall_game(three, game), actor=three.caller)
    (answer,) = loopback.deliver(venue_id=three.venue.pk)
    assert answer.answer == {"decided": True, "state": NetworkGameState.CLOSED}
    game.refresh_from_db()
    assert set(game.prizes.values_list("kind", "scope")) == {
        ("bingo", "network"),
        ("hall", one.licence),
        ("hall", two.licence),
    }
    hall_prize = game.prizes.get(kind="hall", scope=two.licence)
    assert (hall_prize.winners, hall_prize.amount) == (1, game.hall_prize)
    net.follow()
    assert all(net.hall_game(h, game).state == HallGameState.CLOSED for h in net.halls)


def test_after_ball_90_the_game_closes_when_the_claim_window_is_over(
    net: Net, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = _first_hall_won_at_ball_90(net)
    enqueued: list[tuple[object, ...]] = []
    monkeypatch.setattr(central, "_enqueue_decision", lambda *args: enqueued.append(args))
    # Nobody else answers: the end step before the window is over leaves the game open ...
    with override_settings(HALL_SIMULTANEOUS_CLAIM_SECONDS=60):
        assert central.end_claim_window(game_id=game.pk, actor="draw") is False
        game.refresh_from_db()
        assert game.state == NetworkGameState.DRAWING
        assert central.reap_stalled() == []  # nothing stalled yet
        later = timezone.now() + timedelta(seconds=120)
        assert central.reap_stalled(later) == [(game.pk, "decision")]  # the lost end step again
        assert enqueued == [(game.pk, 0.0)]
    # ... and closes it once the window is over (the other halls' prizes stay undecided).
    with override_settings(HALL_SIMULTANEOUS_CLAIM_SECONDS=0):
        assert central.end_claim_window(game_id=game.pk, actor="draw") is True
    game.refresh_from_db()
    assert game.state == NetworkGameState.CLOSED
    assert game.prizes.filter(kind="hall").count() == 1
    net.follow()
    assert all(net.hall_game(h, game).state == HallGameState.CLOSED for h in net.halls)
