"""The doors of simultaneous bingo: the central's operator runs the network game, each hall's staff place,
sell and claim; refusals answer the API's JSON errors and write nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from bingo.network.simultaneous.models import HallGame, NetworkClaim, NetworkGame
from bingo.network.simultaneous.services import central
from tests.api_support import api_client, refused
from tests.bingo.network.simultaneous.support import Net, make_network

pytestmark = pytest.mark.django_db


@pytest.fixture
def net(db: None) -> Net:
    made = make_network()
    made.boss.is_staff = True
    made.boss.save(update_fields=["is_staff"])
    return made


def test_a_network_game_through_the_doors(net: Net) -> None:
    boss = api_client(net.boss)
    body = {
        "network": "MEL",
        "code": "SB-API",
        "card_price": "2.00",
        "line_percent": "10",
        "bingo_percent": "40",
        "hall_percent": "10",
        "sales_deadline": (timezone.now() + timedelta(minutes=5)).isoformat(),
        "operation_id": "create-SB-API",
    }
    assert boss.post("/api/simultaneous/games/", body, format="json").status_code == 201
    assert boss.post("/api/simultaneous/games/", body, format="json").status_code == 200  # the same operation
    assert NetworkGame.objects.count() == 1
    halls = [{"hall": h.licence, "strips": 1} for h in net.halls]
    answer = boss.post("/api/simultaneous/games/SB-API/allocate/", {"halls": halls}, format="json")
    assert answer.status_code == 200, answer.content
    assert [h["first"] for h in answer.json()["halls"]] == [1, 7, 13]
    assert boss.post("/api/simultaneous/games/SB-API/open/").status_code == 200
    net.follow()
    one = net.halls[0]
    hall_game = HallGame.objects.get(venue=one.venue, code="SB-API")
    placed = api_client(one.operator).post(
        f"/api/simultaneous/hall-games/{hall_game.pk}/place/", {"room": one.room.pk}, format="json"
    )
    assert placed.status_code == 200, placed.content
    assert placed.json()["state"] == "selling"
    cashier = api_client(one.cashier)
    sold = cashier.post(
        f"/api/simultaneous/hall-games/{hall_game.pk}/sell/", {"first": 1, "last": 3}, format="json"
    )
    assert sold.status_code == 201 and sold.json()["amount"] == "6.00"
    refused(
        cashier.post(
            f"/api/simultaneous/hall-games/{hall_game.pk}/sell/", {"first": 7, "last": 7}, format="json"
        ),
        409,
        "card_not_allocated",
    )
    # Another hall's staff cannot touch this hall's game; a hall's staff cannot run the central.
    refused(
        api_client(net.halls[1].cashier).post(
            f"/api/simultaneous/hall-games/{hall_game.pk}/sell/", {"first": 2, "last": 2}, format="json"
        ),
        404,
        "unknown_network_game",
    )
    refused(
        api_client(one.operator).post("/api/simultaneous/games/SB-API/close/"), 403, "not_central_operator"
    )
    net.sync()
    assert boss.post("/api/simultaneous/games/SB-API/close/").json()["cards_sold"] == 3
    assert boss.post("/api/simultaneous/games/SB-API/start/").json()["state"] == "drawing"
    game = NetworkGame.objects.get(code="SB-API")
    central.draw_ball(game_id=game.pk, ordinal=1)
    net.follow()
    claim = api_client(one.caller).post(
        f"/api/simultaneous/hall-games/{hall_game.pk}/claims/", {"kind": "bingo", "serial": 1}, format="json"
    )
    assert claim.status_code == 201 and claim.json()["valid"] is False  # one ball: no bingo
    refused(
        api_client(one.caller).post(
            f"/api/simultaneous/hall-games/{hall_game.pk}/claims/",
            {"kind": "bingo", "serial": 8},
            format="json",
        ),
        409,
        "card_not_allocated",
    )
    assert not NetworkClaim.objects.exists()
    shown = boss.get("/api/simultaneous/games/SB-API/").json()
    assert len(shown["balls"]) == 1 and shown["prizes"]["bingo"] == "2.40"
