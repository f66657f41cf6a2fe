"""The doors of interconnected bingo: the central's operator creates a prize and opens rounds, lists rounds
and decisions; a venue's operator names the room that plays the prize."""

from __future__ import annotations

import pytest
from django.test import Client

from bingo.network.interconnected.models import KnownRound
from bingo.network.interconnected.services import prizes
from halls.models import Role, Screen, StaffRole
from tests.api_support import api_client, refused
from tests.bingo.network.interconnected.ib_support import follow, make_hall, make_network, make_prize
from tests.bingo.traditional.game_support import fresh_process, no_celery  # noqa: F401 (autouse fixtures)
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


def test_create_a_prize_open_a_round_list_and_join_a_room() -> None:
    halls = [make_hall(n) for n in (1, 2)]
    network = make_network(halls)
    boss = make_user("network-operator")
    for hall in halls:
        StaffRole.objects.create(user=boss, venue=hall.venue, role=Role.OPERATOR)
    client = api_client(boss)
    body = {
        "network": network.code,
        "code": "IB1",
        "name": "Interconexionado",
        "percent": "10.00",
        "max_ball": 40,
        "seed": "100.00",
        "wait_seconds": 900,
        "authorisation_ref": "ML-IB-2026/1",
        "halls": [h.venue.licence_number for h in halls],
    }
    # An operator of one member hall only may not create it.
    refused(
        api_client(halls[0].operator).post("/api/network/prizes/", body, format="json"), 403, "role_required"
    )
    created = client.post("/api/network/prizes/", body, format="json")
    assert created.status_code == 201, created.content
    assert (created.json()["meter"], created.json()["halls"]) == ("100.00", ["ML-B-0001", "ML-B-0002"])
    refused(client.post("/api/network/prizes/", body, format="json"), 409, "prize_code_taken")

    opened = client.post("/api/network/prizes/IB1/rounds/", {}, format="json")
    assert opened.status_code == 201, opened.content
    assert [h["result"] for h in opened.json()["halls"]] == ["waiting", "waiting"]
    listed = api_client(halls[1].caller).get("/api/network/prizes/IB1/rounds/")
    assert [r["number"] for r in listed.json()] == [1]
    refused(api_client(halls[1].caller).post("/api/network/prizes/IB1/rounds/", {}), 403, "role_required")
    assert api_client(halls[0].caller).get("/api/network/prizes/").json()[0]["code"] == "IB1"

    joined = api_client(halls[0].operator).post(
        "/api/network/memberships/",
        {"room": halls[0].room.pk, "network": network.code, "prize": "IB1"},
        format="json",
    )
    assert joined.status_code == 201, joined.content
    refused(
        api_client(halls[1].operator).post(
            "/api/network/memberships/", {"room": halls[0].room.pk, "network": network.code, "prize": "IB1"}
        ),
        404,
        "unknown_room",
    )
    follow()
    assert KnownRound.objects.get().number == 1
    meters = api_client(halls[0].operator).get("/api/network/memberships/").json()
    assert [(m["prize"], m["meter"], m["max_ball"]) for m in meters] == [("IB1", "100.00", 40)]


def test_a_member_rooms_screen_shows_the_prize_block_and_its_meter(client: Client) -> None:
    halls = [make_hall(n) for n in (1, 2)]
    prize = make_prize(make_network(halls), halls)
    prizes.open_round(prize=prize, actor="central-operator")
    follow()
    screen = Screen.objects.create(venue=halls[0].venue, room=halls[0].room, name="Pantalla")
    page = client.get(f"/screens/{screen.token}/").content.decode()
    assert 'id="ib-prize"' in page
    assert "bingo_network/screen.js" in page
    sections = client.get(f"/screens/{screen.token}/snapshot/").json()["sections"]
    [shown] = sections["network"]["prizes"]
    assert (shown["prize"], shown["name"], shown["amount"], shown["max_ball"]) == (
        "IB1",
        "Interconexionado Melilla",
        "100.01",
        40,
    )
    assert not sections["jackpots"]["pools"]  # the network pool is the prize block's, not the ribbon's
