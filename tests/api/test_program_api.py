"""The prize-program doors (bingo.traditional.program_api): every endpoint, who may use it, and every bad
configuration
refused with its code and a message naming the problem, with no row written."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db.models import Model
from rest_framework.test import APIClient

from bingo.traditional.models import (
    CardSeries,
    Game,
    GamePick,
    GameProgram,
    PrizeProgram,
    PrizeProgramVersion,
    RoomBolsa,
)
from bingo.traditional.services import games, sales
from halls.models import AuditEntry, Role, Room, Venue
from jackpots.models import ParameterChange, Pool, PoolLevel, PoolMember
from tests.api_support import api_client, refused
from tests.conftest import make_user
from tests.four_eyes_support import approved

D = Decimal
AUTH = "ML-DGJ-2025/017"
PRIMA = {"funding_percent": "2.5", "amount": "30", "authorisation_ref": AUTH}
EXTRA = {"funding_percent": "1.5", "amount": "500", "extraction_order": 52, "authorisation_ref": AUTH}
PROFILE = {"games_per_day": 20, "cards_per_game": 100, "spread": 30, "price": "1.00"}

# Every table a program door may write (through its service).
PROGRAM_TABLES: list[type[Model]] = [
    PrizeProgram,
    PrizeProgramVersion,
    RoomBolsa,
    GameProgram,
    GamePick,
    Pool,
    PoolLevel,
    PoolMember,
    ParameterChange,
    AuditEntry,
]


def program_rows() -> dict[str, int]:
    return {model.__name__: model._default_manager.count() for model in PROGRAM_TABLES}


@contextmanager
def nothing_written() -> Iterator[None]:
    before = program_rows()
    yield
    assert program_rows() == before


class Applied:
    """A program door's answer once a second operator approved its proposal (four eyes): 201 with the
    program's view, as the door answered before proposals."""

    status_code = 201

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.content = repr(data).encode()

    def json(self) -> dict[str, Any]:
        return self.data


def through_four_eyes(client: APIClient, answer: Any) -> Any:
    """The proposal a door answered (202), approved by a second operator with the posted digest; a refusal
    (4xx) as it was answered."""
    if answer.status_code != 202:
        return answer
    assert answer.json()["proposal"]["digest"] == answer.json()["terms_page"].split("/")[2]  # the sheet's
    done = approved(answer)
    return Applied(client.get(f"/api/programs/{done.result['program']}/").json())


def activate(client: APIClient, room: Room, code: str, program_type: str, params: Any, **more: Any) -> Any:
    body = {"code": code, "program_type": program_type, "params": params, **more}
    return through_four_eyes(client, client.post(f"/api/rooms/{room.pk}/programs/", body, format="json"))


def new_version(client: APIClient, program_id: int, body: Any) -> Any:
    answer = client.post(f"/api/programs/{program_id}/versions/", body, format="json")
    return through_four_eyes(client, answer)


@pytest.fixture
def prima(operator_api: APIClient, room: Room) -> dict[str, Any]:
    answer = activate(operator_api, room, "PRIMA", "BA-1", PRIMA, name="Prima 30")
    assert answer.status_code == 201, answer.content
    found: dict[str, Any] = answer.json()
    return found


@pytest.fixture
def bolsa(operator_api: APIClient, room: Room) -> dict[str, Any]:
    answer = operator_api.post(
        f"/api/rooms/{room.pk}/bolsa/", {"funding_percent": "10", "authorisation_ref": AUTH}, format="json"
    )
    assert answer.status_code == 201, answer.content
    found: dict[str, Any] = answer.json()
    return found


@pytest.fixture
def other_operator_api(other_venue: Venue) -> APIClient:
    return api_client(make_user("other-operator-api", other_venue, Role.OPERATOR))


def fund_bolsa(game: Game, card_series: CardSeries, caller: User, cashier: User) -> None:
    """Sell 50 cards of 2 € in `game` and close its sales (10 % = 10 € to the Bolsa), then void it."""
    game = games.open_sales(game=game, actor=caller)
    sales.sell_range(game=game, series=card_series, first=1, last=50, actor=cashier)
    game = games.close_sales(game=game, actor=caller)
    games.void_game(game=game, actor=caller, reason="test: the Bolsa keeps the funding")


