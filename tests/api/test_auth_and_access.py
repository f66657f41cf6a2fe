"""Who may call the API: tokens, sessions, roles per venue, and another venue's objects as unknown (404)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from bingo.traditional.models import Ball, Game, GameState
from tests.api.conftest import nothing_written
from tests.api_support import refused
from tests.cashier_support import on_shift
from tests.conftest import ALL_BALLS, make_user

# --- Token and session authentication -------------------------------------------------------------------


def test_a_token_is_obtained_with_username_and_password_and_opens_the_api(anonymous_api, caller, venue):
    answer = anonymous_api.post(
        "/api/auth/token/", {"username": "caller", "password": "pw-caller"}, format="json"
    )
    assert answer.status_code == 200, answer.content
    token = answer.json()["token"]
    assert token

    # The same token every time for the same user.
    again = anonymous_api.post(
        "/api/auth/token/", {"username": "caller", "password": "pw-caller"}, format="json"
    )
    assert again.json()["token"] == token

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    venues = client.get("/api/venues/")
    assert venues.status_code == 200
    assert [(v["name"], v["roles"]) for v in venues.json()] == [(venue.name, ["caller"])]
    assert venues.json()[0]["line_percent"] == "10.00"


def test_a_wrong_password_gets_no_token(anonymous_api, caller):
    answer = anonymous_api.post("/api/auth/token/", {"username": "caller", "password": "nope"}, format="json")
    refused(answer, 400, "invalid", "unable to log in")


def test_a_token_request_without_password_names_the_field(anonymous_api, caller):
    answer = anonymous_api.post("/api/auth/token/", {"username": "caller"}, format="json")
    error = refused(answer, 400, "invalid", "password")
    assert "password" in error["fields"]


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/api/venues/"),
        ("get", "/api/rooms/"),
        ("get", "/api/games/"),
        ("get", "/api/series/"),
        ("post", "/api/games/"),
        ("post", "/api/series/"),
        ("get", "/api/games/{game}/"),
        ("post", "/api/games/{game}/open-sales/"),
        ("post", "/api/games/{game}/balls/"),
        ("post", "/api/games/{game}/sales/"),
        ("post", "/api/games/{game}/claims/"),
        ("get", "/api/games/{game}/recall/"),
        ("post", "/api/rooms/{room}/sessions/"),
    ],
)
def test_anonymous_requests_answer_401_and_write_nothing(anonymous_api, manual_game, method, url):
    with nothing_written():
        answer = getattr(anonymous_api, method)(url.format(game=manual_game.pk, room=manual_game.room_id))
    refused(answer, 401, "not_authenticated", "credentials")
    assert answer["WWW-Authenticate"] == "Token"


def test_a_bad_token_answers_401(manual_game):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    refused(client.get(f"/api/games/{manual_game.pk}/"), 401, "authentication_failed", "token")


def test_a_logged_in_session_also_works(manual_game, caller):
    client = APIClient(enforce_csrf_checks=True)
    assert client.login(username="caller", password="pw-caller")
    assert client.get(f"/api/games/{manual_game.pk}/").json()["state"] == "scheduled"


def test_a_session_post_without_csrf_token_is_refused(manual_game, caller):
    client = APIClient(enforce_csrf_checks=True)
    assert client.login(username="caller", password="pw-caller")
    with nothing_written():
        answer = client.post(f"/api/games/{manual_game.pk}/open-sales/")
    refused(answer, 403, "permission_denied", "csrf")


# --- Roles ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "body"),
    [
        ("/api/games/{game}/open-sales/", {}),
        ("/api/games/{game}/close-sales/", {}),
        ("/api/games/{game}/start-draw/", {}),
        ("/api/games/{game}/pause/", {}),
        ("/api/games/{game}/resume/", {}),
        ("/api/games/{game}/void/", {"reason": "test"}),
        ("/api/games/{game}/balls/", {"number": 5}),
        ("/api/games/{game}/claims/", {"kind": "line", "series": "A", "serial": 1}),
        ("/api/games/{game}/confirm/", {"kind": "line"}),
        ("/api/games/", {"room": "{room}", "draw_source": "manual"}),
        ("/api/rooms/{room}/sessions/", {"blower_ok": True, "reserve_ok": True, "reader_ok": True}),
        ("/api/sessions/{session}/close/", {}),
    ],
)
def test_a_cashier_cannot_take_caller_actions(cashier_api, drawing, url, body):
    ids = {"game": drawing.pk, "room": drawing.room_id, "session": drawing.session_id}
    body = {k: int(v.format(**ids)) if isinstance(v, str) and "{" in v else v for k, v in body.items()}
    with nothing_written():
        answer = cashier_api.post(url.format(**ids), body, format="json")
    refused(answer, 403, "role_required", "caller")
    drawing.refresh_from_db()
    assert drawing.state == GameState.DRAWING


def test_a_cashier_cannot_read_the_recall_or_master_cards(cashier_api, drawing, card_series):
    refused(cashier_api.get(f"/api/games/{drawing.pk}/recall/"), 403, "role_required", "caller")
    refused(cashier_api.get(f"/api/series/{card_series.pk}/cards/1/"), 403, "role_required", "caller")


def test_a_caller_cannot_sell_nor_create_series(caller_api, on_sale, venue):
    with nothing_written():
        sold = caller_api.post(
            f"/api/games/{on_sale.pk}/sales/", {"series": "A", "first": 1, "last": 2}, format="json"
        )
        series = caller_api.post(
            "/api/series/", {"venue": venue.pk, "code": "Z", "face_value": "1.00", "strips": 1}, format="json"
        )
    refused(sold, 403, "role_required", "cashier")
    refused(series, 403, "role_required", "operator")


def test_the_operator_holds_every_role(operator_api, operator, on_sale, card_series, venue):
    on_shift(operator, venue)  # an operator sells as a cashier, from a shift of their own
    roles = operator_api.get("/api/venues/").json()[0]["roles"]
    # The inspector's reading rights too, and the door's.
    assert roles == ["caller", "cashier", "door", "inspector", "operator"]
    sold = operator_api.post(
        f"/api/games/{on_sale.pk}/sales/", {"series": "A", "first": 1, "last": 6}, format="json"
    )
    assert sold.status_code == 201
    closed = operator_api.post(f"/api/games/{on_sale.pk}/close-sales/")
    assert closed.status_code == 200
    assert operator_api.get(f"/api/series/{card_series.pk}/cards/3/").status_code == 200


def test_a_user_without_any_role_sees_nothing(manual_game, card_series):
    nobody = make_user("nobody")
    client = APIClient()
    client.force_authenticate(nobody)
    assert client.get("/api/venues/").json() == []
    assert client.get("/api/rooms/").json() == []
    assert client.get("/api/games/").json() == []
    assert client.get("/api/series/").json() == []
    refused(client.get(f"/api/games/{manual_game.pk}/"), 404, "unknown_game", f"pk={manual_game.pk}")


# --- Another venue's objects are unknown -----------------------------------------------------------------


def test_another_venues_game_is_unknown(caller_api, cashier_api, other_game, manual_game):
    refused(
        caller_api.get(f"/api/games/{other_game.pk}/"), 404, "unknown_game", "no game", f"pk={other_game.pk}"
    )
    with nothing_written():
        for url, body in [
            (f"/api/games/{other_game.pk}/open-sales/", {}),
            (f"/api/games/{other_game.pk}/balls/", {"number": 5}),
            (f"/api/games/{other_game.pk}/claims/", {"kind": "line", "series": "B", "serial": 1}),
            (f"/api/games/{other_game.pk}/void/", {"reason": "not mine"}),
        ]:
            refused(caller_api.post(url, body, format="json"), 404, "unknown_game", "no game")
        refused(
            cashier_api.post(
                f"/api/games/{other_game.pk}/sales/", {"series": "B", "first": 1, "last": 1}, format="json"
            ),
            404,
            "unknown_game",
        )
    refused(caller_api.get(f"/api/games/{other_game.pk}/recall/"), 404, "unknown_game")
    refused(cashier_api.get(f"/api/games/{other_game.pk}/sales/"), 404, "unknown_game")
    # Lists never show it.
    assert [g["id"] for g in caller_api.get("/api/games/").json()] == [manual_game.pk]
    other_game.refresh_from_db()
    assert other_game.state == GameState.SCHEDULED


def test_another_venues_room_is_unknown(caller_api, other_room, room, ball_set):
    refused(caller_api.get(f"/api/rooms/{other_room.pk}/"), 404, "unknown_room", "no room")
    with nothing_written():
        opened = caller_api.post(
            f"/api/rooms/{other_room.pk}/sessions/",
            {"blower_ok": True, "reserve_ok": True, "reader_ok": True, "inspection_balls": ALL_BALLS},
            format="json",
        )
        created = caller_api.post(
            "/api/games/", {"room": other_room.pk, "draw_source": "manual"}, format="json"
        )
    refused(opened, 404, "unknown_room", "no room")
    refused(created, 404, "unknown_room", "no room")
    refused(caller_api.get(f"/api/games/?room={other_room.pk}"), 404, "unknown_room")
    assert [r["id"] for r in caller_api.get("/api/rooms/").json()] == [room.pk]


def test_another_venues_series_is_unknown(
    caller_api, cashier_api, operator_api, other_series, other_venue, on_sale
):
    refused(caller_api.get(f"/api/series/{other_series.pk}/cards/1/"), 404, "unknown_series", "no series")
    refused(caller_api.get(f"/api/series/?venue={other_venue.pk}"), 404, "unknown_venue", "no venue")
    assert other_series.pk not in [s["id"] for s in caller_api.get("/api/series/").json()]
    with nothing_written():
        # Its code names nothing in the game's venue.
        sold = cashier_api.post(
            f"/api/games/{on_sale.pk}/sales/", {"series": "B", "first": 1, "last": 2}, format="json"
        )
        created = operator_api.post(
            "/api/series/",
            {"venue": other_venue.pk, "code": "C", "face_value": "1.00", "strips": 1},
            format="json",
        )
    refused(sold, 404, "unknown_series", "code=B")
    refused(created, 404, "unknown_venue", "no venue")


def test_another_venues_session_is_unknown(caller_api, other_game):
    session_id = other_game.session_id
    refused(caller_api.get(f"/api/sessions/{session_id}/"), 404, "unknown_session", "no session")
    with nothing_written():
        refused(caller_api.post(f"/api/sessions/{session_id}/close/"), 404, "unknown_session")


def test_balls_of_another_venue_game_are_never_written(caller_api, other_game, other_caller):
    with nothing_written():
        caller_api.post(f"/api/games/{other_game.pk}/balls/", {"number": 1, "ordinal": 1}, format="json")
    assert not Ball.objects.filter(game=other_game).exists()
    assert Game.objects.get(pk=other_game.pk).balls_drawn == 0
