"""What an electronic speciality's hall screens and player terminals acknowledged showing, read back (issue
28): the inspector's record of an electronic game shows, per screen and per terminal, when each ball was shown
and the gaps (a terminal away for three balls that its reconnect's snapshot brought back), answers a claim
dispute for one ball (?ball=N), and the operator's watch flags a device that has not shown the current ball
within HALL_ACK_LATE_SECONDS."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from bingo.electronic.models import ElectronicGame, Speciality, Terminal
from bingo.electronic.services import games, screen_acks
from bingo.venuewide import records
from halls import acks
from halls.models import Role, Screen
from halls.services import acks as ack_services
from tests.api_support import api_client, refused
from tests.bingo.electronic.support import (
    buy,
    enqueued,
    forced_balls,
    funded_card,
    make_speciality,
    make_terminal,
    open_verified_session,
)
from tests.bingo.electronic.test_game_known_balls import BALLS, C1, C2, C7
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

FRAME = "egame.ball"
DRAWN = 7  # balls drawn in the game of these tests


def shown(
    kind: str,
    device: int,
    stream: str,
    *,
    seq: int,
    game: ElectronicGame,
    balls: list[int],
    snapshot: bool = False,
) -> None:
    """One device's ack, as its socket hands it to the batch write."""
    if snapshot:
        digest, frame = acks.snapshot_digest(seq, game.pk, balls), acks.SNAPSHOT
    else:
        digest, frame = acks.ball_digest(FRAME, game.pk, balls[0]), FRAME
    now = int(time.time() * 1000)
    ack = acks.Ack(seq=seq, rendered_ms=now, digest=digest, frame=frame, game=game.pk, balls=tuple(balls))
    ack_services.record_acks(acks=[ack_services.Received(kind, device, stream, ack, now, True)], actor="test")


@pytest.fixture
def played(
    venue: Any, operator: Any, cashier: Any
) -> tuple[Speciality, ElectronicGame, Screen, Terminal, Terminal]:
    return play(venue, operator, cashier)


def play(
    venue: Any, operator: Any, cashier: Any
) -> tuple[Speciality, ElectronicGame, Screen, Terminal, Terminal]:
    """A game with DRAWN balls; the room's screen and terminal T-1 showed each as it was drawn (the screen all
    but the last); T-2 missed the 2nd, 3rd and 4th (away), its reconnect's snapshot brought them back, then
    it showed the 5th and 6th, and not the 7th."""
    speciality = make_speciality(venue, operator, code="SALA-A")
    screen = Screen.objects.create(venue=venue, room=speciality.room, name="Pantalla de sala")
    first, _ = make_terminal(speciality, operator, name="T-1")
    second, _ = make_terminal(speciality, operator, name="T-2")
    open_verified_session(speciality, operator)
    card = funded_card(venue, cashier)
    stream = speciality.stream
    with enqueued(), forced_balls(BALLS):
        games.set_running(speciality=speciality, running=True, actor=operator)
        game = speciality.games.get()
        buy(game, first, card, [C1, C2, C7], "k1")
        games.close_sales(game, early=True)
        for ordinal in range(1, DRAWN + 1):
            games.draw_ball(game.pk, ordinal)
            ball = BALLS[ordinal - 1]
            seq = 100 + ordinal
            shown("terminal", first.pk, stream, seq=seq, game=game, balls=[ball])
            if ordinal < DRAWN:
                shown("screen", screen.pk, stream, seq=seq, game=game, balls=[ball])
            if ordinal == 1 or ordinal in (5, 6):
                shown("terminal", second.pk, stream, seq=seq, game=game, balls=[ball])
            if ordinal == 4:  # T-2 back: its snapshot shows the four balls drawn so far
                shown("terminal", second.pk, stream, seq=seq, game=game, balls=BALLS[:4], snapshot=True)
    game.refresh_from_db()
    return speciality, game, screen, first, second


