"""A void's internal reason stays internal: the screens get the caller's public message (or none).

The audit and the recall keep the reason, the caller's console hears it on the room's staff stream, and
the room's public stream and the screens' snapshot carry only the public message."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from django.test import Client

from bingo.traditional.models import Game
from bingo.traditional.services import console, games
from halls import events
from halls.eventtypes import EventType
from halls.models import AuditEntry, Screen
from tests.four_eyes_support import approved

REASON = "Cajero vendió la serie B dos veces: devolución pendiente"
MESSAGE = "Incidencia técnica: se devolverá el importe de los cartones"


def voided(game: Game, caller: Any, capture: Any, **kwargs: Any) -> list[events.Event]:
    published: list[events.Event] = []
    with mock.patch.object(events, "publish", published.append), capture(execute=True):
        games.void_game(game=game, actor=caller, **kwargs)
    return published


@pytest.mark.django_db
def test_the_screens_get_the_public_message_and_never_the_reason(
    manual_game: Game, caller: Any, room: Any, screen: Screen, django_capture_on_commit_callbacks: Any
) -> None:
    published = voided(
        manual_game,
        caller,
        django_capture_on_commit_callbacks,
        reason=REASON,
        public_message=f"  {MESSAGE} \n",
    )
    by_stream = {(e.stream, e.type): e for e in published}
    public = by_stream[(room.stream, EventType.GAME_VOIDED)]
    assert public.data["message"] == MESSAGE
    assert REASON not in public.encode() and "reason" not in public.data
    staff = by_stream[(console.staff_stream(room.pk), EventType.GAME_VOID_REASON)]
    assert staff.data == {"game": manual_game.pk, "reason": REASON}
    entry = AuditEntry.objects.filter(action="game.voided").get()
    assert (entry.data["reason"], entry.data["message"]) == (REASON, MESSAGE)

    snapshot = Client().get(f"/screens/{screen.token}/snapshot/")
    assert snapshot.status_code == 200
    assert REASON not in snapshot.content.decode()
    game = snapshot.json()["sections"]["bingo"]["game"]
    assert (game["state"], game["void_message"]) == ("void", MESSAGE)
    assert "void_reason" not in game


@pytest.mark.django_db
def test_with_no_public_message_the_screens_get_none(
    manual_game: Game, caller: Any, room: Any, django_capture_on_commit_callbacks: Any
) -> None:
    published = voided(manual_game, caller, django_capture_on_commit_callbacks, reason=REASON)
    public = next(e for e in published if e.stream == room.stream)
    assert public.data["message"] == "" and REASON not in public.encode()


@pytest.mark.django_db
def test_the_api_takes_the_public_message_and_the_caller_still_sees_the_reason(
    caller_api: Any, manual_game: Game
) -> None:
    url = f"/api/games/{manual_game.pk}/void/"
    too_long = caller_api.post(url, {"reason": REASON, "public_message": "x" * 201}, format="json")
    assert too_long.status_code == 400 and "public_message" in too_long.json()["error"]["fields"]
    manual_game.refresh_from_db()
    assert manual_game.state != "void"
    # Four eyes: the void is proposed, then approved by a second caller.
    approved(caller_api.post(url, {"reason": REASON, "public_message": MESSAGE}, format="json"))
    view = caller_api.get(f"/api/games/{manual_game.pk}/").json()
    assert (view["state"], view["void_reason"], view["void_message"]) == ("void", REASON, MESSAGE)
