"""Simultaneous bingo (SB-01, OP-19), what a network game of many halls needs: a hall makes only its own
run of the network series (checked equal to the central's faces), the claim window closes once every hall
with cards in play answered "¿alguna línea más? ¿algún bingo más?", a hall's game closes (its room free) at
its own Bingo, and a hall's count of its cards in play is reconciled with the central's, refunds of sales
the central never counted included, a difference recorded."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone
from hypothesis import given, settings
from hypothesis import strategies as st

from bingo import cardgen
from bingo.network.simultaneous.models import (
    HallGame,
    HallGameState,
    NetworkGame,
    NetworkGameState,
    Reconciliation,
)
from bingo.network.simultaneous.services import central, venue
from bingo.traditional.models import Card, CardSeries, Game, GameState
from bingo.traditional.services import games as bingo_games
from bingo.traditional.services.claims import card_label
from halls.errors import Conflict
from halls.link.services import loopback
from tests.api_support import api_client, refused
from tests.bingo.network.simultaneous.support import Net, Script, card, draw, make_network, new_game
from tests.bingo.network.simultaneous.test_simultaneous_game import _bingo_order, _to_the_draw

pytestmark = pytest.mark.django_db


@pytest.fixture
def net(db: None) -> Net:
    return make_network()


@settings(max_examples=15, deadline=None)
@given(
    seed=st.binary(min_size=1, max_size=16),
    total=st.integers(min_value=1, max_value=40),
    data=st.data(),
)
def test_a_run_of_strips_alone_is_those_strips_of_the_whole_series(seed: bytes, total: int, data) -> None:
    whole = cardgen.generate_series(seed, total)
    first = data.draw(st.integers(min_value=0, max_value=total - 1))
    count = data.draw(st.integers(min_value=1, max_value=total - first))
    part = cardgen.generate_strips(seed, first, count, whole.rederived)
    assert (part.grids == whole.grids[first * 6 : (first + count) * 6]).all()
    assert cardgen.faces_digest(part.keys()) == cardgen.faces_digest(
        whole.keys()[first * 6 : (first + count) * 6]
    )


def test_each_hall_makes_only_its_run_checked_against_the_centrals_faces(net: Net) -> None:
    game = new_game(net, strips=(2, 3, 1))
    for hall in net.halls:
        hall_game = net.hall_game(hall, game)
        assert hall_game.series is not None and hall_game.faces
        serials = list(
            Card.objects.filter(series=hall_game.series).order_by("serial").values_list("serial", flat=True)
        )
        assert serials == list(
            range(hall_game.first_serial, hall_game.last_serial + 1)
        )  # its run, nothing else
        for serial in serials:
            assert card(hall_game, serial) == central.master_card(game, serial)
        assert hall_game.series.card_count == 36  # the network series it is a share of
    # A hall whose cards would differ from the central's (a corrupt seed or run) places nothing.
    other = central.create_game(
        network=net.network,
        code="SB-2",
        card_price=Decimal("1.00"),
        line_percent=Decimal("10"),
        bingo_percent=Decimal("40"),
        hall_percent=Decimal("10"),
        sales_deadline=timezone.now() + timedelta(minutes=10),
        actor=net.boss,
        operation_id="op-SB-2",
    )
    central.allocate(game=other, strips=[(net.halls[0].licence, 1)], actor=net.boss)
    net.follow()
    tampered = HallGame.objects.get(code="SB-2")
    HallGame.objects.filter(pk=tampered.pk).update(faces="0" * 64)
    tampered.refresh_from_db()
    room = net.halls[0].room
    Game.objects.filter(room=room).update(state=GameState.CLOSED)  # SB-1's game out of the way
    games_before = Game.objects.filter(room=room).count()
    with pytest.raises(Conflict) as refused:
        venue.place(hall_game=tampered, room=room, actor=net.halls[0].operator)
    assert refused.value.code == "master_cards_differ"
    assert not CardSeries.objects.filter(code="SB-SB-2").exists()
    assert Game.objects.filter(room=room).count() == games_before
    tampered.refresh_from_db()
    assert tampered.game_id is None


def _claimed_bingo(net: Net, game: NetworkGame, monkeypatch: pytest.MonkeyPatch) -> HallGame:
    """The first hall's first card makes Bingo; its claim reaches the central (the draw waits)."""
    one = net.halls[0]
    game_one = net.hall_game(one, game)
    order = _bingo_order(card(game_one, game_one.first_serial).numbers)
    monkeypatch.setattr(central, "_pick", Script(order))
    list(draw(game, len(order)))
    net.follow()
    made = venue.claim(hall_game=game_one, kind="bingo", serial=game_one.first_serial, actor=one.caller)
    assert made.valid
    net.sync()
    game.refresh_from_db()
    assert game.claims_pending_since is not None
    return game_one


