"""What the API shows: venues, rooms, sessions, game lists, pause/resume, and the schema that documents it."""

from __future__ import annotations

import os
from io import StringIO
from typing import Any

from django.core.management import call_command
from rest_framework.test import APIClient

from bingo.traditional.models import Game
from bingo.traditional.services import games
from halls.models import Room


def test_rooms_show_their_open_session_and_current_game(
    caller_api: APIClient, manual_game: Game, room: Room
) -> None:
    other = Room.objects.create(venue=room.venue, name="Sala 2")
    rooms = caller_api.get("/api/rooms/").json()
    assert [(r["name"], r["open_session"], r["current_game"]) for r in rooms] == [
        ("Sala 1", manual_game.session_id, manual_game.pk),
        ("Sala 2", None, None),
    ]
    assert rooms[0]["ball_pace_seconds"] == "0.50"
    assert caller_api.get(f"/api/rooms/{other.pk}/").json()["current_game"] is None


def test_a_session_is_shown_to_the_caller(caller_api: APIClient, session: Any) -> None:
    shown = caller_api.get(f"/api/sessions/{session.pk}/").json()
    assert (shown["id"], shown["is_open"], shown["opened_by"], shown["closed_by"]) == (
        session.pk,
        True,
        "caller",
        None,
    )
    assert shown["blower_ok"] and shown["reserve_ok"] and shown["reader_ok"]


def test_games_are_listed_newest_first_and_filtered(
    caller_api: APIClient, manual_game: Game, room: Room, caller: Any
) -> None:
    games.void_game(game=manual_game, actor=caller, reason="test")
    second = games.create_game(room=room, actor=caller, draw_source="manual")
    listed = caller_api.get("/api/games/").json()
    assert [(g["id"], g["number"], g["state"]) for g in listed] == [
        (second.pk, 2, "scheduled"),
        (manual_game.pk, 1, "void"),
    ]
    assert [g["id"] for g in caller_api.get(f"/api/games/?room={room.pk}&state=void").json()] == [
        manual_game.pk
    ]
    assert [g["id"] for g in caller_api.get("/api/games/?limit=1").json()] == [second.pk]
    assert caller_api.get("/api/games/?limit=0").status_code == 400


def test_the_caller_pauses_and_resumes_the_draw(caller_api: APIClient, drawing: Game) -> None:
    paused = caller_api.post(f"/api/games/{drawing.pk}/pause/")
    assert paused.status_code == 200
    assert paused.json()["state"] == "paused"
    resumed = caller_api.post(f"/api/games/{drawing.pk}/resume/")
    assert resumed.status_code == 200
    assert resumed.json()["state"] == "drawing"


def test_the_cashier_sees_the_game_and_its_sales(cashier_api: APIClient, drawing: Game) -> None:
    view = cashier_api.get(f"/api/games/{drawing.pk}/").json()
    assert (view["state"], view["line_prize"], view["bingo_prize"]) == ("drawing", "6.00", "30.00")
    # The unclaimed winners come with their counts and the ball they are computed at (lists are capped).
    assert view["unclaimed"] == {"ordinal": 0, "line": [], "bingo": [], "line_count": 0, "bingo_count": 0}
    sales = cashier_api.get(f"/api/games/{drawing.pk}/sales/").json()
    assert (sales["cards_sold"], sales["sales_total"]) == (30, "60.00")
    assert [(o["kind"], o["first"], o["last"], o["amount"]) for o in sales["operations"]] == [
        ("sell", 1, 30, "60.00")
    ]


def test_the_schema_documents_bodies_and_the_error_body(anonymous_api: APIClient) -> None:
    answer = anonymous_api.get("/api/schema/", {"format": "json"})
    assert answer.status_code == 200
    schema = answer.json()
    components = schema["components"]["schemas"]
    assert set(components["ErrorDetail"]["properties"]) == {"code", "message", "details", "fields"}
    balls = schema["paths"]["/api/games/{game_id}/balls/"]["post"]
    assert balls["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/BallEntry")
    assert set(balls["responses"]) == {"200", "201", "400", "401", "403", "404", "409"}
    assert balls["responses"]["409"]["content"]["application/json"]["schema"]["$ref"].endswith("/Error")
    # Money is a string in every shape.
    assert components["SaleOperation"]["properties"]["amount"]["type"] == "string"
    assert components["GameView"]["properties"]["bingo_prize"]["type"] == "string"
    assert anonymous_api.get("/api/docs/").status_code == 200


def test_the_schema_is_generated_without_a_warning() -> None:
    """Two components of one name, or choice sets colliding on a field name, make a wrong schema: the
    generator's warnings fail the run (ENUM_NAME_OVERRIDES in settings names each choice set)."""
    out = StringIO()
    call_command("spectacular", "--fail-on-warn", "--file", os.devnull, stderr=out)
    assert "Warning" not in out.getvalue()