# --- program types --------------------------------------------------------------------------------------


def test_the_program_types_are_listed_for_any_staff(cashier_api, anonymous_api):
    types = cashier_api.get("/api/program-types/").json()
    assert [t["type"] for t in types] == [f"BA-{n}" for n in range(1, 21)]
    prima = types[0]
    assert (prima["name"], prima["family"], prima["funding"]) == ("Prima", "prima", "sales_percent")
    assert "amount" in prima["params"] and "funding_percent" in prima["params"]
    assert types[19]["funding"] == "bolsa_acumulada"
    assert anonymous_api.get("/api/program-types/").status_code == 401


# --- activation, reading, versions, deactivation ---------------------------------------------------------


def test_the_operator_activates_a_program_with_its_pool(operator_api, cashier_api, room, prima):
    assert (prima["code"], prima["type"], prima["name"], prima["family"]) == (
        "PRIMA",
        "BA-1",
        "Prima 30",
        "prima",
    )
    assert prima["active"] is True and prima["room"] == room.pk
    assert prima["amount"] == "0.00"
    (version,) = prima["versions"]
    assert version["version"] == 1 and version["in_force"] is True
    assert version["params"] == PRIMA
    assert version["authorisation_ref"] == AUTH
    assert version["provenance"]["ball_limit"] == "regulation"  # the 48 balls of the Prima
    pool = Pool.objects.get(pk=prima["pool"])
    assert pool.venue_id == room.venue_id
    assert PoolLevel.objects.get(pool=pool).contribution_rate == D("0.025")

    # Any staff of the venue reads the room's programs and each program.
    listed = cashier_api.get(f"/api/rooms/{room.pk}/programs/").json()
    assert [(p["id"], p["code"], p["amount"]) for p in listed] == [(prima["id"], "PRIMA", "0.00")]
    detail = cashier_api.get(f"/api/programs/{prima['id']}/")
    assert detail.status_code == 200
    assert detail.json()["versions"][0]["params"] == PRIMA


def test_a_json_number_amount_is_read_as_the_decimal_it_prints(operator_api, room):
    answer = activate(operator_api, room, "P50", "BA-1", {**PRIMA, "amount": 50.0, "funding_percent": 2.5})
    assert answer.status_code == 201, answer.content
    assert answer.json()["versions"][0]["params"]["amount"] == "50.0"


def test_a_new_version_changes_the_parameters_and_the_pools_rate(operator_api, prima):
    answer = new_version(
        operator_api, prima["id"], {"params": {**PRIMA, "amount": "50", "funding_percent": "3"}}
    )
    assert answer.status_code == 201, answer.content
    versions = answer.json()["versions"]
    assert [(v["version"], v["params"]["amount"], v["in_force"]) for v in versions] == [
        (1, "30", False),
        (2, "50", True),
    ]
    assert PoolLevel.objects.get(pool_id=prima["pool"]).contribution_rate == D("0.03")
    assert ParameterChange.objects.filter(pool_id=prima["pool"]).count() == 1


def test_a_version_is_refused_while_a_game_of_the_room_is_in_play(operator_api, prima, drawing):
    with nothing_written():
        answer = operator_api.post(
            f"/api/programs/{prima['id']}/versions/", {"params": {**PRIMA, "amount": "50"}}, format="json"
        )
    refused(answer, 409, "game_in_play", f"game {drawing.number}")


def test_a_bad_version_is_refused_and_keeps_the_one_in_force(operator_api, prima):
    with nothing_written():
        answer = operator_api.post(
            f"/api/programs/{prima['id']}/versions/", {"params": {**PRIMA, "amount": "35"}}, format="json"
        )
    error = refused(answer, 400, "bad_program", "€35.00 is not a Prima level")
    assert error["details"]["problems"]
    with nothing_written():
        answer = operator_api.post(f"/api/programs/{prima['id']}/versions/", {"params": [1]}, format="json")
    refused(answer, 400, "invalid", "json object")


