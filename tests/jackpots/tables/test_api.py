"""The casino-table REST doors and console page: a whole hand through the API, refusals with their codes
and nothing written, venue scoping and roles, the schema."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from rest_framework.test import APIClient

from halls.models import Role
from jackpots.tables.models import Hand, SeatBet, SeatCards
from tests.api_support import api_client, refused
from tests.jackpots.tables.conftest import make_table, make_user, nothing_written

D = Decimal
SF_K, SF_8 = "KS QS JS TS 9S", "8H 7H 6H 5H 4H"


@pytest.fixture
def house(casino):
    return casino("AN10")


@pytest.fixture
def table(house):
    return house.table("AN10_PSD_CARRUSEL")


@pytest.fixture
def croupier_api(house) -> APIClient:
    return api_client(house.croupier)


def open_hand(client: APIClient, table, key: str | None = None) -> dict[str, Any]:
    answer = client.post(
        f"/api/tables/{table.pk}/hands/", {"idempotency_key": key} if key else {}, format="json"
    )
    assert answer.status_code == 201, answer.content
    body: dict[str, Any] = answer.json()
    return body


def bets(client: APIClient, hand_id: int, *seats: int, pool_bet: str = "1.00", initial: str = "10.00"):
    body = {"bets": [{"seat": s, "initial_bet": initial, "pool_bet": pool_bet} for s in seats]}
    return client.post(f"/api/hands/{hand_id}/bets/", body, format="json")


def cards(client: APIClient, hand_id: int, **by_seat: str):
    body = {"seats": [{"seat": int(seat.lstrip("s")), "cards": text} for seat, text in by_seat.items()]}
    return client.post(f"/api/hands/{hand_id}/cards/", body, format="json")


def test_a_whole_hand_through_the_api(croupier_api, table) -> None:
    listed = croupier_api.get("/api/tables/").json()
    assert [(t["id"], t["meter"]["amount"], t["open_hand"]) for t in listed] == [(table.pk, "10000.00", None)]

    hand = open_hand(croupier_api, table, key="console-abc")
    assert (hand["number"], hand["state"], hand["seats"]) == (1, "open", [])
    again = croupier_api.post(
        f"/api/tables/{table.pk}/hands/", {"idempotency_key": "console-abc"}, format="json"
    )
    assert (again.status_code, again.json()["id"]) == (200, hand["id"])

    answer = bets(croupier_api, hand["id"], 1, 4)
    assert answer.status_code == 200, answer.content
    assert answer.json()["pool_bets"] == "2.00"
    answer = cards(croupier_api, hand["id"], s1=SF_8, s4=SF_K)
    assert answer.status_code == 200, answer.content
    ranks = {s["seat"]: s["rank"] for s in answer.json()["seats"]}
    assert ranks == {1: "straight flush (8)", 4: "straight flush (K)"}

    settled = croupier_api.post(f"/api/hands/{hand['id']}/settle/")
    assert settled.status_code == 200, settled.content
    body = settled.json()
    assert body["state"] == "settled"
    assert [(s["seat"], s["payout"], s["payout_order"]) for s in body["seats"]] == [
        (1, "900.00", 1),
        (4, "1000.00", 0),
    ]
    assert (body["total_paid"], body["meter_before"], body["meter_after_payouts"]) == (
        "1900.00",
        "10000.000000",
        "8100.000000",
    )

    detail = croupier_api.get(f"/api/tables/{table.pk}/").json()
    assert detail["meter"]["amount"] == "8100.00"
    assert detail["meter"]["last_hits"][0]["amount"] == "900.00"
    assert detail["current_hand"]["id"] == hand["id"]
    assert detail["rules"]["code"] == "AN10_PSD_CARRUSEL"
    assert detail["rules"]["requires_initial_bet"] is True
    four = {
        "category": "four_of_a_kind",
        "prize": "300 × the bet",
        "prize_kind": "multiple",  # the prize as data, said in the console's language
        "prize_value": "300",
        "ties": "share_one",
    }
    assert four in detail["rules"]["paytable"]

    with nothing_written():
        twice = croupier_api.post(f"/api/hands/{hand['id']}/settle/")
    refused(twice, 409, "hand_settled", "settled")


def test_bad_input_answers_4xx_with_its_code_and_writes_nothing(croupier_api, house, table) -> None:
    hand = open_hand(croupier_api, table)
    assert bets(croupier_api, hand["id"], 1).status_code == 200
    assert cards(croupier_api, hand["id"], s1=SF_8).status_code == 200
    hand_id = hand["id"]
    cases: list[tuple[Callable[[], Any], int, str, tuple[str, ...]]] = [
        (lambda: croupier_api.post("/api/tables/999999/hands/"), 404, "unknown_table", ()),
        (lambda: croupier_api.post("/api/hands/999999/settle/"), 404, "unknown_hand", ()),
        (lambda: bets(croupier_api, hand_id, 9), 400, "unknown_seat", ("seat 9",)),
        (lambda: bets(croupier_api, hand_id, 2, pool_bet="abc"), 400, "invalid", ("pool_bet",)),
        (lambda: bets(croupier_api, hand_id, 2, initial="0"), 400, "initial_bet_required", ()),
        (lambda: bets(croupier_api, hand_id, 2, pool_bet="2.00"), 400, "pool_bet_not_stipulated", ()),
        (lambda: bets(croupier_api, hand_id, 2), 409, "bets_closed", ()),
        (lambda: cards(croupier_api, hand_id, s1=SF_K), 409, "cards_already_registered", ()),
        (lambda: cards(croupier_api, hand_id, s2=SF_K), 409, "no_pool_bet", ()),
        (lambda: cards(croupier_api, hand_id, s1="ZZ KS QS JS TS"), 400, "invalid_cards", ("ZZ",)),
        (lambda: cards(croupier_api, hand_id, s9=SF_K), 400, "unknown_seat", ()),
        (lambda: croupier_api.post(f"/api/hands/{hand_id}/cards/", {}, format="json"), 400, "no_cards", ()),
        (lambda: croupier_api.post(f"/api/hands/{hand_id}/bets/", {}, format="json"), 400, "no_bets", ()),
        (
            lambda: croupier_api.post(f"/api/hands/{hand_id}/void/", {}, format="json"),
            400,
            "invalid",
            ("reason",),
        ),
        (lambda: croupier_api.post(f"/api/tables/{table.pk}/hands/"), 409, "hand_open", ()),
    ]
    for call, status, code, words in cases:
        with nothing_written():
            refused(call(), status, code, *words)
    # A duplicate card across seats, in a fresh hand.
    croupier_api.post(f"/api/hands/{hand_id}/void/", {"reason": "test"}, format="json")
    other = open_hand(croupier_api, table)
    assert bets(croupier_api, other["id"], 1, 2).status_code == 200
    with nothing_written():
        refused(cards(croupier_api, other["id"], s1=SF_K, s2="KS 2C 3D 4S 5S"), 400, "duplicate_card", "KS")
    assert not SeatCards.objects.filter(hand_id=other["id"]).exists()


def test_a_pool_bet_over_the_limit_answers_400(casino) -> None:
    house = casino("EU")
    table = house.table("EU_PSD_JACKPOT", bet=None)
    client = api_client(house.croupier)
    hand = open_hand(client, table)
    with nothing_written():
        refused(bets(client, hand["id"], 3, pool_bet="5.50"), 400, "pool_bet_over_limit", "5.50", "5.00")
    assert not SeatBet.objects.exists()


def test_staff_see_only_their_venue_and_only_callers_run_hands(house, table, casino) -> None:
    cashier = make_user("tables-cashier", house.venue, Role.CASHIER)
    operator_api = api_client(house.operator)
    cashier_api = api_client(cashier)
    stranger = casino("AN10")
    stranger_api = api_client(stranger.croupier)
    assert cashier_api.get(f"/api/tables/{table.pk}/").status_code == 200
    with nothing_written():
        refused(cashier_api.post(f"/api/tables/{table.pk}/hands/"), 403, "role_required", "caller")
        refused(stranger_api.post(f"/api/tables/{table.pk}/hands/"), 404, "unknown_table")
        refused(stranger_api.get(f"/api/tables/{table.pk}/"), 404, "unknown_table")
        assert APIClient().get("/api/tables/").status_code == 401
    assert stranger_api.get("/api/tables/").json() == []
    hand = open_hand(operator_api, table)
    with nothing_written():
        refused(stranger_api.get(f"/api/hands/{hand['id']}/"), 404, "unknown_hand")
        refused(cashier_api.post(f"/api/hands/{hand['id']}/settle/"), 403, "role_required")
    assert Hand.objects.count() == 1


def test_manual_entry_and_extra_cards_through_the_api(casino) -> None:
    house = casino("EU")
    client = api_client(house.croupier)
    draw = house.table("EU_PCD_JACKPOT_PROGRESSIVE_MANUAL")
    hand = open_hand(client, draw)
    assert bets(client, hand["id"], 1, 2).status_code == 200
    answer = client.post(f"/api/hands/{hand['id']}/bets/", {"total": "2.00"}, format="json")
    assert (answer.status_code, answer.json()["manual_total"]) == (200, "2.00")
    body = {"seats": [{"seat": 1, "cards": SF_K, "discard": True}]}
    assert client.post(f"/api/hands/{hand['id']}/cards/", body, format="json").status_code == 200
    settled = client.post(f"/api/hands/{hand['id']}/settle/").json()
    assert [(s["seat"], s["payout"]) for s in settled["seats"] if s["payout"]] == [
        (1, "100.00")
    ]  # 1 % discarded

    stud = house.table("EU_PSD_JACKPOT")
    hand = open_hand(client, stud)
    assert bets(client, hand["id"], 5).status_code == 200
    body = {"seats": [{"seat": 5, "cards": SF_8, "extra_card": True}]}
    seats = client.post(f"/api/hands/{hand['id']}/cards/", body, format="json").json()["seats"]
    assert (seats[0]["forfeited"], seats[0]["forfeit_reason"]) == (True, "extra_card_purchase")


def test_the_schema_documents_the_table_doors(croupier_api) -> None:
    schema = croupier_api.get("/api/schema/", {"format": "json"}).json()
    paths = schema["paths"]
    for path in (
        "/api/tables/",
        "/api/tables/{table_id}/",
        "/api/tables/{table_id}/hands/",
        "/api/hands/{hand_id}/",
        "/api/hands/{hand_id}/bets/",
        "/api/hands/{hand_id}/cards/",
        "/api/hands/{hand_id}/settle/",
        "/api/hands/{hand_id}/void/",
    ):
        assert path in paths, path
    post = paths["/api/hands/{hand_id}/bets/"]["post"]
    assert post["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/BetsRequest")
    assert post["responses"]["400"]["content"]["application/json"]["schema"]["$ref"].endswith("/Error")
    assert "pool_bet_over_limit" in post["description"]


def test_the_console_page(house, table, casino, client) -> None:
    page = f"/tables/{table.pk}/console/"
    assert client.get(page).status_code == 302  # to the login
    client.force_login(house.croupier)
    answer = client.get(page)
    assert answer.status_code == 200
    text = answer.content.decode()
    assert f'data-table="{table.pk}"' in text
    assert "tables/console.js" in text
    assert client.get("/tables/").status_code == 200
    assert table.name in client.get("/tables/").content.decode()
    cashier = make_user("console-cashier", house.venue, Role.CASHIER)
    client.force_login(cashier)
    assert client.get(page).status_code == 403
    client.force_login(casino("AN10").croupier)
    assert client.get(page).status_code == 404
    lone = make_table(house.venue, house.operator, "AN10_PSD_CARRUSEL")
    client.force_login(house.operator)
    assert client.get(f"/tables/{lone.pk}/console/").status_code == 200
