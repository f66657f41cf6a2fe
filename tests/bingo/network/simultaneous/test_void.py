"""Simultaneous bingo (SB-01): a network game whose sales closed with nothing sold in any hall is voided by
the central's operator (API) or by the deadline beat: audited in every member hall, the halls told on the
stream, their local games void, nothing drawn or paid; refusals are clear 4xx answers writing nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from bingo.network.simultaneous.models import HallGameState, NetworkGameState
from bingo.network.simultaneous.services import central, venue
from bingo.traditional.models import GameState
from halls.cashier.models import Payable
from halls.link.kinds import LinkKind
from halls.link.models import StreamEntry
from halls.models import AuditEntry
from tests.api_support import api_client, refused
from tests.bingo.network.simultaneous.support import Net, make_network, new_game

pytestmark = pytest.mark.django_db


@pytest.fixture
def net(db: None) -> Net:
    made = make_network()
    made.boss.is_staff = True
    made.boss.save(update_fields=["is_staff"])
    return made


def test_the_central_operator_voids_a_network_game_in_which_nothing_was_sold(net: Net) -> None:
    game = new_game(net)
    boss = api_client(net.boss)
    url = f"/api/simultaneous/games/{game.code}/void/"
    refused(boss.post(url), 409, "wrong_state", "on sale")  # still on sale: closed first
    central.close_sales(game=game, actor=net.boss)
    net.follow()
    refused(api_client(net.halls[0].operator).post(url), 403, "not_central_operator")
    refused(boss.post("/api/simultaneous/games/SB-NONE/void/"), 404, "unknown_network_game")
    answer = boss.post(url)
    assert answer.status_code == 200, answer.content
    assert (answer.json()["state"], answer.json()["cards_sold"]) == ("void", 0)
    refused(boss.post(url), 409, "wrong_state", "void")  # once
    refused(boss.post(f"/api/simultaneous/games/{game.code}/start/"), 409, "wrong_state")
    game.refresh_from_db()
    assert (game.state, game.balls_drawn) == (NetworkGameState.VOID, 0)
    voided = AuditEntry.objects.filter(action="simultaneous.voided")
    assert sorted(voided.values_list("venue_id", flat=True)) == sorted(h.venue.pk for h in net.halls)
    told = StreamEntry.objects.filter(stream=game.stream, kind=LinkKind.SB_GAME_CLOSED)
    assert [e.payload for e in told] == [{"game": game.code, "void": True}]
    net.follow()
    for hall in net.halls:
        hall_game = net.hall_game(hall, game)
        assert hall_game.state == HallGameState.CLOSED
        assert hall_game.game is not None and hall_game.game.state == GameState.VOID
    assert not Payable.objects.exists()  # nothing paid
    assert not game.prizes.exists()


def test_a_network_game_with_cards_sold_is_not_voided(net: Net) -> None:
    game = new_game(net)
    one = net.hall_game(net.halls[0], game)
    venue.sell(hall_game=one, first=one.first_serial, last=one.first_serial, actor=net.halls[0].cashier)
    net.sync()
    central.close_sales(game=game, actor=net.boss)
    refused(api_client(net.boss).post(f"/api/simultaneous/games/{game.code}/void/"), 409, "cards_sold", "1")
    game.refresh_from_db()
    assert game.state == NetworkGameState.SALES_CLOSED
    assert not AuditEntry.objects.filter(action="simultaneous.voided").exists()


def test_the_deadline_beat_voids_a_network_game_in_which_nothing_was_sold(net: Net) -> None:
    game = new_game(net)
    assert central.close_due_sales(timezone.now() + timedelta(minutes=11)) == [game.code]
    game.refresh_from_db()
    assert game.state == NetworkGameState.VOID
    assert AuditEntry.objects.filter(action="simultaneous.voided", actor_label="beat").count() == 3
    net.follow()
    assert all(net.hall_game(h, game).state == HallGameState.CLOSED for h in net.halls)
