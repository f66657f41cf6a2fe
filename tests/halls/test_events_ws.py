"""The screen WebSocket end to end: config.asgi.application, the Redis pub/sub channel layer, real commits.

A screen joins its room's stream by token and receives each event once its transaction commits, numbered
one after the other on the stream; the snapshot endpoint reports the same sequence number. A screen is
read-only: whatever it sends is ignored.
"""

from __future__ import annotations

import json
from contextlib import suppress
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import HttpCommunicator, WebsocketCommunicator
from django.db import transaction

from bingo.traditional.models import Ball, BallSet, Game, GameState
from bingo.traditional.services import claims, draw, games
from config.asgi import application
from halls.events import current_seq
from halls.models import Room, Screen

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("isolated_layer")]

TIMEOUT = 5


class Rollback(Exception):
    """Raised inside a transaction to roll it back."""


async def connect(token: str) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, f"/ws/screens/{token}/")
    connected, _ = await communicator.connect(timeout=TIMEOUT)
    assert connected
    return communicator


async def receive(communicator: WebsocketCommunicator) -> dict[str, Any]:
    event: dict[str, Any] = await communicator.receive_json_from(timeout=TIMEOUT)
    return event


async def snapshot(token: str) -> dict[str, Any]:
    communicator = HttpCommunicator(application, "GET", f"/screens/{token}/snapshot/")
    response = await communicator.get_response(TIMEOUT)
    await communicator.wait(TIMEOUT)  # let Django finish the request: it closes its database connection
    assert response["status"] == 200
    body: dict[str, Any] = json.loads(response["body"])
    return body


enter_ball = database_sync_to_async(draw.enter_ball)
seq_of = database_sync_to_async(current_seq)


async def test_unknown_token_is_refused(layer: Any) -> None:
    communicator = WebsocketCommunicator(application, "/ws/screens/no-such-screen/")
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert (connected, code) == (False, 4404)


async def test_inactive_screen_is_refused(layer: Any, screen: Screen) -> None:
    await database_sync_to_async(Screen.objects.filter(pk=screen.pk).update)(active=False)
    communicator = WebsocketCommunicator(application, f"/ws/screens/{screen.token}/")
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert (connected, code) == (False, 4404)


async def test_ball_is_sent_after_commit_and_never_for_a_rollback(
    layer: Any, screen: Screen, drawing_game: Game, ball_set: BallSet, caller: Any
) -> None:
    communicator = await connect(screen.token)
    stream = screen.room.stream
    before = await seq_of(stream)

    def enter_and_roll_back() -> None:
        with suppress(Rollback), transaction.atomic():
            draw.enter_ball(game=drawing_game, number=33, actor=caller)
            raise Rollback

    await database_sync_to_async(enter_and_roll_back)()
    assert await communicator.receive_nothing(timeout=0.5)
    assert await seq_of(stream) == before
    assert not await database_sync_to_async(Ball.objects.filter(game=drawing_game).exists)()

    def enter_inside_an_outer_transaction() -> bool:
        """The service returns inside the caller's transaction: nothing may reach the screen before COMMIT."""
        with transaction.atomic():
            draw.enter_ball(game=drawing_game, number=17, actor=caller)
            silent: bool = async_to_sync(communicator.receive_nothing)(timeout=0.5)
        return silent

    assert await database_sync_to_async(enter_inside_an_outer_transaction)()
    event = await receive(communicator)
    assert event["type"] == "ball.drawn"
    assert event["stream"] == stream
    # The rolled-back ball used no sequence number: the committed one is the next.
    assert event["seq"] == before + 1
    data = event["data"]
    assert (data["game"], data["number"], data["state"]) == (drawing_game.pk, drawing_game.number, "drawing")
    assert (data["ordinal"], data["ball"], data["source"]) == (1, 17, "manual")
    assert data["colour"] == ball_set.colour_of(17)
    assert data["drawn_at"]
    assert await communicator.receive_nothing(timeout=0.3)
    await communicator.disconnect()


async def test_seq_grows_by_one_per_event_and_matches_the_snapshot(
    layer: Any, screen: Screen, drawing_game: Game, caller: Any
) -> None:
    second = await database_sync_to_async(Screen.objects.create)(
        venue=screen.venue, room=screen.room, name="Pantalla 2"
    )
    other_room = await database_sync_to_async(Room.objects.create)(venue=screen.venue, name="Sala 2")
    elsewhere = await database_sync_to_async(Screen.objects.create)(
        venue=screen.venue, room=other_room, name="Pantalla Sala 2"
    )
    start = (await snapshot(screen.token))["seq"]
    screens = [await connect(screen.token), await connect(second.token)]
    bystander = await connect(elsewhere.token)

    def play() -> None:
        """Seven service calls, each one transaction with one event (the pause and the claim too)."""
        for number in (5, 44, 71):
            draw.enter_ball(game=drawing_game, number=number, actor=caller)
        games.pause_draw(game=drawing_game, actor=caller)
        games.resume_draw(game=drawing_game, actor=caller)
        draw.enter_ball(game=drawing_game, number=90, actor=caller)
        claims.file_claim(game=drawing_game, kind="bingo", series_code="A", serial=3, actor=caller)

    await database_sync_to_async(play)()
    expected = ["ball.drawn"] * 3 + ["game.paused", "game.resumed", "ball.drawn", "claim.verified"]
    for communicator in screens:
        events = [await receive(communicator) for _ in expected]
        assert [e["type"] for e in events] == expected
        assert [e["seq"] for e in events] == list(range(start + 1, start + 1 + len(expected)))
        assert {e["stream"] for e in events} == {screen.room.stream}
        assert [e["data"]["ordinal"] for e in events if e["type"] == "ball.drawn"] == [1, 2, 3, 4]
        assert events[-1]["data"]["valid"] is False  # four balls cannot make a bingo: a recorded refusal
        assert await communicator.receive_nothing(timeout=0.2)
    assert await bystander.receive_nothing(timeout=0.3)

    body = await snapshot(screen.token)
    assert body["stream"] == screen.room.stream
    assert body["seq"] == start + len(expected) == await seq_of(screen.room.stream)
    game = body["sections"]["bingo"]["game"]
    assert game["id"] == drawing_game.pk
    assert game["state"] == GameState.DRAWING
    assert [b["ball"] for b in game["balls"]] == [5, 44, 71, 90]
    assert (await snapshot(elsewhere.token))["seq"] == 0
    for communicator in [*screens, bystander]:
        await communicator.disconnect()


async def test_whatever_a_screen_sends_is_ignored(
    layer: Any, screen: Screen, drawing_game: Game, caller: Any
) -> None:
    communicator = await connect(screen.token)
    before = await seq_of(screen.room.stream)
    forged = {"type": "ball.drawn", "data": {"game": drawing_game.pk, "ordinal": 1, "ball": 7}}
    await communicator.send_json_to(forged)
    await communicator.send_to(text_data="enter ball 7")
    await communicator.send_to(bytes_data=b"\x00\x01\x02")
    assert await communicator.receive_nothing(timeout=0.5)
    assert await seq_of(screen.room.stream) == before
    assert not await database_sync_to_async(Ball.objects.filter(game=drawing_game).exists)()

    # Still connected and still listening.
    await enter_ball(game=drawing_game, number=7, actor=caller)
    event = await receive(communicator)
    assert (event["type"], event["seq"], event["data"]["ball"]) == ("ball.drawn", before + 1, 7)
    await communicator.disconnect()