def test_the_operator_deactivates_a_program(operator_api, cashier_api, prima):
    with nothing_written():
        refused(
            cashier_api.post(f"/api/programs/{prima['id']}/deactivate/"), 403, "role_required", "operator"
        )
    answer = operator_api.post(f"/api/programs/{prima['id']}/deactivate/")
    assert answer.status_code == 200, answer.content
    assert answer.json()["active"] is False and answer.json()["deactivated_at"]
    with nothing_written():
        refused(operator_api.post(f"/api/programs/{prima['id']}/deactivate/"), 409, "program_inactive")


# --- permissions ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["cashier_api", "caller_api"])
def test_only_the_operator_activates(request, room, who):
    client = request.getfixturevalue(who)
    with nothing_written():
        answer = activate(client, room, "PRIMA", "BA-1", PRIMA)
    refused(answer, 403, "role_required", "operator")


def test_a_cashier_changes_no_program_nor_the_bolsa(cashier_api, room, prima):
    with nothing_written():
        refused(
            cashier_api.post(f"/api/programs/{prima['id']}/versions/", {"params": PRIMA}, format="json"),
            403,
            "role_required",
        )
        refused(
            cashier_api.post(
                f"/api/rooms/{room.pk}/bolsa/",
                {"funding_percent": "1", "authorisation_ref": AUTH},
                format="json",
            ),
            403,
            "role_required",
        )


def test_another_venues_room_and_program_are_not_found(other_operator_api, room, prima, on_sale):
    with nothing_written():
        refused(other_operator_api.get(f"/api/rooms/{room.pk}/programs/"), 404, "unknown_room")
        refused(activate(other_operator_api, room, "X", "BA-1", PRIMA), 404, "unknown_room")
        refused(other_operator_api.get(f"/api/programs/{prima['id']}/"), 404, "unknown_program")
        refused(
            other_operator_api.post(
                f"/api/programs/{prima['id']}/versions/", {"params": PRIMA}, format="json"
            ),
            404,
            "unknown_program",
        )
        refused(other_operator_api.post(f"/api/programs/{prima['id']}/deactivate/"), 404, "unknown_program")
        refused(
            other_operator_api.post(
                f"/api/rooms/{room.pk}/bolsa/",
                {"funding_percent": "1", "authorisation_ref": AUTH},
                format="json",
            ),
            404,
            "unknown_room",
        )
        refused(
            other_operator_api.post(
                f"/api/games/{on_sale.pk}/picks/", {"program": prima["id"]}, format="json"
            ),
            404,
            "unknown_game",
        )
        refused(
            other_operator_api.post(
                "/api/program-simulations/", {"program": prima["id"], "profile": PROFILE}, format="json"
            ),
            404,
            "unknown_program",
        )


def test_anonymous_requests_answer_401(anonymous_api, room, prima):
    with nothing_written():
        assert anonymous_api.get(f"/api/rooms/{room.pk}/programs/").status_code == 401
        assert activate(anonymous_api, room, "X", "BA-1", PRIMA).status_code == 401
        assert anonymous_api.post(f"/api/programs/{prima['id']}/deactivate/").status_code == 401


# --- bad configuration: refused with its code, nothing written -------------------------------------------


def test_a_bingo_extra_order_below_the_floor_of_50_is_refused(operator_api, room):
    with nothing_written():
        answer = activate(operator_api, room, "EXTRA", "BA-2", {**EXTRA, "extraction_order": 49})
    error = refused(answer, 400, "bad_program", "extraction order 49 is below the floor of 50")
    assert any("floor of 50" in p for p in error["details"]["problems"])
    assert activate(operator_api, room, "EXTRA", "BA-2", {**EXTRA, "extraction_order": 50}).status_code == 201


def test_a_colour_prima_over_500_is_refused(operator_api, room, bolsa):
    with nothing_written():
        answer = activate(operator_api, room, "COLOR", "BA-20", {"amount": "500.01", "colour": "red"})
    refused(answer, 400, "bad_program", "€500.01 is over the maximum of €500.00")
    assert (
        activate(operator_api, room, "COLOR", "BA-20", {"amount": "500", "colour": "red"}).status_code == 201
    )


def test_an_unknown_colour_is_refused(operator_api, room, bolsa):
    with nothing_written():
        answer = activate(operator_api, room, "COLOR", "BA-20", {"amount": "100", "colour": "magenta"})
    refused(answer, 400, "bad_program", "unknown colour 'magenta'")