def test_the_claim_window_closes_once_every_hall_answered_no_more(
    net: Net, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = _to_the_draw(net, new_game(net))
    game_one = _claimed_bingo(net, game, monkeypatch)
    one, two, three = net.halls
    venue.no_more_claims(hall_game=game_one, actor=one.caller)
    venue.no_more_claims(hall_game=game_one, actor=one.caller)  # once per ball
    venue.no_more_claims(hall_game=net.hall_game(two, game), actor=two.caller)
    net.sync()
    game.refresh_from_db()
    assert game.claims_pending_since is not None  # the third hall has not answered: the window stays
    assert not game.prizes.exists()
    venue.no_more_claims(hall_game=net.hall_game(three, game), actor=three.caller)
    (answer,) = loopback.deliver(venue_id=three.venue.pk)
    assert answer.answer["decided"] is True
    game.refresh_from_db()
    assert game.claims_pending_since is None
    assert set(game.prizes.values_list("kind", "scope")) == {("bingo", "network"), ("hall", one.licence)}
    assert game.no_more_claims == {h.licence: game.balls_drawn for h in net.halls}

    # The first hall's Bingo is decided: its game closes and frees its room; the others play on.
    net.follow()
    game_one.refresh_from_db()
    assert game_one.state == HallGameState.CLOSED
    assert game_one.game is not None and game_one.game.state == GameState.CLOSED
    assert bingo_games.create_game(room=one.room, actor=one.caller).room_id == one.room.pk
    game.refresh_from_db()
    assert game.state == NetworkGameState.DRAWING
    assert net.hall_game(two, game).state == HallGameState.PLAYING
    # The same ball answered again: nothing more goes to the central.
    venue.no_more_claims(hall_game=net.hall_game(two, game), actor=two.caller)
    assert loopback.deliver(venue_id=two.venue.pk) == []


def test_every_halls_count_is_reconciled_with_the_centrals_refunds_and_differences_recorded(net: Net) -> None:
    game = new_game(net)
    one, two, three = net.halls
    for hall, count in zip(net.halls, (2, 2, 2), strict=True):
        hall_game = net.hall_game(hall, game)
        venue.sell(
            hall_game=hall_game,
            first=hall_game.first_serial,
            last=hall_game.first_serial + count - 1,
            actor=hall.cashier,
        )
    loopback.deliver(venue_id=one.venue.pk)
    loopback.deliver(venue_id=two.venue.pk)
    # The second hall takes one card back just before the deadline; the third hall's line is down: neither
    # report reaches the central before its close.
    game_two = net.hall_game(two, game)
    venue.return_cards(
        hall_game=game_two, first=game_two.first_serial + 1, last=game_two.first_serial + 1, actor=two.cashier
    )
    central.close_sales(game=game, actor=net.boss)
    net.sync()
    # The third hall refunds the cards the central never counted, then plays (with none: void).
    game_three = net.hall_game(three, game)
    assert game_three.state == HallGameState.RECONCILING
    venue.refund_unconfirmed(hall_game=game_three, actor=three.cashier)
    net.sync()
    rows = {r.venue_id: r for r in Reconciliation.objects.filter(game=game)}
    assert set(rows) == {one.venue.pk, two.venue.pk, three.venue.pk}
    first = game_three.first_serial
    assert (rows[three.venue.pk].hall_cards, rows[three.venue.pk].central_cards) == (0, 0)
    assert rows[three.venue.pk].refunded == [[first, first + 1]] and rows[three.venue.pk].agrees
    assert (rows[one.venue.pk].hall_cards, rows[one.venue.pk].agrees) == (2, True)
    # The second hall's late return: the central counted 2 cards (the prizes were fixed on them), the hall
    # plays 1. Recorded as a difference, both counts kept.
    assert (rows[two.venue.pk].hall_cards, rows[two.venue.pk].central_cards, rows[two.venue.pk].agrees) == (
        1,
        2,
        False,
    )
    assert rows[two.venue.pk].hall_amount == Decimal("1.00")
    # A repeated report counts once.
    loopback.deliver(venue_id=one.venue.pk)
    assert Reconciliation.objects.filter(game=game).count() == 3


def test_the_halls_page_of_the_network_game_and_the_console_links_to_it(
    net: Net, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = _to_the_draw(net, new_game(net))
    game_one = _claimed_bingo(net, game, monkeypatch)
    game_one.refresh_from_db()
    one, two, _three = net.halls
    page = f"/simultaneous/{game_one.pk}/"
    client = Client()
    client.force_login(one.caller)
    shown = client.get(page)
    assert shown.status_code == 200
    text = shown.content.decode()
    assert f"{game_one.first_serial}–{game_one.last_serial}" in text  # its allocated run
    assert 'id="sb-sold" data-cards="6"' in text  # what it sold
    assert 'data-state="playing"' in text
    assert f"{len(game_one.balls)} balls drawn" in text
    assert card_label(f"SB-{game.code}", game_one.first_serial) in text  # its claim
    assert 'data-valid="true"' in text
    assert 'id="sb-no-more"' in text  # the caller answers "any more?" from the page
    answered = client.post(f"{page}no-more-claims/")
    assert (answered.status_code, answered["Location"]) == (302, page)
    assert "told the central" in client.get(page).content.decode()
    index = client.get("/console/").content.decode()
    assert f'href="{page}"' in index and "Network game SB-1" in index
    room = client.get(f"/console/rooms/{one.room.pk}/").content.decode()
    assert f'href="{page}"' in room
    # Another hall's staff do not see it; its caller's answer door works through the API.
    other = Client()
    other.force_login(two.caller)
    assert other.get(page).status_code == 404
    door = f"/api/simultaneous/hall-games/{game_one.pk}/no-more-claims/"
    refused(api_client(one.cashier).post(door), 403, "role_required")
    through_api = api_client(one.caller).post(door)
    assert (through_api.status_code, through_api.json()["no_more_claims_at"]) == (200, len(game_one.balls))
