"""The portal's WebSocket end to end: config.asgi.application, the Redis pub/sub channel layer, a real
session cookie. Only the authority's staff join; a message accepted is told to them after commit (which
installation, its sequence and kind, the game: never a player)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from config.asgi import application
from halls.models import Role, Venue
from tests.bingo.traditional.test_console_ws import session_cookie
from tests.conftest import make_user
from tests.portal.support import accept, authority_user, register

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("isolated_layer")]

TIMEOUT = 5


async def open_portal(user: Any) -> tuple[WebsocketCommunicator, bool, Any]:
    headers = [(b"origin", b"http://testserver")]
    if user is not None:
        headers.append((b"cookie", (await session_cookie(user)).encode()))
    communicator = WebsocketCommunicator(application, "/ws/authority/", headers=headers)
    connected, code = await communicator.connect(timeout=TIMEOUT)
    return communicator, connected, code


async def test_the_authority_hears_each_message_accepted_and_nobody_else_joins(
    layer: Any, venue: Venue, settings: Any
) -> None:
    settings.HALL_ROLE = "regulator"
    operator = await database_sync_to_async(make_user)("operador", venue, Role.OPERATOR)
    for user in (None, operator):
        _, connected, code = await open_portal(user)
        assert (connected, code) == (False, 4403)
    inspector = await database_sync_to_async(authority_user)()
    page, connected, _ = await open_portal(inspector)
    assert connected
    sender = await database_sync_to_async(register)("Bingo Melilla Centro", uid="a1" * 8, licence="ML-B-0001")
    ball = {"venue": "ML-B-0001", "room": "Sala 1", "game": "electronic-40", "ordinal": 1, "number": 17}
    message = await database_sync_to_async(accept)(sender, "game.ball", ball)
    heard = json.loads(await page.receive_from(timeout=TIMEOUT))
    assert heard["type"] == "regulator.message" and heard["stream"] == "regulator.live"
    assert heard["data"] == {
        "message": message.pk, "installation": "a1" * 8, "first": 1, "sequence": 1, "kind": "game.ball",
        "at": message.at.isoformat(), "game": "electronic-40", "pool": "",
    }  # fmt: skip
    await page.disconnect()


async def test_off_the_regulators_node_the_socket_refuses_even_the_authority(
    layer: Any, settings: Any
) -> None:
    settings.HALL_ROLE = "venue"
    inspector = await database_sync_to_async(authority_user)()
    _, connected, code = await open_portal(inspector)
    assert (connected, code) == (False, 4403)