def test_overlapping_schedules_are_refused(operator_api, room):
    sales_only = {"funding_percent": "1", "authorisation_ref": AUTH}
    assert activate(operator_api, room, "EXTRA-12-2", "BA-8", sales_only).status_code == 201
    with nothing_written():
        answer = activate(operator_api, room, "EXTRA-BIS", "BA-8", sales_only)
    refused(answer, 400, "schedule_overlap", "both claim the game after 00:00, 20:00")
    # The same hour twice in one program's own schedule.
    with nothing_written():
        answer = activate(
            operator_api, room, "EXTRA-30", "BA-12", {**sales_only, "hours": ["20:00", "20:00"]}
        )
    refused(answer, 400, "bad_program", "the hour 20:00 is listed twice")


@pytest.mark.parametrize(
    ("program_type", "params", "words"),
    [
        ("BA-1", {"amount": "30", "authorisation_ref": AUTH}, ["funding_percent is required"]),
        ("BA-1", {**PRIMA, "funding_percent": "100"}, ["less than 100"]),
        ("BA-1", {**PRIMA, "bogus": 1}, ["unknown parameter(s) bogus"]),
        ("BA-3", {"funding_percent": "2"}, ["authorisation_ref is required"]),
        ("BA-19", {"amount": "300", "extraction_order": 45, "funding_percent": "1"}, ["does not apply"]),
    ],
)
def test_each_bad_parameter_is_named(operator_api, room, program_type, params, words):
    with nothing_written():
        answer = activate(operator_api, room, "BAD", program_type, params)
    refused(answer, 400, "bad_program", *words)


def test_a_malformed_activation_names_the_field(operator_api, room, prima):
    with nothing_written():
        refused(activate(operator_api, room, "X", "BA-21", PRIMA), 400, "invalid", "program_type")
        refused(activate(operator_api, room, "X", "BA-1", "amount=30"), 400, "invalid", "params")
        refused(activate(operator_api, room, "bad code!", "BA-1", PRIMA), 400, "bad_program_code")
        refused(activate(operator_api, room, "PRIMA", "BA-1", PRIMA), 409, "program_exists")


def test_a_super_prima_needs_the_rooms_bolsa(operator_api, room):
    with nothing_written():
        answer = activate(operator_api, room, "SUPER", "BA-19", {"amount": "300", "extraction_order": 45})
    refused(answer, 409, "no_bolsa", "bolsa acumulada")


# --- the Bolsa Acumulada --------------------------------------------------------------------------------


def test_the_operator_opens_then_changes_the_bolsa(operator_api, room, bolsa):
    assert (bolsa["room"], bolsa["funding_percent"], bolsa["amount"]) == (room.pk, "10.00", "0.00")
    assert RoomBolsa.objects.get(room=room).pool_id == bolsa["pool"]
    changed = operator_api.post(
        f"/api/rooms/{room.pk}/bolsa/",
        {"funding_percent": "7.5", "authorisation_ref": "AUT-2"},
        format="json",
    )
    assert changed.status_code == 200, changed.content
    assert (changed.json()["funding_percent"], changed.json()["authorisation_ref"]) == ("7.50", "AUT-2")
    assert PoolLevel.objects.get(pool_id=bolsa["pool"]).contribution_rate == D("0.075")


@pytest.mark.parametrize(
    ("body", "code", "words"),
    [
        ({"funding_percent": "0", "authorisation_ref": AUTH}, "bad_program", ["more than 0"]),
        ({"funding_percent": "100", "authorisation_ref": AUTH}, "bad_program", ["less than 100"]),
        ({"funding_percent": "1.005", "authorisation_ref": AUTH}, "bad_program", ["more than 2 decimals"]),
        ({"funding_percent": "2", "authorisation_ref": "  "}, "invalid", ["authorisation_ref"]),
        ({"authorisation_ref": AUTH}, "invalid", ["funding_percent"]),
    ],
)
def test_a_bad_bolsa_is_refused(operator_api, room, body, code, words):
    with nothing_written():
        answer = operator_api.post(f"/api/rooms/{room.pk}/bolsa/", body, format="json")
    refused(answer, 400, code, *words)


