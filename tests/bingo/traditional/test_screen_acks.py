"""The room's screens' acks read back (issue 28): the caller's console asks whether each screen has shown the
current ball (flagged after HALL_ACK_LATE_SECONDS), and the inspector's game record shows, per screen, when
each ball was shown and the gaps, and answers a claim dispute for one ball on every screen."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from bingo.traditional.models import Game
from bingo.traditional.services import draw, screen_acks
from bingo.venuewide import records
from halls import acks
from halls.models import Role, Screen
from halls.services import acks as ack_services
from tests.api_support import api_client, refused
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


def shown(screen: Screen, *, seq: int, game: Game, balls: list[int], snapshot: bool = False) -> None:
    """The screen's ack, as its socket would hand it to the batch write."""
    if snapshot:
        digest, frame = acks.snapshot_digest(seq, game.pk, balls), acks.SNAPSHOT
    else:
        digest, frame = acks.ball_digest("ball.drawn", game.pk, balls[0]), "ball.drawn"
    now = int(time.time() * 1000)
    ack = acks.Ack(seq=seq, rendered_ms=now, digest=digest, frame=frame, game=game.pk, balls=tuple(balls))
    ack_services.record_acks(
        acks=[ack_services.Received("screen", screen.pk, screen.room.stream, ack, now, True)], actor="test"
    )


@pytest.fixture
def screens(screen: Screen) -> tuple[Screen, Screen]:
    return screen, Screen.objects.create(venue=screen.venue, room=screen.room, name="Pantalla 2")


def test_the_console_flags_a_screen_that_has_not_shown_the_current_ball(
    drawing_game: Game, caller: Any, screens: tuple[Screen, Screen], settings: Any
) -> None:
    main, _second = screens
    draw.enter_ball(game=drawing_game, number=43, actor=caller)
    shown(main, seq=1, game=drawing_game, balls=[43])
    state = screen_acks.console_screens(drawing_game.room)  # just drawn: nobody is late yet
    assert (state["ball"], state["late_after"]) == (43, 2.0)
    assert [(s["name"], s["shown"], s["late"]) for s in state["screens"]] == [
        ("Pantalla 2", False, False),
        ("Pantalla principal", True, False),
    ]
    later = timezone.now() + timedelta(seconds=2.5)
    state = screen_acks.console_screens(drawing_game.room, now=later)
    assert [(s["name"], s["late"]) for s in state["screens"]] == [
        ("Pantalla 2", True),
        ("Pantalla principal", False),
    ]

    settings.HALL_ACK_LATE_SECONDS = 0  # through the API, as the console polls it
    answer = api_client(caller).get(f"/api/rooms/{drawing_game.room_id}/console/screens/")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["ball"] == 43
    assert {s["name"]: (s["shown"], s["late"]) for s in body["screens"]} == {
        "Pantalla 2": (False, True),
        "Pantalla principal": (True, False),
    }


def test_the_console_answer_is_the_callers_only(drawing_game: Game, venue: Any) -> None:
    cashier_only = make_user("till-only", venue, Role.CASHIER)
    refused(
        api_client(cashier_only).get(f"/api/rooms/{drawing_game.room_id}/console/screens/"),
        403,
        "role_required",
    )


def test_the_record_shows_each_screens_gaps_and_answers_a_dispute(
    drawing_game: Game, caller: Any, screens: tuple[Screen, Screen], venue: Any
) -> None:
    main, second = screens
    for n, number in enumerate([43, 12, 7, 88], start=1):
        draw.enter_ball(game=drawing_game, number=number, actor=caller)
        shown(main, seq=n, game=drawing_game, balls=[number])
    shown(second, seq=1, game=drawing_game, balls=[43])
    # The second screen was away for 12 and 7, and its reconnect's snapshot showed them all.
    shown(second, seq=4, game=drawing_game, balls=[43, 12, 7, 88], snapshot=True)

    rows = {r["name"]: r for r in records.screens_record(drawing_game)}
    assert (rows["Pantalla principal"]["shown_live"], rows["Pantalla principal"]["gaps"]) == (4, [])
    gaps = rows["Pantalla 2"]["gaps"]
    assert [(g["ball"], g["how"]) for g in gaps] == [(12, "snapshot"), (7, "snapshot"), (88, "snapshot")]
    assert rows["Pantalla 2"]["digest_mismatches"] == 0

    client = Client()
    client.force_login(make_user("inspector", venue, Role.INSPECTOR))
    page = client.get(f"/inspector/games/{drawing_game.pk}/?ball=12")
    assert page.status_code == 200
    dispute = page.context["dispute"]
    assert {d["screen"]: d["how"] for d in dispute["screens"]} == {
        "Pantalla principal": "live",
        "Pantalla 2": "snapshot",
    }
    html = page.content.decode()
    assert 'data-section="screens"' in html and 'data-gap-balls="12 7 88"' in html
    # A ball never drawn in the game: said so, not a screen's fault.
    assert client.get(f"/inspector/games/{drawing_game.pk}/?ball=90").context["dispute"]["screens"] == []
