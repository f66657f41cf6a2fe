"""The caller console's WebSocket end to end: config.asgi.application, the Redis pub/sub channel layer, real
commits, a real session cookie.

Only a caller (or operator) of the room's venue joins; the socket delivers the room's public stream and
the room's staff stream, each numbered on its own; the unclaimed winners are emitted on the staff stream
in the transaction of the ball that made them (or the claim or prize that took them off), published on
its commit, and never reach a hall screen.
"""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client

from bingo.cards import CardGrid
from bingo.traditional.models import Card, CardSeries, Game
from bingo.traditional.services import claims, console, draw
from config.asgi import application
from halls.events import current_seq
from halls.eventtypes import EventType
from halls.models import Role, Room, Screen
from tests.conftest import make_user

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("isolated_layer")]

TIMEOUT = 5


def logged_in_cookie(user: User) -> str:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}"


session_cookie = database_sync_to_async(logged_in_cookie)


async def open_console(room_id: int, user: User | None) -> tuple[WebsocketCommunicator, bool, Any]:
    headers = [(b"origin", b"http://testserver")]
    if user is not None:
        headers.append((b"cookie", (await session_cookie(user)).encode()))
    communicator = WebsocketCommunicator(application, f"/ws/console/rooms/{room_id}/", headers=headers)
    connected, code = await communicator.connect(timeout=TIMEOUT)
    return communicator, connected, code


async def receive(communicator: WebsocketCommunicator) -> dict[str, Any]:
    event: dict[str, Any] = await communicator.receive_json_from(timeout=TIMEOUT)
    return event


async def test_only_the_rooms_callers_join(
    layer: Any, room: Room, screen: Screen, caller: User, cashier: User, operator: User, other_venue: Any
) -> None:
    stranger = await database_sync_to_async(make_user)("stranger", other_venue, Role.CALLER)
    refused = [(None, 4403), (cashier, 4403), (stranger, 4404)]
    for user, expected in refused:
        _, connected, code = await open_console(room.pk, user)
        assert (connected, code) == (False, expected), user
    # A screen's token opens the screen socket, never the console's.
    communicator = WebsocketCommunicator(application, f"/ws/console/rooms/{screen.token}/")
    with pytest.raises(ValueError, match="No route found"):
        await communicator.connect(timeout=TIMEOUT)
    inspector = await database_sync_to_async(make_user)("inspector", room.venue, Role.INSPECTOR)
    for user in (caller, operator, inspector):  # the inspector watches, read-only (the socket takes nothing)
        communicator, connected, _ = await open_console(room.pk, user)
        assert connected, user
        await communicator.disconnect()


async def test_the_console_gets_balls_and_unclaimed_winners_and_screens_do_not(
    layer: Any, screen: Screen, drawing_game: Game, card_series: CardSeries, caller: User
) -> None:
    room_stream = screen.room.stream
    staff_stream = console.staff_stream(screen.room_id)
    start = await database_sync_to_async(current_seq)(room_stream)
    desk, connected, _ = await open_console(screen.room_id, caller)
    assert connected
    public = WebsocketCommunicator(application, f"/ws/screens/{screen.token}/")
    assert (await public.connect(timeout=TIMEOUT))[0]

    card = await database_sync_to_async(Card.objects.get)(series=card_series, serial=5)
    top_row = sorted(n for n in CardGrid.from_json(card.grid).rows[0] if n)

    def play() -> None:
        for number in top_row:
            draw.enter_ball(game=drawing_game, number=number, actor=caller)

    await database_sync_to_async(play)()
    received = [await receive(desk) for _ in range(len(top_row) + 1)]
    balls = [e for e in received if e["type"] == "ball.drawn"]
    lists = [e for e in received if e["type"] == EventType.CONSOLE_UNCLAIMED]
    assert [e["seq"] for e in balls] == list(range(start + 1, start + 1 + len(top_row)))
    assert {e["stream"] for e in balls} == {room_stream}
    # One list, after the ball that completed the row: the balls before changed nothing a console shows.
    assert [(e["stream"], e["seq"], e["data"]["ordinal"]) for e in lists] == [(staff_stream, 1, len(top_row))]
    last = lists[-1]["data"]
    assert last["game"] == drawing_game.pk
    assert {"series": "A", "serial": 5, "since_ball": len(top_row)} in last["line"]
    assert last["line_count"] == len(last["line"])

    # A valid claim takes the card off the list, on the staff stream after the public verdict.
    await database_sync_to_async(claims.file_claim)(
        game=drawing_game, kind="line", series_code="A", serial=5, actor=caller
    )
    verdict, after_claim = await receive(desk), await receive(desk)
    if verdict["type"] == EventType.CONSOLE_UNCLAIMED:
        verdict, after_claim = after_claim, verdict
    assert (verdict["type"], verdict["data"]["valid"]) == ("claim.verified", True)
    assert after_claim["seq"] == 2
    assert all(row["serial"] != 5 for row in after_claim["data"]["line"])
    assert await desk.receive_nothing(timeout=0.3)

    # The screen saw the public events only.
    seen = []
    while not await public.receive_nothing(timeout=0.3):
        seen.append(await receive(public))
    assert [e["type"] for e in seen] == ["ball.drawn"] * len(top_row) + ["claim.verified"]
    assert await database_sync_to_async(current_seq)(staff_stream) == 2
    await desk.disconnect()
    await public.disconnect()


async def test_a_rolled_back_ball_tells_the_consoles_nothing(
    layer: Any, monkeypatch: pytest.MonkeyPatch, room: Room, drawing_game: Game, card_series: CardSeries,
    caller: User,
) -> None:  # fmt: skip
    """The list is numbered in the ball's own transaction and published on its commit: never without it."""
    staff_stream = console.staff_stream(room.pk)
    card = await database_sync_to_async(Card.objects.get)(series=card_series, serial=5)
    *first, last = sorted(n for n in CardGrid.from_json(card.grid).rows[0] if n)
    for number in first:
        await database_sync_to_async(draw.enter_ball)(game=drawing_game, number=number, actor=caller)
    desk, connected, _ = await open_console(room.pk, caller)
    assert connected
    numbered = console.emit_unclaimed

    def fail(game: Game) -> None:
        numbered(game)
        raise RuntimeError("the ball's transaction fails after the list was numbered")

    def enter_and_fail() -> None:
        with monkeypatch.context() as m:
            m.setattr(console, "emit_unclaimed", fail)
            with pytest.raises(RuntimeError):
                draw.enter_ball(game=drawing_game, number=last, actor=caller)  # completes card 5's row

    await database_sync_to_async(enter_and_fail)()
    assert await desk.receive_nothing(timeout=0.3)
    assert await database_sync_to_async(current_seq)(staff_stream) == 0
    await database_sync_to_async(draw.enter_ball)(game=drawing_game, number=last, actor=caller)
    received = [await receive(desk), await receive(desk)]
    (listed,) = [e for e in received if e["type"] == EventType.CONSOLE_UNCLAIMED]
    assert (listed["seq"], listed["data"]["ordinal"]) == (1, len(first) + 1)
    assert {"series": "A", "serial": 5, "since_ball": len(first) + 1} in listed["data"]["line"]
    await desk.disconnect()
