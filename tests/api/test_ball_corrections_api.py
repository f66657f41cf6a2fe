"""POST /api/games/{id}/corrections/: a mis-keyed ball corrected through the API, shown in the game's views
and its recall, announced to the room; every refusal a 4xx JSON error that writes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from bingo.traditional.models import Ball, BallCorrection, Game
from bingo.traditional.services import claims, draw, games, sales
from halls import events
from tests.api.conftest import nothing_written
from tests.api_support import refused
from tests.bingo.traditional.game_support import grid, top_row

REASON = "Mis-keyed: the reader read 34"


def correct(client: APIClient, game: Game, **body: Any) -> Any:
    return client.post(f"/api/games/{game.pk}/corrections/", body, format="json")


def enter(game: Game, caller: Any, *numbers: int) -> None:
    for number in numbers:
        draw.enter_ball(game=game, number=number, actor=caller)


def test_a_correction_is_answered_shown_and_announced(
    caller_api, drawing, caller, monkeypatch, django_capture_on_commit_callbacks
):
    enter(drawing, caller, 17, 43, 5)
    published: list[events.Event] = []
    monkeypatch.setattr(events, "publish", published.append)
    with django_capture_on_commit_callbacks(execute=True):
        answer = correct(caller_api, drawing, ordinal=2, number=34, reason=REASON)
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert {k: body[k] for k in ("ordinal", "old", "new", "reason", "corrected_by")} == {
        "ordinal": 2,
        "old": 43,
        "new": 34,
        "reason": REASON,
        "corrected_by": "caller",
    }
    assert list(Ball.objects.filter(game=drawing).order_by("ordinal").values_list("number", flat=True)) == [
        17,
        34,
        5,
    ]
    # The room hears it on its stream, numbered like every event; who and why stay in the audit chain.
    [event] = [e for e in published if e.type == "ball.corrected"]
    assert event.stream == drawing.room.stream
    assert event.seq == events.current_seq(drawing.room.stream)
    data = json.loads(event.encode())["data"]
    assert {k: data[k] for k in ("game", "ordinal", "old", "ball", "colour", "claims")} == {
        "game": drawing.pk,
        "ordinal": 2,
        "old": 43,
        "ball": 34,
        "colour": drawing.ball_set.colour_of(34),
        "claims": [],
    }
    assert "reason" not in data
    # The game's view and its recall show the ball in its place, as corrected.
    view = caller_api.get(f"/api/games/{drawing.pk}/").json()
    assert [(b["ball"], b["corrected_from"]) for b in view["balls"]] == [(17, None), (34, 43), (5, None)]
    recall = caller_api.get(f"/api/games/{drawing.pk}/recall/").json()
    assert recall["balls"][1]["corrected_from"] == 43
    [listed] = recall["ball_corrections"]
    assert (listed["ordinal"], listed["old"], listed["new"], listed["reason"], listed["corrected_by"]) == (
        2,
        43,
        34,
        REASON,
        "caller",
    )


@pytest.mark.parametrize(
    ("body", "status", "code", "words"),
    [
        ({"ordinal": 2, "number": 91, "reason": REASON}, 400, "ball_out_of_range", ["91", "1 to 90"]),
        ({"ordinal": 2, "number": 0, "reason": REASON}, 400, "ball_out_of_range", ["1 to 90"]),
        ({"ordinal": 2, "number": 34, "reason": "  "}, 400, "invalid", ["reason"]),
        ({"ordinal": 2, "number": 34}, 400, "invalid", ["reason"]),
        ({"ordinal": 2, "number": 43, "reason": REASON}, 400, "same_number", ["43"]),
        ({"ordinal": 9, "number": 34, "reason": REASON}, 404, "unknown_ball", ["ball 9"]),
        ({"ordinal": 2, "number": 5, "reason": REASON}, 409, "ball_already_drawn", ["ball 5", "ordinal 3"]),
    ],
)
def test_a_refused_correction_answers_why_and_writes_nothing(
    caller_api, drawing, caller, body, status, code, words
):
    enter(drawing, caller, 17, 43, 5)
    with nothing_written():
        answer = correct(caller_api, drawing, **body)
    refused(answer, status, code, *words)
    assert not BallCorrection.objects.exists()


def test_an_rng_game_is_refused(caller_api, session, room, caller, cashier, card_series):
    game = games.create_game(room=room, actor=caller, draw_source="rng")
    games.open_sales(game=game, actor=caller)
    sales.sell_range(game=game, series=card_series, first=1, last=10, actor=cashier)
    games.close_sales(game=game, actor=caller)
    games.start_draw(game=game, actor=caller)
    ball = draw.draw_rng_ball(game_id=game.pk, ordinal=1)
    assert ball is not None
    with nothing_written():
        answer = correct(caller_api, game, ordinal=1, number=91 - ball.number, reason=REASON)
    refused(answer, 409, "rng_game", "rng")


def test_a_ball_before_a_confirmed_line_is_refused(caller_api, drawing, caller, card_series):
    row = top_row(card_series, 7)
    enter(drawing, caller, *row)
    claims.file_claim(game=drawing, kind="line", series_code="A", serial=7, actor=caller)
    claims.confirm_claims(game=drawing, kind="line", actor=caller)
    spare = next(n for n in range(90, 0, -1) if n not in grid(card_series, 7).numbers)
    with nothing_written():
        answer = correct(caller_api, drawing, ordinal=1, number=spare, reason=REASON)
    error = refused(answer, 409, "claim_confirmed", "line", "ball 5")
    assert error["details"] == {"confirmed_at": len(row)}
    assert not BallCorrection.objects.exists()


def test_only_the_caller_corrects(cashier_api, anonymous_api, drawing, caller):
    enter(drawing, caller, 17)
    with nothing_written():
        as_cashier = correct(cashier_api, drawing, ordinal=1, number=18, reason=REASON)
        anonymous = correct(anonymous_api, drawing, ordinal=1, number=18, reason=REASON)
    refused(as_cashier, 403, "role_required", "caller")
    refused(anonymous, 401, "not_authenticated")
    assert not BallCorrection.objects.exists()


def test_the_schema_documents_the_correction(anonymous_api: APIClient) -> None:
    schema = anonymous_api.get("/api/schema/", {"format": "json"}).json()
    post = schema["paths"]["/api/games/{game_id}/corrections/"]["post"]
    assert post["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/BallCorrectionRequest"
    )
    assert set(post["responses"]) == {"201", "202", "400", "401", "403", "404", "409"}  # 202: four eyes
    balls = schema["components"]["schemas"]["DrawnBall"]["properties"]
    assert balls["corrected_from"]["nullable"] is True
