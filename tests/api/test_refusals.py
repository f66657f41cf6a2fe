"""Every bad input answers its 4xx with a stable code and a message naming the problem, and writes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from bingo.traditional.models import Ball, Claim, Game, GameState, SaleOperation, SoldCard
from bingo.traditional.services import claims, draw, games
from bingo.traditional.services.series import MAX_STRIPS
from halls.models import GameSession, Room
from tests.api.conftest import nothing_written
from tests.api_support import refused
from tests.bingo.traditional.game_support import grid, top_row
from tests.conftest import ALL_BALLS
from tests.four_eyes_support import approved

# --- Sessions -------------------------------------------------------------------------------------------


def open_session(client: APIClient, room: Room, balls: list[Any], **checks: bool) -> Any:
    body = {"blower_ok": True, "reserve_ok": True, "reader_ok": True, "inspection_balls": balls, **checks}
    return client.post(f"/api/rooms/{room.pk}/sessions/", body, format="json")


def test_a_session_with_a_missing_inspection_ball_does_not_open(caller_api, room):
    with nothing_written():
        answer = open_session(caller_api, room, [b for b in ALL_BALLS if b != 42])
    refused(answer, 400, "inspection_incomplete", "missing: [42]")
    assert not GameSession.objects.exists()


def test_a_session_with_a_repeated_inspection_ball_does_not_open(caller_api, room):
    balls = [7 if b == 8 else b for b in ALL_BALLS]
    with nothing_written():
        answer = open_session(caller_api, room, balls)
    refused(answer, 400, "inspection_incomplete", "repeated: [7]", "missing: [8]")


def test_a_session_with_an_out_of_range_inspection_ball_does_not_open(caller_api, room):
    with nothing_written():
        answer = open_session(caller_api, room, [*ALL_BALLS[:-1], 91])
    refused(answer, 400, "inspection_incomplete", "out of 1..90: [91]", "missing: [90]")


@pytest.mark.parametrize(
    ("check", "device"),
    [("blower_ok", "ball blower"), ("reserve_ok", "reserve device"), ("reader_ok", "ball reader")],
)
def test_a_session_with_a_failed_check_does_not_open(caller_api, room, check, device):
    with nothing_written():
        answer = open_session(caller_api, room, ALL_BALLS, **{check: False})
    refused(answer, 400, "checks_failed", device)


def test_a_session_whose_check_is_neither_stated_nor_recorded_names_the_check(caller_api, room):
    """A check left out of the body counts only when it was recorded (POST /api/rooms/{id}/checks/)."""
    with nothing_written():
        answer = caller_api.post(
            f"/api/rooms/{room.pk}/sessions/",
            {"blower_ok": True, "reader_ok": True, "inspection_balls": ALL_BALLS},
            format="json",
        )
    error = refused(answer, 409, "checks_missing", "reserve device")
    assert error["details"]["checks"] == ["reserve"]
    with nothing_written():
        answer = caller_api.post(
            f"/api/rooms/{room.pk}/sessions/", {"inspection_balls": ALL_BALLS}, format="json"
        )
    error = refused(answer, 409, "checks_missing", "ball blower", "reserve device", "ball reader")
    assert error["details"]["checks"] == ["blower", "reserve", "reader"]
    # A check recorded as not working does not count either.
    caller_api.post(
        f"/api/rooms/{room.pk}/checks/", {"check": "reserve", "ok": False, "note": "Motor"}, format="json"
    )
    answer = caller_api.post(
        f"/api/rooms/{room.pk}/sessions/",
        {"blower_ok": True, "reader_ok": True, "inspection_balls": ALL_BALLS},
        format="json",
    )
    refused(answer, 409, "checks_missing", "reserve device")
    assert not GameSession.objects.exists()


def test_inspection_balls_that_are_not_numbers_name_the_field(caller_api, room):
    with nothing_written():
        answer = open_session(caller_api, room, ["x", *ALL_BALLS[1:]])
    error = refused(answer, 400, "invalid", "inspection_balls")
    assert "inspection_balls" in error["fields"]


def test_a_second_open_session_is_refused(caller_api, session, room):
    with nothing_written():
        answer = open_session(caller_api, room, ALL_BALLS)
    refused(answer, 409, "session_already_open", room.name)


def test_a_session_with_a_live_game_does_not_close(caller_api, manual_game):
    with nothing_written():
        answer = caller_api.post(f"/api/sessions/{manual_game.session_id}/close/")
    refused(answer, 409, "session_busy", "game 1", "scheduled")
    assert GameSession.objects.get(pk=manual_game.session_id).is_open


def test_an_unknown_session_is_404(caller_api, session):
    refused(
        caller_api.get(f"/api/sessions/{session.pk + 1000}/"),
        404,
        "unknown_session",
        f"pk={session.pk + 1000}",
    )


# --- Games ----------------------------------------------------------------------------------------------


def test_a_game_needs_an_open_session(caller_api, room):
    with nothing_written():
        answer = caller_api.post("/api/games/", {"room": room.pk, "draw_source": "manual"}, format="json")
    refused(answer, 409, "no_session", "no open session")


def test_a_second_live_game_in_a_room_is_refused(caller_api, manual_game, room):
    with nothing_written():
        answer = caller_api.post("/api/games/", {"room": room.pk, "draw_source": "manual"}, format="json")
    refused(answer, 409, "game_in_play", "already has a game")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"draw_source": "manual"}, "room"),
        ({"room": "x"}, "room"),
        ({"room": "{room}", "draw_source": "dice"}, "draw_source"),
        ({"room": "{room}", "pace_seconds": "fast"}, "pace_seconds"),
    ],
)
def test_a_malformed_game_request_names_the_field(caller_api, session, room, body, field):
    body = {k: room.pk if v == "{room}" else v for k, v in body.items()}
    with nothing_written():
        answer = caller_api.post("/api/games/", body, format="json")
    error = refused(answer, 400, "invalid", field)
    assert field in error["fields"]


def test_a_pace_too_fast_is_refused(caller_api, session, room):
    with nothing_written():
        answer = caller_api.post("/api/games/", {"room": room.pk, "pace_seconds": "0.01"}, format="json")
    refused(answer, 400, "bad_pace", "0.05")


def test_an_unknown_room_is_404(caller_api, session, room):
    with nothing_written():
        answer = caller_api.post("/api/games/", {"room": room.pk + 1000}, format="json")
    refused(answer, 404, "unknown_room", f"pk={room.pk + 1000}")


def test_an_unknown_game_is_404(caller_api, manual_game):
    with nothing_written():
        answer = caller_api.post(f"/api/games/{manual_game.pk + 1000}/open-sales/")
    refused(answer, 404, "unknown_game", f"pk={manual_game.pk + 1000}")


@pytest.mark.parametrize(
    ("route", "doing"),
    [
        ("close-sales", "close sales"),
        ("start-draw", "start the draw"),
        ("pause", "pause the draw"),
        ("resume", "resume the draw"),
    ],
)
def test_a_step_the_state_does_not_allow_answers_409_naming_the_state(caller_api, manual_game, route, doing):
    with nothing_written():
        answer = caller_api.post(f"/api/games/{manual_game.pk}/{route}/")
    error = refused(answer, 409, "wrong_state", "is scheduled", doing)
    assert error["details"] == {"state": "scheduled"}
    manual_game.refresh_from_db()
    assert manual_game.state == GameState.SCHEDULED


def test_opening_sales_twice_is_a_wrong_state(caller_api, on_sale):
    with nothing_written():
        answer = caller_api.post(f"/api/games/{on_sale.pk}/open-sales/")
    refused(answer, 409, "wrong_state", "is on sale", "open sales")


def test_closing_sales_with_nothing_sold_is_refused(caller_api, on_sale):
    with nothing_written():
        answer = caller_api.post(f"/api/games/{on_sale.pk}/close-sales/")
    refused(answer, 409, "nothing_sold", "no cards sold")
    on_sale.refresh_from_db()
    assert on_sale.state == GameState.ON_SALE


def test_voiding_needs_a_reason(caller_api, manual_game):
    with nothing_written():
        answer = caller_api.post(f"/api/games/{manual_game.pk}/void/", {"reason": "   "}, format="json")
    error = refused(answer, 400, "invalid", "reason")
    assert "reason" in error["fields"]


def test_a_void_game_cannot_be_voided_again(caller_api, manual_game):
    url = f"/api/games/{manual_game.pk}/void/"
    approved(caller_api.post(url, {"reason": "blower broke"}, format="json"))  # four eyes
    voided = caller_api.get(f"/api/games/{manual_game.pk}/").json()
    assert (voided["state"], voided["void_reason"]) == ("void", "blower broke")
    with nothing_written():
        answer = caller_api.post(url, {"reason": "again"}, format="json")
    refused(answer, 409, "wrong_state", "void")


def test_the_game_list_refuses_an_unknown_state(caller_api, manual_game):
    error = refused(caller_api.get("/api/games/?state=burning"), 400, "invalid", "state")
    assert "state" in error["fields"]
    listed = caller_api.get("/api/games/?state=scheduled").json()
    assert [(g["id"], g["state"], g["sales_total"]) for g in listed] == [
        (manual_game.pk, "scheduled", "0.00")
    ]
    assert caller_api.get("/api/games/?state=closed").json() == []


# --- Sales ----------------------------------------------------------------------------------------------


def sell(
    client: APIClient, game: Game, series: str = "A", first: Any = 1, last: Any = 10, **extra: Any
) -> Any:
    body = {"series": series, "first": first, "last": last, **extra}
    return client.post(f"/api/games/{game.pk}/sales/", body, format="json")


def test_a_range_already_sold_is_refused(cashier_api, on_sale):
    assert sell(cashier_api, on_sale, first=1, last=10).status_code == 201
    with nothing_written():
        answer = sell(cashier_api, on_sale, first=8, last=12)
    error = refused(answer, 409, "already_sold", "8–10", "already sold")
    assert error["details"] == {"serials": [8, 9, 10]}


def test_a_range_not_in_the_series_is_refused(cashier_api, on_sale):
    with nothing_written():
        answer = sell(cashier_api, on_sale, first=55, last=61)
    refused(answer, 400, "range_not_in_series", "55–61", "series A", "1–60")


def test_a_backwards_range_is_refused(cashier_api, on_sale):
    with nothing_written():
        answer = sell(cashier_api, on_sale, first=10, last=5)
    refused(answer, 400, "bad_range", "10–5", "backwards")


@pytest.mark.parametrize(("first", "last", "field"), [(0, 5, "first"), ("x", 5, "first"), (1, None, "last")])
def test_a_malformed_range_names_the_field(cashier_api, on_sale, first, last, field):
    with nothing_written():
        answer = sell(cashier_api, on_sale, first=first, last=last)
    error = refused(answer, 400, "invalid", field)
    assert field in error["fields"]


def test_an_unknown_series_is_404(cashier_api, on_sale):
    with nothing_written():
        answer = sell(cashier_api, on_sale, series="ZZ")
    refused(answer, 404, "unknown_series", "code=ZZ")


def test_selling_on_a_scheduled_game_is_a_wrong_state(cashier_api, manual_game, card_series):
    with nothing_written():
        answer = sell(cashier_api, manual_game)
    refused(answer, 409, "wrong_state", "is scheduled", "only while it is on sale")


def test_the_same_sale_key_twice_is_one_operation(cashier_api, on_sale):
    first = sell(cashier_api, on_sale, first=1, last=10, idempotency_key="till-1:0001")
    assert first.status_code == 201
    with nothing_written():
        again = sell(cashier_api, on_sale, first=1, last=10, idempotency_key="till-1:0001")
    assert again.status_code == 200
    assert again.json() == first.json()
    assert SaleOperation.objects.filter(game=on_sale).count() == 1
    assert SoldCard.objects.filter(game=on_sale).count() == 10


def test_a_sale_key_reused_for_another_range_is_refused(cashier_api, on_sale):
    assert sell(cashier_api, on_sale, first=1, last=10, idempotency_key="till-1:0002").status_code == 201
    with nothing_written():
        answer = sell(cashier_api, on_sale, first=11, last=20, idempotency_key="till-1:0002")
    refused(answer, 409, "idempotency_key_reused", "till-1:0002", "another operation")
    assert SoldCard.objects.filter(game=on_sale).count() == 10


def test_returns_give_cards_back_once(cashier_api, on_sale):
    assert sell(cashier_api, on_sale, first=1, last=10).status_code == 201
    body = {"series": "A", "first": 9, "last": 10, "idempotency_key": "till-1:r1"}
    returned = cashier_api.post(f"/api/games/{on_sale.pk}/returns/", body, format="json")
    assert returned.status_code == 201, returned.content
    assert (returned.json()["kind"], returned.json()["cards"], returned.json()["amount"]) == (
        "return",
        2,
        "4.00",
    )
    with nothing_written():
        replay = cashier_api.post(f"/api/games/{on_sale.pk}/returns/", body, format="json")
        not_sold = cashier_api.post(
            f"/api/games/{on_sale.pk}/returns/", {"series": "A", "first": 8, "last": 12}, format="json"
        )
    assert replay.status_code == 200
    assert replay.json()["id"] == returned.json()["id"]
    refused(not_sold, 409, "not_sold", "9–12", "nothing returned")
    totals = cashier_api.get(f"/api/games/{on_sale.pk}/sales/").json()
    assert (totals["cards_sold"], totals["sales_total"]) == (8, "16.00")


# --- Balls ----------------------------------------------------------------------------------------------


def enter(client: APIClient, game: Game, number: Any, ordinal: int | None = None) -> Any:
    body = {"number": number} if ordinal is None else {"number": number, "ordinal": ordinal}
    return client.post(f"/api/games/{game.pk}/balls/", body, format="json")


@pytest.mark.parametrize("number", [0, 91, -3])
def test_a_ball_out_of_range_is_refused(caller_api, drawing, number):
    with nothing_written():
        answer = enter(caller_api, drawing, number)
    refused(answer, 400, "ball_out_of_range", f"ball {number}", "1 to 90")
    assert not Ball.objects.filter(game=drawing).exists()


@pytest.mark.parametrize("number", ["x", "", None, 4.5])
def test_a_ball_that_is_not_a_number_names_the_field(caller_api, drawing, number):
    with nothing_written():
        answer = enter(caller_api, drawing, number)
    error = refused(answer, 400, "invalid", "number")
    assert "number" in error["fields"]


def test_a_ball_already_drawn_is_refused(caller_api, drawing):
    assert enter(caller_api, drawing, 17).status_code == 201
    assert enter(caller_api, drawing, 3).status_code == 201
    with nothing_written():
        answer = enter(caller_api, drawing, 17)
        with_ordinal = enter(caller_api, drawing, 17, ordinal=3)
    error = refused(answer, 409, "ball_already_drawn", "ball 17", "ordinal 1")
    assert error["details"] == {"ordinal": 1}
    refused(with_ordinal, 409, "ball_already_drawn", "ball 17")


def test_a_wrong_ordinal_is_refused(caller_api, drawing):
    assert enter(caller_api, drawing, 17, ordinal=1).status_code == 201
    with nothing_written():
        skipped = enter(caller_api, drawing, 18, ordinal=3)
        taken = enter(caller_api, drawing, 18, ordinal=1)
    refused(skipped, 409, "wrong_ordinal", "ordinal 2", "not 3")
    refused(taken, 409, "wrong_ordinal", "ordinal 2", "not 1")


def test_the_same_ball_and_ordinal_twice_is_one_ball(caller_api, drawing):
    first = enter(caller_api, drawing, 17, ordinal=1)
    assert first.status_code == 201
    with nothing_written():
        again = enter(caller_api, drawing, 17, ordinal=1)
    assert again.status_code == 200
    assert again.json() == first.json()
    assert Ball.objects.filter(game=drawing).count() == 1
    drawing.refresh_from_db()
    assert drawing.balls_drawn == 1


def test_no_ball_before_the_draw_starts(caller_api, on_sale):
    with nothing_written():
        answer = enter(caller_api, on_sale, 5)
    refused(answer, 409, "wrong_state", "is on sale", "no ball")


def test_no_ball_by_hand_in_an_rng_game(caller_api, session, room, caller, ball_set):
    game = games.create_game(room=room, actor=caller, draw_source="rng")
    with nothing_written():
        answer = enter(caller_api, game, 5)
    refused(answer, 409, "rng_game", "rng")


# --- Claims ---------------------------------------------------------------------------------------------


def claim(
    client: APIClient, game: Game, kind: str = "line", series: str = "A", serial: int = 7, **extra: Any
) -> Any:
    body = {"kind": kind, "series": series, "serial": serial, **extra}
    return client.post(f"/api/games/{game.pk}/claims/", body, format="json")


def test_an_unknown_card_serial_is_404(caller_api, drawing):
    enter(caller_api, drawing, 5)
    with nothing_written():
        answer = claim(caller_api, drawing, serial=999)
    refused(answer, 404, "unknown_card", "no card 999", "1–60")


def test_an_unknown_series_in_a_claim_is_404(caller_api, drawing):
    enter(caller_api, drawing, 5)
    with nothing_written():
        answer = claim(caller_api, drawing, series="ZZ")
    refused(answer, 404, "unknown_series", "series ZZ")


def test_another_venues_series_in_a_claim_is_404(caller_api, drawing, other_series):
    enter(caller_api, drawing, 5)
    with nothing_written():
        answer = claim(caller_api, drawing, series="B", serial=1)
    refused(answer, 404, "unknown_series", "series B")


@pytest.mark.parametrize(
    ("body", "field"),
    [({"kind": "house", "series": "A", "serial": 1}, "kind"), ({"kind": "line", "series": "A"}, "serial")],
)
def test_a_malformed_claim_names_the_field(caller_api, drawing, body, field):
    with nothing_written():
        answer = caller_api.post(f"/api/games/{drawing.pk}/claims/", body, format="json")
    error = refused(answer, 400, "invalid", field)
    assert field in error["fields"]


def test_a_claim_before_the_draw_is_a_wrong_state(caller_api, on_sale):
    with nothing_written():
        answer = claim(caller_api, on_sale)
    refused(answer, 409, "wrong_state", "is on sale", "has not started")


def test_a_card_not_sold_is_a_recorded_refusal(caller_api, drawing, card_series):
    for number in top_row(card_series, 40):
        enter(caller_api, drawing, number)
    answer = claim(caller_api, drawing, serial=40)
    assert answer.status_code == 201
    assert (answer.json()["valid"], answer.json()["refusal"], answer.json()["master_card"]) == (
        False,
        "not_sold",
        None,
    )
    assert "not sold" in answer.json()["reason"]
    drawing.refresh_from_db()
    assert drawing.state == GameState.DRAWING


def test_the_same_claim_key_is_one_claim(caller_api, drawing, card_series):
    for number in top_row(card_series, 7):
        enter(caller_api, drawing, number)
    first = claim(caller_api, drawing, idempotency_key="console:1")
    assert first.status_code == 201
    assert first.json()["valid"] is True
    with nothing_written():
        again = claim(caller_api, drawing, idempotency_key="console:1")
    assert again.status_code == 200
    assert again.json() == first.json()
    assert Claim.objects.filter(game=drawing).count() == 1


def test_a_claim_after_closing_is_refused_and_not_recorded(caller_api, drawing, card_series, caller):
    for number in sorted(grid(card_series, 7).numbers):
        draw.enter_ball(game=drawing, number=number, actor=caller)
    claims.file_claim(game=drawing, kind="bingo", series_code="A", serial=7, actor=caller)
    claims.confirm_claims(game=drawing, kind="bingo", actor=caller)
    with nothing_written():
        late_bingo = claim(caller_api, drawing, kind="bingo", serial=8)
        late_line = claim(caller_api, drawing, kind="line", serial=7, idempotency_key="late")
    refused(late_bingo, 409, "game_closed", "closed")
    refused(late_line, 409, "game_closed", "closed")
    assert not Claim.objects.filter(game=drawing, serial=8).exists()


def test_confirming_with_no_valid_claim_waiting_is_refused(caller_api, drawing):
    enter(caller_api, drawing, 5)
    with nothing_written():
        answer = caller_api.post(f"/api/games/{drawing.pk}/confirm/", {"kind": "line"}, format="json")
        bad_kind = caller_api.post(f"/api/games/{drawing.pk}/confirm/", {"kind": "house"}, format="json")
    refused(answer, 409, "nothing_to_confirm", "no valid line claim")
    refused(bad_kind, 400, "invalid", "kind")


def test_resuming_with_a_claim_window_open_is_refused(caller_api, drawing, card_series):
    for number in top_row(card_series, 7):
        enter(caller_api, drawing, number)
    assert claim(caller_api, drawing).json()["valid"] is True
    with nothing_written():
        answer = caller_api.post(f"/api/games/{drawing.pk}/resume/")
    refused(answer, 409, "claims_pending", "confirm the line")


# --- Series ---------------------------------------------------------------------------------------------


def test_the_operator_creates_a_series_and_the_caller_reads_its_master_cards(operator_api, caller_api, venue):
    body = {"venue": venue.pk, "code": "S1", "face_value": "1.50", "strips": 2, "seed": "ab" * 8}
    created = operator_api.post("/api/series/", body, format="json")
    assert created.status_code == 201, created.content
    made = created.json()
    assert (made["code"], made["face_value"], made["strips"], made["card_count"]) == ("S1", "1.50", 2, 12)
    assert "seed" not in made
    listed = caller_api.get(f"/api/series/?venue={venue.pk}").json()
    assert [s["code"] for s in listed] == ["S1"]
    card = caller_api.get(f"/api/series/{made['id']}/cards/12/")
    assert card.status_code == 200
    assert card.json()["serial"] == 12
    assert len(card.json()["grid"]) == 3
    assert card.json()["security_code"]
    refused(caller_api.get(f"/api/series/{made['id']}/cards/13/"), 404, "unknown_card", "serial=13")
    with nothing_written():
        again = operator_api.post("/api/series/", body, format="json")
    refused(again, 409, "series_exists", "S1")


@pytest.mark.parametrize(
    ("change", "status", "code", "word"),
    [
        ({"strips": 0}, 400, "bad_strips", f"1 to {MAX_STRIPS}"),
        ({"strips": MAX_STRIPS + 1}, 400, "bad_strips", str(MAX_STRIPS + 1)),
        ({"face_value": "0.00"}, 400, "bad_face_value", "positive"),
        ({"face_value": "1.005"}, 400, "invalid", "face_value"),
        ({"code": ""}, 400, "invalid", "code"),
    ],
)
def test_a_bad_series_is_refused(operator_api, venue, change, status, code, word):
    body = {"venue": venue.pk, "code": "S2", "face_value": "1.00", "strips": 1, **change}
    with nothing_written():
        answer = operator_api.post("/api/series/", body, format="json")
    refused(answer, status, code, word)