# --- the hall manager's picks ---------------------------------------------------------------------------


@pytest.fixture
def super_prima(operator_api, room, bolsa) -> dict[str, Any]:
    answer = activate(operator_api, room, "SUPER", "BA-19", {"amount": "10", "extraction_order": 45})
    assert answer.status_code == 201, answer.content
    found: dict[str, Any] = answer.json()
    return found


@pytest.fixture
def colour_prima(operator_api, room, bolsa) -> dict[str, Any]:
    answer = activate(operator_api, room, "COLOR", "BA-20", {"amount": "10"})
    assert answer.status_code == 201, answer.content
    found: dict[str, Any] = answer.json()
    return found


@pytest.fixture
def funded_game(manual_game, card_series, caller, cashier, room, bolsa) -> Game:
    """The Bolsa holds 10 € (a voided game's funding), and the room's next game is on sale."""
    fund_bolsa(manual_game, card_series, caller, cashier)
    game = games.create_game(room=room, actor=caller, draw_source="manual")
    return games.open_sales(game=game, actor=caller)


def test_the_caller_sets_a_pick_and_the_close_of_sales_announces_it(
    caller_api, funded_game, colour_prima, card_series, cashier, caller
):
    body = {"program": colour_prima["id"], "amount": "10.00", "colour": "Green"}
    answer = caller_api.post(f"/api/games/{funded_game.pk}/picks/", body, format="json")
    assert answer.status_code == 201, answer.content
    pick = answer.json()
    assert (pick["game"], pick["program"], pick["amount"], pick["colour"]) == (
        funded_game.pk,
        colour_prima["id"],
        "10.00",
        "green",
    )
    assert (pick["max_ball"], pick["set_by"]) == (None, "caller")
    sales.sell_range(game=funded_game, series=card_series, first=51, last=60, actor=cashier)
    game = games.close_sales(game=funded_game, actor=caller)
    (announced,) = game.announcement["programs"]
    assert (announced["code"], announced["amount"], announced["colour"]) == ("COLOR", "10.00", "green")


def test_the_operator_may_pick_too(operator_api, funded_game, super_prima):
    body = {"program": super_prima["id"], "amount": "10", "max_ball": 45}
    answer = operator_api.post(f"/api/games/{funded_game.pk}/picks/", body, format="json")
    assert answer.status_code == 201, answer.content
    assert (answer.json()["amount"], answer.json()["max_ball"]) == ("10.00", 45)


def test_bad_picks_are_refused(caller_api, cashier_api, funded_game, super_prima, colour_prima, prima):
    url = f"/api/games/{funded_game.pk}/picks/"
    with nothing_written():
        refused(
            caller_api.post(url, {"program": super_prima["id"], "colour": "red"}, format="json"),
            400,
            "bad_pick",
            "a super prima has no colour",
        )
        refused(
            caller_api.post(
                url, {"program": colour_prima["id"], "amount": "600", "colour": "red"}, format="json"
            ),
            400,
            "bad_pick",
            "over the maximum of €500.00",
        )
        refused(
            caller_api.post(url, {"program": colour_prima["id"], "colour": "magenta"}, format="json"),
            400,
            "bad_pick",
            "unknown colour 'magenta'",
        )
        refused(
            caller_api.post(
                url, {"program": colour_prima["id"], "amount": "50", "colour": "red"}, format="json"
            ),
            400,
            "bad_pick",
            "bolsa acumulada holds €10.00",
        )
        refused(
            caller_api.post(url, {"program": prima["id"], "amount": "30"}, format="json"),
            400,
            "bad_pick",
            "does not pick",
        )
        refused(
            caller_api.post(url, {"program": super_prima["id"], "max_ball": "x"}, format="json"),
            400,
            "invalid",
        )
        refused(cashier_api.post(url, {"program": super_prima["id"]}, format="json"), 403, "role_required")


