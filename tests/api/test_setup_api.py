"""A venue set up through the API by its operator (issue 15): ball sets with their colour map, incidents
and replacements, the set of a game, drawing devices and the reserve switch mid-game, rooms and screens.
The caller records incidents, chooses a game's set and switches the device; nothing else of setup."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from bingo.traditional.models import BallSet, DrawDevice, Game
from bingo.traditional.services import draw
from halls.models import AuditEntry, Room, Screen, Venue

pytestmark = pytest.mark.django_db

RANGES = "1-18 red, 19-36 yellow, 37-54 green, 55-72 blue, 73-90 purple"


def _ok(answer: Any, code: int = 200) -> Any:
    assert answer.status_code == code, answer.content
    return answer.json()


def _refused(answer: Any, status: int, code: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.content
    error: dict[str, Any] = answer.json()["error"]
    assert error["code"] == code, error
    return error


def test_ball_sets_are_registered_and_looked_after_through_the_api(
    operator_api: APIClient, caller_api: APIClient, venue: Venue, other_venue: Venue, manual_game: Game
) -> None:
    body = {"venue": venue.pk, "name": "Juego 2026", "colour_ranges": RANGES, "certified_games": 2}
    _refused(caller_api.post("/api/ball-sets/", body, format="json"), 403, "role_required")
    made = _ok(operator_api.post("/api/ball-sets/", body, format="json"), 201)
    assert made["colours"]["19"] == "yellow" and made["colour_ranges"] == RANGES
    assert (made["games_played"], made["games_left"], made["at_limit"]) == (0, 2, False)
    bad = operator_api.post(
        "/api/ball-sets/", {**body, "name": "X", "colour_ranges": "1-89 red"}, format="json"
    )
    assert "no colour for balls [90]" in _refused(bad, 400, "bad_ball_set")["message"]
    _refused(operator_api.post("/api/ball-sets/", body, format="json"), 409, "ball_set_exists")
    _refused(
        operator_api.post("/api/ball-sets/", {**body, "venue": other_venue.pk}, format="json"),
        404,
        "unknown_venue",
    )
    listed = _ok(operator_api.get("/api/ball-sets/", {"venue": venue.pk}))
    assert [s["name"] for s in listed] == ["Juego 1", "Juego 2026"]

    set_id = made["id"]
    incident = {"note": "Bola 45 descolorida", "balls": [45], "game": manual_game.pk}
    _ok(caller_api.post(f"/api/ball-sets/{set_id}/incidents/", incident, format="json"), 201)
    chosen = _ok(
        caller_api.post(f"/api/games/{manual_game.pk}/ball-set/", {"ball_set": set_id}, format="json")
    )
    assert chosen["name"] == "Juego 2026"
    replace = {"name": "Juego 2026-B", "note": "Bolas gastadas"}
    _refused(
        caller_api.post(f"/api/ball-sets/{set_id}/replace/", replace, format="json"), 403, "role_required"
    )
    new = _ok(operator_api.post(f"/api/ball-sets/{set_id}/replace/", replace, format="json"), 201)
    assert new["colours"] == made["colours"] and new["certified_games"] == 2
    detail = _ok(operator_api.get(f"/api/ball-sets/{set_id}/"))
    assert detail["retired_at"] is not None and detail["replaced_by"] == new["id"]
    assert [(e["kind"], e["recorded_by"]) for e in detail["events"]] == [
        ("incident", "caller"),
        ("set_replaced", "operator"),
    ]
    retired = caller_api.post(f"/api/games/{manual_game.pk}/ball-set/", {"ball_set": set_id}, format="json")
    _refused(retired, 409, "ball_set_retired")


def test_a_ball_set_written_in_spanish_is_created_with_the_codes(
    operator_api: APIClient, venue: Venue
) -> None:
    """Ranges with the colours named in Spanish (any case, with or without accents) make the same set as
    in English: the stored map and the answer's `colours` keep the codes; a bad part is named in Spanish
    on a Spanish request."""
    text = "1-18 Rojo, 19-36 amarillo\n37-54 VERDE, 55-72 azul, 73-85 violeta, 86-90 marron"
    body = {"venue": venue.pk, "name": "Juego español", "colour_ranges": text}
    made = _ok(operator_api.post("/api/ball-sets/", body, format="json"), 201)
    assert (
        made["colours"]["1"] == "red"
        and made["colours"]["80"] == "purple"
        and made["colours"]["90"] == "brown"
    )
    assert (
        made["colour_ranges"] == "1-18 red, 19-36 yellow, 37-54 green, 55-72 blue, 73-85 purple, 86-90 brown"
    )
    assert BallSet.objects.get(pk=made["id"]).colours == made["colours"]
    bad = operator_api.post(
        "/api/ball-sets/",
        {**body, "name": "Y", "colour_ranges": "1-45 rojo, 46-90 fucsia"},
        format="json",
        HTTP_ACCEPT_LANGUAGE="es",
    )
    message = _refused(bad, 400, "bad_ball_set")["message"]
    assert "«46-90 fucsia»" in message and "no es un color" in message, message
    assert not BallSet.objects.filter(name="Y").exists()


def test_a_game_switches_to_the_reserve_device_through_the_api_and_its_recall_shows_it(
    operator_api: APIClient, caller_api: APIClient, room: Room, drawing: Game, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(draw, "dispatch", lambda *args, **kwargs: None)
    main = {"name": "Bombo 1", "kind": "pneumatic"}
    _refused(caller_api.post(f"/api/rooms/{room.pk}/devices/", main, format="json"), 403, "role_required")
    _ok(operator_api.post(f"/api/rooms/{room.pk}/devices/", main, format="json"), 201)
    reserve = _ok(
        operator_api.post(
            f"/api/rooms/{room.pk}/devices/",
            {"name": "Reserva", "kind": "turbine", "reserve": True},
            format="json",
        ),
        201,
    )
    assert [d["name"] for d in _ok(caller_api.get(f"/api/rooms/{room.pk}/devices/"))] == [
        "Bombo 1",
        "Reserva",
    ]
    for ordinal, ball in enumerate((11, 22), start=1):
        _ok(
            caller_api.post(
                f"/api/games/{drawing.pk}/balls/", {"number": ball, "ordinal": ordinal}, format="json"
            ),
            201,
        )
    switch = {"device": reserve["id"], "reason": "El motor del bombo 1 se ha parado"}
    _refused(
        caller_api.post(f"/api/games/{drawing.pk}/device/", {**switch, "reason": ""}, format="json"),
        400,
        "invalid",
    )
    done = _ok(caller_api.post(f"/api/games/{drawing.pk}/device/", switch, format="json"), 201)
    assert (done["at_ordinal"], done["to_device"], done["switched_by"]) == (2, "Reserva", "caller")
    _ok(caller_api.post(f"/api/games/{drawing.pk}/balls/", {"number": 33, "ordinal": 3}, format="json"), 201)
    recall = _ok(caller_api.get(f"/api/games/{drawing.pk}/recall/"))
    assert [b["ball"] for b in recall["balls"]] == [11, 22, 33]
    assert recall["device_switches"][0]["reason"] == "El motor del bombo 1 se ha parado"
    assert recall["draw_device"]["name"] == "Reserva"
    assert recall["ball_set"]["name"] == "Juego 1"
    view = _ok(caller_api.get(f"/api/games/{drawing.pk}/"))
    assert view["draw_device"]["name"] == "Reserva" and view["ball_set"]["at_limit"] is False
    assert DrawDevice.objects.count() == 2


def test_rooms_and_screens_are_set_up_by_the_operator(
    operator_api: APIClient, caller_api: APIClient, anonymous_api: APIClient, venue: Venue
) -> None:
    body = {"venue": venue.pk, "name": "Sala Norte", "ball_pace_seconds": "3.50"}
    _refused(caller_api.post("/api/rooms/", body, format="json"), 403, "role_required")
    room = _ok(operator_api.post("/api/rooms/", body, format="json"), 201)
    assert (room["name"], room["ball_pace_seconds"], room["open_session"]) == ("Sala Norte", "3.50", None)
    _refused(operator_api.post("/api/rooms/", body, format="json"), 409, "room_exists")
    screen = _ok(
        operator_api.post("/api/screens/", {"room": room["id"], "name": "Pantalla 1"}, format="json"), 201
    )
    assert anonymous_api.get(screen["url"]).status_code == 200
    assert screen["url"] not in str(_ok(caller_api.get("/api/screens/")))  # the caller lists none
    off = _ok(operator_api.post(f"/api/screens/{screen['id']}/", {"active": False}, format="json"))
    assert off["active"] is False and anonymous_api.get(screen["url"]).status_code == 404
    assert Screen.objects.get(pk=screen["id"]).room_id == room["id"]
    assert BallSet.objects.count() == 0


def test_rooms_and_screens_are_renamed_by_the_operator_audited_and_told_to_the_screens(
    operator_api: APIClient,
    caller_api: APIClient,
    anonymous_api: APIClient,
    venue: Venue,
    other_venue: Venue,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    published: list[Any] = []
    monkeypatch.setattr("halls.events.publish", published.append)
    room = _ok(
        operator_api.post("/api/rooms/", {"venue": venue.pk, "name": "Sala Norte"}, format="json"), 201
    )
    _ok(operator_api.post("/api/rooms/", {"venue": venue.pk, "name": "Sala Sur"}, format="json"), 201)
    screen = _ok(
        operator_api.post("/api/screens/", {"room": room["id"], "name": "Pantalla 1"}, format="json"), 201
    )
    _ok(operator_api.post("/api/screens/", {"room": room["id"], "name": "Pantalla 2"}, format="json"), 201)
    rooms, screens = f"/api/rooms/{room['id']}/", f"/api/screens/{screen['id']}/"
    audited = AuditEntry.objects.filter(action__in=["room.renamed", "screen.renamed"])

    _refused(caller_api.patch(rooms, {"name": "Sala Mar"}, format="json"), 403, "role_required")
    _refused(operator_api.patch(rooms, {"name": "   "}, format="json"), 400, "bad_room_name")
    _refused(operator_api.patch(rooms, {"name": "x" * 81}, format="json"), 400, "bad_room_name")
    _refused(operator_api.patch(rooms, {"name": "sala sur"}, format="json"), 409, "room_exists")
    _refused(caller_api.patch(screens, {"name": "Barra"}, format="json"), 403, "role_required")
    _refused(operator_api.patch(screens, {"name": ""}, format="json"), 400, "bad_screen_name")
    _refused(operator_api.patch(screens, {"name": "PANTALLA 2"}, format="json"), 409, "screen_exists")
    assert not audited.exists()
    assert Room.objects.get(pk=room["id"]).name == "Sala Norte"
    assert Screen.objects.get(pk=screen["id"]).name == "Pantalla 1"

    with django_capture_on_commit_callbacks(execute=True):
        renamed = _ok(operator_api.patch(rooms, {"name": "  Sala   del Mar "}, format="json"))
        shown = _ok(operator_api.patch(screens, {"name": "Pantalla barra"}, format="json"))
    assert renamed["name"] == "Sala del Mar" and shown["name"] == "Pantalla barra"
    stream = Room.objects.get(pk=room["id"]).stream
    assert [(e.stream, e.type, e.data) for e in published if e.type.endswith("renamed")] == [
        (stream, "room.renamed", {"room": room["id"], "name": "Sala del Mar"}),
        (stream, "screen.renamed", {"room": room["id"], "screen": screen["id"], "name": "Pantalla barra"}),
    ]
    assert [(e.action, e.data["old"], e.data["new"]) for e in audited.order_by("pk")] == [
        ("room.renamed", "Sala Norte", "Sala del Mar"),
        ("screen.renamed", "Pantalla 1", "Pantalla barra"),
    ]
    # The screen's page and snapshot (a reload) show the new names.
    snapshot = _ok(anonymous_api.get(screen["url"] + "snapshot/"))
    assert (snapshot["room"], snapshot["screen"], snapshot["screen_id"]) == (
        "Sala del Mar",
        "Pantalla barra",
        screen["id"],
    )
    assert "Sala del Mar" in anonymous_api.get(screen["url"]).content.decode()
    _ok(operator_api.patch(rooms, {"name": "Sala del Mar"}, format="json"))  # the same name: nothing to do
    assert audited.count() == 2
    foreign = Room.objects.create(venue=other_venue, name="Sala Andalucía")
    _refused(
        operator_api.patch(f"/api/rooms/{foreign.pk}/", {"name": "Mía"}, format="json"), 404, "unknown_room"
    )
