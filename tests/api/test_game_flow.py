"""A whole manual game played through the REST API, from opening the session to the recall."""

from __future__ import annotations

from bingo.traditional.models import Ball, Card, Claim, Game, GameState, PrizeResult
from halls.cashier.models import Shift, ShiftState
from tests.api_support import refused
from tests.bingo.traditional.game_support import grid, top_row
from tests.conftest import ALL_BALLS


def test_a_manual_game_from_session_to_recall(
    room, ball_set, card_series, caller_api, cashier_api, operator_api
):
    # The caller opens the session after the checks and the inspection draw.
    opened = caller_api.post(
        f"/api/rooms/{room.pk}/sessions/",
        {"blower_ok": True, "reserve_ok": True, "reader_ok": True, "inspection_balls": ALL_BALLS[::-1]},
        format="json",
    )
    assert opened.status_code == 201, opened.content
    session = opened.json()
    assert session["is_open"] is True
    assert session["opened_by"] == "caller"
    assert session["inspection_balls"] == ALL_BALLS[::-1]

    # The room now shows its open session.
    assert caller_api.get(f"/api/rooms/{room.pk}/").json()["open_session"] == session["id"]

    created = caller_api.post("/api/games/", {"room": room.pk, "draw_source": "manual"}, format="json")
    assert created.status_code == 201, created.content
    game_id = created.json()["id"]
    assert created.json()["state"] == "scheduled"
    assert created.json()["number"] == 1
    assert caller_api.get(f"/api/rooms/{room.pk}/").json()["current_game"] == game_id

    opened_sales = caller_api.post(f"/api/games/{game_id}/open-sales/")
    assert opened_sales.status_code == 200
    assert opened_sales.json()["state"] == "on_sale"

    # The cashier sells two ranges; money leaves as strings.
    first = cashier_api.post(
        f"/api/games/{game_id}/sales/", {"series": "A", "first": 1, "last": 30}, format="json"
    )
    assert first.status_code == 201, first.content
    assert first.json() | {"id": 0, "created_at": ""} == {
        "id": 0,
        "game": game_id,
        "kind": "sell",
        "series": "A",
        "first": 1,
        "last": 30,
        "cards": 30,
        "amount": "60.00",
        "cashier": "cashier",
        "shift": Shift.objects.get(cashier__username="cashier", state=ShiftState.OPEN).pk,
        "created_at": "",
        "idempotency_key": None,
    }
    second = cashier_api.post(
        f"/api/games/{game_id}/sales/", {"series": "A", "first": 41, "last": 50}, format="json"
    )
    assert second.status_code == 201
    assert second.json()["amount"] == "20.00"
    totals = cashier_api.get(f"/api/games/{game_id}/sales/").json()
    assert (totals["cards_sold"], totals["sales_total"]) == (40, "80.00")
    assert [op["first"] for op in totals["operations"]] == [1, 41]

    # Closing sales fixes and announces the prizes: 10 % and 50 % of 80.00.
    closed_sales = caller_api.post(f"/api/games/{game_id}/close-sales/")
    assert closed_sales.status_code == 200
    view = closed_sales.json()
    assert view["state"] == "sales_closed"
    assert (view["cards_sold"], view["sales_total"], view["line_prize"], view["bingo_prize"]) == (
        40,
        "80.00",
        "8.00",
        "40.00",
    )
    announcement = view["announcement"]
    assert announcement["series"] == [
        {"series": "A", "face_value": "2.00", "cards": 40, "ranges": [[1, 30], [41, 50]]}
    ]
    assert (announcement["line_prize"], announcement["bingo_prize"]) == ("8.00", "40.00")
    assert "del número 1 al 30" in announcement["formula"]

    started = caller_api.post(f"/api/games/{game_id}/start-draw/")
    assert started.status_code == 200
    assert started.json()["state"] == "drawing"

    # The caller enters card 7's top row from the ball reader, naming each ordinal.
    line_numbers = top_row(card_series, 7)
    for ordinal, number in enumerate(line_numbers, start=1):
        entered = caller_api.post(
            f"/api/games/{game_id}/balls/", {"number": number, "ordinal": ordinal}, format="json"
        )
        assert entered.status_code == 201, entered.content
        ball = entered.json()
        assert (ball["ordinal"], ball["number"]) == (ordinal, number)
        assert ball["colour"] == ball_set.colour_of(number)
        assert ball["drawn_at"]

    # A Bingo is not there yet: the claim is recorded as a refused verification.
    early = caller_api.post(
        f"/api/games/{game_id}/claims/", {"kind": "bingo", "series": "A", "serial": 7}, format="json"
    )
    assert early.status_code == 201
    assert (early.json()["valid"], early.json()["refusal"]) == (False, "not_complete")

    line = caller_api.post(
        f"/api/games/{game_id}/claims/", {"kind": "line", "series": "A", "serial": 7}, format="json"
    )
    assert line.status_code == 201, line.content
    claim = line.json()
    assert claim["valid"] is True, claim["reason"]
    assert (claim["kind"], claim["series"], claim["serial"], claim["bound_ordinal"]) == ("line", "A", 7, 5)
    assert claim["winning_row"] == 0
    assert claim["master_card"] == Card.objects.get(series=card_series, serial=7).grid

    paused = caller_api.get(f"/api/games/{game_id}/").json()
    assert (paused["state"], paused["claim_window"]) == ("paused", "line")

    confirmed = caller_api.post(f"/api/games/{game_id}/confirm/", {"kind": "line"}, format="json")
    assert confirmed.status_code == 200, confirmed.content
    prize = confirmed.json()
    assert (prize["kind"], prize["ordinal"], prize["amount"], prize["winners"]) == ("line", 5, "8.00", 1)
    assert (prize["share"], prize["remainder"]) == ("8.00", "0.00")
    assert prize["awards"] == [{"series": "A", "serial": 7, "amount": "8.00"}]
    assert prize["remainder_to"]
    assert caller_api.get(f"/api/games/{game_id}/").json()["state"] == "drawing"

    # The rest of card 7, without ordinals this time.
    rest = sorted(grid(card_series, 7).numbers - set(line_numbers))
    for number in rest:
        assert (
            caller_api.post(f"/api/games/{game_id}/balls/", {"number": number}, format="json").status_code
            == 201
        )

    bingo = caller_api.post(
        f"/api/games/{game_id}/claims/", {"kind": "bingo", "series": "A", "serial": 7}, format="json"
    )
    assert bingo.status_code == 201
    assert bingo.json()["valid"] is True
    confirmed_bingo = caller_api.post(f"/api/games/{game_id}/confirm/", {"kind": "bingo"}, format="json")
    assert confirmed_bingo.status_code == 200
    assert confirmed_bingo.json()["amount"] == "40.00"
    assert confirmed_bingo.json()["awards"] == [{"series": "A", "serial": 7, "amount": "40.00"}]

    final = caller_api.get(f"/api/games/{game_id}/").json()
    assert final["state"] == "closed"
    assert final["claim_window"] == ""
    assert Game.objects.get(pk=game_id).state == GameState.CLOSED

    # No claim once the Bingo is confirmed (TB-12), and nothing recorded for it.
    late = caller_api.post(
        f"/api/games/{game_id}/claims/", {"kind": "bingo", "series": "A", "serial": 8}, format="json"
    )
    refused(late, 409, "game_closed", "closed")

    # The recall shows everything that decided money, for the operator and the caller alike.
    recall = operator_api.get(f"/api/games/{game_id}/recall/")
    assert recall.status_code == 200, recall.content
    record = recall.json()
    assert caller_api.get(f"/api/games/{game_id}/recall/").json() == record
    assert record["state"] == "closed"
    assert (record["room"], record["session"]) == (room.name, session["id"])
    assert [
        (s["kind"], s["first"], s["last"], s["amount"], s["cashier"]) for s in record["sale_operations"]
    ] == [
        ("sell", 1, 30, "60.00", "cashier"),
        ("sell", 41, 50, "20.00", "cashier"),
    ]
    numbers = line_numbers + rest
    assert [b["ball"] for b in record["balls"]] == numbers
    assert [b["ordinal"] for b in record["balls"]] == list(range(1, len(numbers) + 1))
    assert all(b["drawn_at"] and b["colour"] for b in record["balls"])
    assert [(c["kind"], c["valid"]) for c in record["claims"]] == [
        ("bingo", False),
        ("line", True),
        ("bingo", True),
    ]
    assert [(p["kind"], p["amount"], p["winners"]) for p in record["prizes"]] == [
        ("line", "8.00", [{"series": "A", "serial": 7, "amount": "8.00"}]),
        ("bingo", "40.00", [{"series": "A", "serial": 7, "amount": "40.00"}]),
    ]
    assert record["sales_total"] == "80.00"
    assert record["prize_rounding_residue"] == "0.000000"
    assert record["closed_at"] and record["draw_started_at"] and record["sales_closed_at"]
    assert Ball.objects.filter(game_id=game_id).count() == len(numbers)
    assert Claim.objects.filter(game_id=game_id).count() == 3
    assert PrizeResult.objects.filter(game_id=game_id).count() == 2

    # The session closes once its only game is closed.
    closed = caller_api.post(f"/api/sessions/{session['id']}/close/")
    assert closed.status_code == 200
    assert closed.json()["is_open"] is False
    assert closed.json()["closed_by"] == "caller"