def test_the_record_shows_a_terminal_that_missed_three_balls(played: Any) -> None:
    _speciality, game, screen, first, second = played
    rows = {(r["kind"], r["id"]): r for r in records.electronic_record(game)["devices"]}
    assert set(rows) == {("screen", screen.pk), ("terminal", first.pk), ("terminal", second.pk)}
    assert (rows[("terminal", first.pk)]["shown_live"], rows[("terminal", first.pk)]["gaps"]) == (DRAWN, [])
    t2 = rows[("terminal", second.pk)]
    assert t2["name"] == "T-2" and t2["shown_live"] == 3
    assert [(g["ball"], g["how"]) for g in t2["gaps"]] == [
        (BALLS[1], "snapshot"),
        (BALLS[2], "snapshot"),
        (BALLS[3], "snapshot"),
        (BALLS[6], "never"),
    ]
    assert t2["digest_mismatches"] == 0
    screen_row = rows[("screen", screen.pk)]
    assert [(g["ball"], g["how"]) for g in screen_row["gaps"]] == [(BALLS[6], "never")]


def test_the_inspector_page_shows_the_gaps_and_answers_a_dispute(played: Any, venue: Any) -> None:
    _speciality, game, screen, first, second = played
    client = Client()
    client.force_login(make_user("inspector", venue, Role.INSPECTOR))
    page = client.get(f"/inspector/electronic/games/{game.pk}/?ball={BALLS[2]}")
    assert page.status_code == 200
    html = page.content.decode()
    gaps = " ".join(str(b) for b in (BALLS[1], BALLS[2], BALLS[3], BALLS[6]))
    assert 'data-kind="terminal" data-gaps="4"' in html and f'data-gap-balls="{gaps}"' in html
    dispute = {(d["kind"], d["id"]): d["how"] for d in page.context["dispute"]["screens"]}
    assert dispute == {
        ("screen", screen.pk): "live",
        ("terminal", first.pk): "live",
        ("terminal", second.pk): "snapshot",
    }
    # A ball never drawn in the game: said so, nobody's fault.
    never = next(n for n in range(1, 91) if n not in BALLS[:DRAWN])
    assert (
        client.get(f"/inspector/electronic/games/{game.pk}/?ball={never}").context["dispute"]["screens"] == []
    )
    # The inspection's index lists the game with its record and its public draw page.
    index = client.get("/inspector/").content.decode()
    assert f'data-egame="{game.pk}"' in index
    assert (
        f'href="/inspector/electronic/games/{game.pk}/"' in index
        and f'href="/draws/electronic/{game.pk}/"' in index
    )
    # Another venue's inspector finds no such game.
    other = make_user("inspector-elsewhere", None, Role.INSPECTOR)
    client.force_login(other)
    assert client.get(f"/inspector/electronic/games/{game.pk}/").status_code == 404


def test_the_operator_watch_flags_what_has_not_shown_the_current_ball(
    played: Any, operator: Any, venue: Any, settings: Any
) -> None:
    speciality, game, screen, first, second = played
    state = screen_acks.operator_watch(speciality)  # just drawn: nobody is late yet
    assert (state["game"], state["ball"], state["ordinal"]) == (game.pk, BALLS[DRAWN - 1], DRAWN)
    assert [(s["name"], s["shown"], s["late"]) for s in state["screens"]] == [
        ("Pantalla de sala", False, False),
        ("T-1", True, False),
        ("T-2", False, False),
    ]
    later = timezone.now() + timedelta(seconds=2.5)
    state = screen_acks.operator_watch(speciality, now=later)
    assert [(s["kind"], s["id"], s["late"]) for s in state["screens"]] == [
        ("screen", screen.pk, True),
        ("terminal", first.pk, False),
        ("terminal", second.pk, True),
    ]

    settings.HALL_ACK_LATE_SECONDS = 0  # through the API, as the operator's page polls it
    answer = api_client(operator).get(f"/api/electronic/specialities/{speciality.pk}/screens/")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["ball"] == BALLS[DRAWN - 1] and body["late_after"] == 0
    assert {s["name"]: (s["kind"], s["late"]) for s in body["screens"]} == {
        "Pantalla de sala": ("screen", True),
        "T-1": ("terminal", False),
        "T-2": ("terminal", True),
    }
    cashier_only = make_user("till-only", venue, Role.CASHIER)
    refused(
        api_client(cashier_only).get(f"/api/electronic/specialities/{speciality.pk}/screens/"),
        403,
        "role_required",
    )


def test_no_game_drawing_nothing_to_watch(venue: Any, operator: Any) -> None:
    speciality = make_speciality(venue, operator)
    state = screen_acks.operator_watch(speciality)
    assert (state["game"], state["ball"], state["screens"]) == (None, None, [])
