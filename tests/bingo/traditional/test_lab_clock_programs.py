"""The lab clock (issue 26) black-box: a certification lab sets the venue's clock forward through the API
(POST /api/venues/{id}/lab-clock/) and the scheduled Bingo Extras follow it, on the real clock: nothing is
monkeypatched. A Bingo Extra by hour (BA-8, 12/2: 20:00 and 00:00) is not in play at 19:50 and is at
20:01 and again at 00:01; one by operating day (BA-12, 30/1: 20:00 once a day, +1 a day) serves its 20:00
once per operating day (02:00 still belongs to the day before) and the next day's row after.

The games are played by hand through the services (tests/bingo/traditional/program_flow.py); what is in play
is read through the API (GET /api/games/{id}/: the announcement made at the close of sales)."""

# The shared fixtures are imported by name (tests/bingo/traditional/program_flow.py): pytest injects them as
# arguments, which ruff reads as redefinitions.
# ruff: noqa: F811

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

import pytest
from rest_framework.test import APIClient

from bingo.traditional.models import Game
from halls.models import AuditEntry
from halls.services import venueclock
from tests.api_support import api_client
from tests.bingo.traditional.program_flow import SALES, TZ, Hall, hall  # noqa: F401 - fixtures
from tests.four_eyes_support import approved

PARAMS = {**SALES, "amount": "10"}  # 10 % of 120.00 € is 12.00 €: the amount is reached in the first game


@pytest.fixture
def operator_api(hall: Hall) -> APIClient:
    return api_client(hall.operator)


def activate(client: APIClient, hall: Hall, code: str, program_type: str) -> dict[str, Any]:
    body = {"code": code, "program_type": program_type, "params": PARAMS}
    answer = client.post(f"/api/rooms/{hall.room.pk}/programs/", body, format="json")
    done = approved(answer)  # four eyes: a second operator approves the posted terms
    found: dict[str, Any] = client.get(f"/api/programs/{done.result['program']}/").json()
    return found


def move_to(client: APIClient, hall: Hall, at: datetime) -> None:
    answer = client.post(
        f"/api/venues/{hall.room.venue_id}/lab-clock/", {"to": at.isoformat()}, format="json"
    )
    assert answer.status_code == 200, answer.content
    shown = datetime.fromisoformat(answer.json()["now"])
    assert timedelta(0) <= shown - at < timedelta(seconds=30)


def first_day(hall: Hall) -> date:
    """A calendar day ahead of the venue's time, so every move below is forward."""
    return venueclock.now(hall.room.venue_id).astimezone(TZ).date() + timedelta(days=1)


def local(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=TZ)


def announced(client: APIClient, game: Game, code: str) -> dict[str, Any] | None:
    """The program's terms as the game announced them at its close of sales (None: not in play)."""
    answer = client.get(f"/api/games/{game.pk}/")
    assert answer.status_code == 200, answer.content
    programs = answer.json()["announcement"].get("programs", [])
    found = [p for p in programs if p.get("code") == code]
    return found[0] if found else None


def game_at(client: APIClient, hall: Hall, at: datetime) -> Game:
    """Move the venue's clock to `at`, sell 60 cards and close the sales (the game's start), play it out
    with the Bingo at ball 60 (past any Bingo Extra's max ball: none is won, the schedule goes on)."""
    move_to(client, hall, at)
    game = hall.sell_and_close(60)
    assert game.sales_closed_at is not None
    assert timedelta(0) <= game.sales_closed_at - at < timedelta(seconds=30)  # stamped on the venue's clock
    hall.bingo(game, at=60)
    return game


def test_a_bingo_extra_by_hour_comes_into_play_when_the_lab_moves_the_clock_past_its_hours(
    hall: Hall, operator_api: APIClient
) -> None:
    activate(operator_api, hall, "extra-12/2", "BA-8")
    day = first_day(hall)
    before = game_at(operator_api, hall, local(day, 19, 50))
    assert announced(operator_api, before, "extra-12/2") is None
    at_20 = game_at(operator_api, hall, local(day, 20, 1))
    terms = announced(operator_api, at_20, "extra-12/2")
    assert terms is not None, at_20.announcement
    assert (terms["slot"], terms["row"]) == ("20:00", 1)
    served = game_at(operator_api, hall, local(day, 20, 30))  # 20:00 is served: the next is 00:00
    assert announced(operator_api, served, "extra-12/2") is None
    midnight = game_at(operator_api, hall, local(day + timedelta(days=1), 0, 1))
    terms = announced(operator_api, midnight, "extra-12/2")
    assert terms is not None, midnight.announcement
    assert terms["slot"] == "00:00"
    moves = AuditEntry.objects.filter(venue_id=hall.room.venue_id, action="venue.lab_clock_moved").count()
    assert moves == 4


def test_a_bingo_extra_by_operating_day_serves_one_game_a_day_on_the_moved_clock(
    hall: Hall, operator_api: APIClient
) -> None:
    activate(operator_api, hall, "extra-30/1", "BA-12")
    day = first_day(hall)
    first = game_at(operator_api, hall, local(day, 20, 1))
    terms = announced(operator_api, first, "extra-30/1")
    assert terms is not None, first.announcement
    assert (terms["slot"], terms["row"]) == ("20:00", 1)
    # 02:00 of the next calendar day is still the same operating day (it changes at 06:00): served already.
    night = game_at(operator_api, hall, local(day + timedelta(days=1), 2, 0))
    assert announced(operator_api, night, "extra-30/1") is None
    evening = game_at(operator_api, hall, local(day + timedelta(days=1), 19, 0))
    assert announced(operator_api, evening, "extra-30/1") is None
    next_day = game_at(operator_api, hall, local(day + timedelta(days=1), 20, 5))
    terms = announced(operator_api, next_day, "extra-30/1")
    assert terms is not None, next_day.announcement
    assert (terms["slot"], terms["row"]) == ("20:00", 2)  # +1 a day