def test_a_bad_pick_is_refused_in_the_readers_language_with_its_amounts_as_money(
    caller_api, funded_game, colour_prima
):
    """The rules' problems are codes and parameters; the refusal says them in the request's language,
    every amount as that language writes money (halls.money.for_person)."""
    url = f"/api/games/{funded_game.pk}/picks/"
    over = {"program": colour_prima["id"], "amount": "2000.50", "colour": "red"}
    short = {"program": colour_prima["id"], "amount": "50", "colour": "red"}
    with nothing_written():
        spanish = refused(
            caller_api.post(url, over, format="json", HTTP_ACCEPT_LANGUAGE="es"),
            400,
            "bad_pick",
            "el importe de 2.000,50 € supera el máximo de 500,00 €",
        )
        english = refused(
            caller_api.post(url, over, format="json", HTTP_ACCEPT_LANGUAGE="en"),
            400,
            "bad_pick",
            "amount €2,000.50 is over the maximum of €500.00",
        )
        bolsa_es = refused(
            caller_api.post(url, short, format="json", HTTP_ACCEPT_LANGUAGE="es"),
            400,
            "bad_pick",
            "la Bolsa Acumulada tiene 10,00 €, menos que el premio de 50,00 €",
        )
        refused(
            caller_api.post(url, short, format="json", HTTP_ACCEPT_LANGUAGE="en"),
            400,
            "bad_pick",
            "the Bolsa Acumulada holds €10.00, less than the prize €50.00",
        )
    assert spanish["details"]["problems"] == [spanish["message"]]
    assert "over the maximum" not in spanish["message"] and "supera" not in english["message"]
    assert "holds" not in bolsa_es["message"] and "€10.00" not in bolsa_es["message"]
    assert english["details"]["problems"] == [english["message"]]


def test_a_pick_names_a_program_of_the_games_room(caller_api, operator, funded_game, venue):
    other_room = Room.objects.create(venue=venue, name="Sala 2")
    other = activate(api_client(operator), other_room, "PRIMA", "BA-1", PRIMA).json()
    with nothing_written():
        answer = caller_api.post(
            f"/api/games/{funded_game.pk}/picks/", {"program": other["id"]}, format="json"
        )
    refused(answer, 404, "unknown_program")


def test_a_pick_after_the_close_of_sales_is_refused(
    caller_api, funded_game, super_prima, card_series, cashier, caller
):
    sales.sell_range(game=funded_game, series=card_series, first=51, last=60, actor=cashier)
    game = games.close_sales(game=funded_game, actor=caller)
    with nothing_written():
        answer = caller_api.post(
            f"/api/games/{game.pk}/picks/", {"program": super_prima["id"], "amount": "10"}, format="json"
        )
    refused(answer, 409, "wrong_state", "close of sales")


# --- the simulator --------------------------------------------------------------------------------------


def test_the_operator_simulates_parameters_before_activation(operator_api, room):
    body = {
        "room": room.pk,
        "program_type": "BA-1",
        "params": PRIMA,
        "profile": PROFILE,
        "days": 30,
        "seed": 7,
    }
    with nothing_written():
        answer = operator_api.post("/api/program-simulations/", body, format="json")
    assert answer.status_code == 200, answer.content
    result = answer.json()
    report = result["report"]
    assert (report["program"]["type"], report["days"], report["games"], report["seed"]) == (
        "BA-1",
        30,
        600,
        7,
    )
    assert report["profile"]["hall_category"] == room.venue.hall_category
    assert report["profile"]["time_zone"] == room.venue.time_zone
    assert report["balanced"] is True
    assert report["hits"] == len(report["awards"]) > 0
    # The money adds up, exactly: what was funded was paid or is still in the pool.
    assert D(report["total_funded"]) == D(report["total_paid"]) + D(report["pool_end"])
    assert all(D(a["prize"]) == D("30") for a in report["awards"])
    assert result["svg"].lstrip().startswith("<svg") and "</svg>" in result["svg"]
    assert "Simulation of BA-1 Prima" in result["text"]
    # Same seed, same games.
    again = operator_api.post("/api/program-simulations/", body, format="json").json()
    assert again["report"] == report


