"""A hall's copy of a network game stays off the traditional commands; a lost draw step, decision or
entry application is resumed by the beat's tick."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from bingo.network.simultaneous import tasks
from bingo.network.simultaneous.models import HallEntry, NetworkGame
from bingo.network.simultaneous.services import central, venue
from bingo.traditional.models import Game
from bingo.traditional.services import claims, draw, sales
from halls.errors import Conflict
from tests.bingo.network.simultaneous.support import Net, make_network, new_game

pytestmark = pytest.mark.django_db


@pytest.fixture
def net(db: None) -> Net:
    return make_network()


def _drawing(net: Net, game: NetworkGame | None = None) -> NetworkGame:
    game = game or new_game(net)
    for hall in net.halls:
        hall_game = net.hall_game(hall, game)
        venue.sell(
            hall_game=hall_game,
            first=hall_game.first_serial,
            last=hall_game.first_serial + 1,
            actor=hall.cashier,
        )
    net.sync()
    central.close_sales(game=game, actor=net.boss)
    central.start_draw(game=game, actor=net.boss)
    net.follow()
    game.refresh_from_db()
    return game


def test_the_traditional_commands_are_refused_on_a_halls_network_game(net: Net) -> None:
    game = new_game(net)
    one = net.halls[0]
    hall_game = net.hall_game(one, game)
    assert hall_game.game is not None and hall_game.series is not None
    with pytest.raises(Conflict) as sold:
        sales.sell_range(game=hall_game.game, series=hall_game.series, first=1, last=1, actor=one.cashier)
    assert sold.value.code == "relayed_game"
    game = _drawing(net, game)
    local = Game.objects.get(pk=hall_game.game.pk)
    for refused in (
        lambda: draw.enter_ball(game=local, number=7, actor=one.caller),
        lambda: claims.file_claim(
            game=local, kind="bingo", series_code=hall_game.series.code, serial=1, actor=one.caller
        ),
        lambda: claims.confirm_claims(game=local, kind="bingo", actor=one.caller),
    ):
        with pytest.raises(Conflict) as caught:
            refused()
        assert caught.value.code == "relayed_game"


def test_a_lost_draw_step_or_decision_is_enqueued_again(net: Net, monkeypatch: pytest.MonkeyPatch) -> None:
    game = _drawing(net)
    enqueued: list[tuple[Any, ...]] = []
    monkeypatch.setattr(central, "_enqueue_ball", lambda *args: enqueued.append(("ball", *args)))
    monkeypatch.setattr(central, "_enqueue_decision", lambda *args: enqueued.append(("decision", *args)))
    assert central.reap_stalled() == []  # the first ball is not due yet
    later = timezone.now() + timedelta(minutes=1)
    assert central.reap_stalled(later) == [(game.pk, "ball")]
    assert enqueued == [("ball", game.pk, 1, 0.0)]
    # The task the reaper enqueued draws the ball; a duplicate of it draws nothing.
    assert tasks.draw_network_ball(game.pk, 1) is not None
    assert tasks.draw_network_ball(game.pk, 1) is None
    NetworkGame.objects.filter(pk=game.pk).update(claims_pending_since=timezone.now())
    assert central.reap_stalled(later) == [(game.pk, "decision")]
    assert tasks.decide_network_claims(game.pk) == 0  # nothing pending decided: the window closes
    game.refresh_from_db()
    assert game.claims_pending_since is None


def test_entries_a_hall_still_holds_are_applied_by_the_tick(net: Net) -> None:
    game = _drawing(net)
    central.draw_ball(game_id=game.pk, ordinal=1)
    from halls.link.services import loopback

    loopback.follow(stream=f"network.{net.network.code}")  # kept, not applied (its task was lost)
    assert HallEntry.objects.filter(applied_at__isnull=True).count() == 3
    HallEntry.objects.update(received_at=timezone.now() - timedelta(minutes=1))
    assert tasks.tick_network_games() == 3
    for hall in net.halls:
        assert net.hall_game(hall, game).balls and len(net.hall_game(hall, game).balls) == 1
