"""The electronic room's section of the hall screens: its snapshot (the game drawing with its balls and the
prizes decided, the next game's sales, the meters with max ball and information), nothing in a traditional
room, and the specialities' pools kept out of the pools' ribbon (the section shows them)."""

from __future__ import annotations

import pytest

from bingo.electronic.models import SpecialityPool
from bingo.electronic.services import games, screens
from halls import hooks
from jackpots.services.readmodels import screens as pool_screens
from tests.bingo.electronic.support import (
    buy,
    enqueued,
    forced_balls,
    funded_card,
    make_speciality,
    make_terminal,
    open_verified_session,
)
from tests.bingo.electronic.test_game_known_balls import BALLS, C1, C2, C7

pytestmark = pytest.mark.django_db


def test_a_traditional_room_has_no_electronic_section(room) -> None:
    assert screens.screen_snapshot(room) == {"speciality": None}
    assert "electronic" in {s.name for s in hooks.screen_sections()}


def test_the_snapshot_follows_the_draw_and_the_next_games_sales(venue, operator, cashier) -> None:
    speciality = make_speciality(venue, operator, code="SALA-E")
    terminal, _ = make_terminal(speciality, operator)
    open_verified_session(speciality, operator)
    card = funded_card(venue, cashier)
    with enqueued(), forced_balls(BALLS):
        games.set_running(speciality=speciality, running=True, actor=operator)
        game = speciality.games.get()
        before = screens.screen_snapshot(speciality.room)
        assert before["current"] is None and before["next"]["game"] == game.pk
        assert before["next"]["sales_closed"] is False and before["next"]["card_price"] == "0.50"
        buy(game, terminal, card, [C1, C2, C7], "k1")
        games.close_sales(game, early=True)
        for ordinal in range(1, 10):
            games.draw_ball(game.pk, ordinal)
        data = screens.screen_snapshot(speciality.room)
    assert data["speciality"]["code"] == "SALA-E" and data["speciality"]["max_number"] == 90
    current = data["current"]
    assert current["game"] == game.pk and current["state"] == "drawing" and current["cards"] == 3
    assert current["balls"] == BALLS[:9]
    assert [d["code"] for d in current["decided"]] == ["linea"]
    (line,) = current["decided"]
    assert line["won"] and line["winners"] == 2 and line["share"] == "0.07" and line["ordinal"] == 9
    # The accumulated prize as announced at the close (its meter), and its meter now with its terms.
    prizes = {p["code"]: p for p in current["prizes"]}
    assert prizes["acumulado"]["amount"] == "100.03" and prizes["acumulado"]["max_ball"] == 40
    assert prizes["linea"]["amount"] == "0.15"
    (meter,) = data["meters"]
    assert meter["code"] == "acumulado" and meter["max_ball"] == 40
    assert meter["info"] == "Bingo hasta la bola 40" and meter["amount"] == "100.03"


def test_speciality_pools_stay_out_of_the_pools_ribbon(venue, operator, room) -> None:
    speciality = make_speciality(venue, operator)
    pool_id = SpecialityPool.objects.get(speciality=speciality).pool_id
    assert pool_id in screens.pools_shown_elsewhere()
    shown = [p["id"] for p in pool_screens.screen_snapshot(room)["pools"]]
    assert pool_id not in shown