def test_the_operator_simulates_an_active_program(operator_api, prima, super_prima):
    body = {"program": prima["id"], "profile": PROFILE, "days": 10}
    answer = operator_api.post("/api/program-simulations/", body, format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json()["report"]["program"]["id"] == "PRIMA"
    # A Super Prima is paid from the Bolsa: the room's Bolsa percentage funds it.
    answer = operator_api.post(
        "/api/program-simulations/",
        {"program": super_prima["id"], "profile": PROFILE, "days": 10},
        format="json",
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["report"]["program"]["from_bolsa"] is True
    assert answer.json()["report"]["program"]["funding_percent"] == "10.00"


def test_bad_simulations_are_refused(operator_api, cashier_api, room, prima):
    url = "/api/program-simulations/"
    with nothing_written():
        answer = operator_api.post(
            url,
            {
                "room": room.pk,
                "program_type": "BA-2",
                "params": {**EXTRA, "extraction_order": 49},
                "profile": PROFILE,
            },
            format="json",
        )
        refused(answer, 400, "bad_program", "below the floor of 50")
        answer = operator_api.post(
            url,
            {"room": room.pk, "program_type": "BA-19", "params": {"amount": "10"}, "profile": PROFILE},
            format="json",
        )
        refused(answer, 400, "bolsa_percent_required", "bolsa_percent")
        answer = operator_api.post(
            url, {"program": prima["id"], "room": room.pk, "program_type": "BA-1"}, format="json"
        )
        refused(answer, 400, "invalid", "profile")
        answer = operator_api.post(
            url,
            {"program": prima["id"], "program_type": "BA-1", "params": PRIMA, "profile": PROFILE},
            format="json",
        )
        refused(answer, 400, "invalid", "either program")
        answer = operator_api.post(
            url,
            {"program": prima["id"], "profile": {**PROFILE, "games_per_day": 200}, "days": 3650},
            format="json",
        )
        refused(answer, 400, "invalid", "too many")
        answer = operator_api.post(
            url, {"program": prima["id"], "profile": {**PROFILE, "minutes_per_game": 120}}, format="json"
        )
        refused(answer, 400, "bad_simulation", "next day's first game")
        refused(
            cashier_api.post(url, {"program": prima["id"], "profile": PROFILE}, format="json"),
            403,
            "role_required",
        )


# --- the schema -----------------------------------------------------------------------------------------


def test_the_schema_documents_the_program_doors(anonymous_api):
    schema = anonymous_api.get("/api/schema/", {"format": "json"}).json()
    paths = schema["paths"]
    for route in (
        "/api/program-types/",
        "/api/rooms/{room_id}/programs/",
        "/api/rooms/{room_id}/bolsa/",
        "/api/programs/{program_id}/",
        "/api/programs/{program_id}/versions/",
        "/api/programs/{program_id}/deactivate/",
        "/api/games/{game_id}/picks/",
        "/api/program-simulations/",
    ):
        assert route in paths, route
    activate_op = paths["/api/rooms/{room_id}/programs/"]["post"]
    assert activate_op["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/ProgramActivate"
    )
    assert set(activate_op["responses"]) == {"202", "400", "401", "403", "404", "409"}  # four eyes
    assert activate_op["responses"]["400"]["content"]["application/json"]["schema"]["$ref"].endswith("/Error")
    assert "bad_program" in activate_op["description"] and "schedule_overlap" in activate_op["description"]
    components = schema["components"]["schemas"]
    assert components["Program"]["properties"]["amount"]["type"] == "string"  # money as a string
    assert components["Pick"]["properties"]["amount"]["type"] == "string"


# --- issue 26: the schedule's and the scale's problems in the reader's language -----------------------------


def _said(client: APIClient, room: Room, code: str, program_type: str, params: Any, language: str) -> Any:
    return client.post(
        f"/api/rooms/{room.pk}/programs/",
        {"code": code, "program_type": program_type, "params": params},
        format="json",
        HTTP_ACCEPT_LANGUAGE=language,
    )


def test_a_schedule_overlap_is_refused_in_spanish_and_in_english(operator_api, room):
    """schedule.overlapping's problems are rules.Problems: the refusal says them in the request's language."""
    sales_only = {"funding_percent": "1", "authorisation_ref": AUTH}
    assert activate(operator_api, room, "EXTRA-12-2", "BA-8", sales_only).status_code == 201
    with nothing_written():
        spanish = refused(
            _said(operator_api, room, "EXTRA-BIS", "BA-8", sales_only, "es"),
            400,
            "schedule_overlap",
            "dos programas BA-8 (",
            "reclaman los dos la partida posterior a las 00:00, 20:00",
        )
        english = refused(
            _said(operator_api, room, "EXTRA-BIS", "BA-8", sales_only, "en"),
            400,
            "schedule_overlap",
            "two BA-8 programs (",
            "both claim the game after 00:00, 20:00",
        )
    assert spanish["details"]["problems"] == [spanish["message"]]
    assert english["details"]["problems"] == [english["message"]]
    for word in ("two", "programs", "both claim", "the game after"):
        assert word not in spanish["message"], spanish["message"]


def test_a_bad_scheduled_hour_is_refused_in_spanish_and_in_english(operator_api, room):
    params = {"funding_percent": "1", "authorisation_ref": AUTH, "hours": ["25:00", "20:00", "20:00"]}
    with nothing_written():
        spanish = refused(
            _said(operator_api, room, "EXTRA-30", "BA-12", params, "es"),
            400,
            "bad_program",
            "la hora programada '25:00' no tiene el formato HH:MM",
            "la hora 20:00 aparece dos veces",
        )
        english = refused(
            _said(operator_api, room, "EXTRA-30", "BA-12", params, "en"),
            400,
            "bad_program",
            "scheduled hour '25:00' is not HH:MM",
            "the hour 20:00 is listed twice",
        )
    for word in ("scheduled hour", "is not", "listed twice", "got"):
        assert word not in spanish["message"], spanish["message"]
    assert "programada" not in english["message"]


def test_a_bad_band_of_the_cards_sold_scale_is_refused_in_spanish_and_in_english(operator_api, room):
    params = {"funding_percent": "2", "authorisation_ref": AUTH, "scale": [[1, 50, 44], [52, None, 99]]}
    with nothing_written():
        spanish = refused(
            _said(operator_api, room, "ACUM", "BA-3", params, "es"),
            400,
            "bad_program",
            "la escala de cartones vendidos debe continuar en 51 cartones, no en 52",
            "tramo desde 52 cartones: la bola máxima 99 no está entre 15 y 90",
        )
        english = refused(
            _said(operator_api, room, "ACUM", "BA-3", params, "en"),
            400,
            "bad_program",
            "the cards-sold scale must continue at 51 cards, not 52",
            "band from 52 cards: max ball 99 is not in 15–90",
        )
    assert len(spanish["details"]["problems"]) == len(english["details"]["problems"]) == 2
    for word in ("cards", "scale", "band", "must", "max ball"):
        assert word not in spanish["message"], spanish["message"]


def test_a_simulation_refusal_and_its_plot_speak_the_readers_language(operator_api, prima):
    """The simulator's own problems are rules.Problems; its plot's counts and percentage are the reader's."""
    url = "/api/program-simulations/"
    too_long = {"program": prima["id"], "profile": {**PROFILE, "minutes_per_game": 120}}
    with nothing_written():
        spanish = refused(
            operator_api.post(url, too_long, format="json", HTTP_ACCEPT_LANGUAGE="es"),
            400,
            "bad_simulation",
            "se solaparía con la primera partida del día siguiente",
        )
        refused(
            operator_api.post(url, too_long, format="json", HTTP_ACCEPT_LANGUAGE="en"),
            400,
            "bad_simulation",
            "it would run into the next day's first game",
        )
    assert "games" not in spanish["message"] and "minutes" not in spanish["message"]
    body = {"program": prima["id"], "profile": PROFILE, "days": 30, "seed": 7}
    answer = operator_api.post(url, body, format="json", HTTP_ACCEPT_LANGUAGE="es")
    assert answer.status_code == 200, answer.content
    svg = answer.json()["svg"]
    # Seed 7 gives one hit in 30 days: "1 premio", singular (it read "1 premios" before).
    assert "30 días · 600 partidas · 1 premio · pagado " in svg and "1 premios" not in svg
    assert re.search(r"\(\d+,\d\d % de las ventas\)", svg), svg[:400]
    assert " hits" not in svg and "card(s)" not in svg and "cartón(es)" not in svg
