"""The door page's WebSocket (halls.door.consumers) end to end: config.asgi.application, the Redis pub/sub
channel layer, a real session cookie. Only the venue's door staff (or operator; the inspector reads) join;
an admission and an exit each publish the new count (counts only, never a person) after commit."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from config.asgi import application
from halls.door.services import admission, presence
from halls.models import Role, Venue
from tests.bingo.traditional.test_console_ws import session_cookie
from tests.conftest import make_user
from tests.door.register_support import dni

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("isolated_layer"),
]

TIMEOUT = 5
NUMBER = dni(70_000_001)


async def open_door(venue_id: int, user: Any) -> tuple[WebsocketCommunicator, bool, Any]:
    headers = [(b"origin", b"http://testserver")]
    if user is not None:
        headers.append((b"cookie", (await session_cookie(user)).encode()))
    communicator = WebsocketCommunicator(application, f"/ws/door/venues/{venue_id}/", headers=headers)
    connected, code = await communicator.connect(timeout=TIMEOUT)
    return communicator, connected, code


def admit_and_leave(venue: Venue, user: Any) -> None:
    document = admission.document_from("DNI", NUMBER)
    admission.admit(venue=venue, door="Puerta 1", document=document, birth_date=date(1980, 1, 1), actor=user)
    presence.record_exit(venue=venue, door="Salida", document=document, actor=user)


async def test_the_door_hears_the_count_and_nobody_else_joins(
    layer: Any, venue: Venue, operator: Any, other_venue: Venue
) -> None:
    door = await database_sync_to_async(make_user)("portero", venue, Role.DOOR)
    cashier = await database_sync_to_async(make_user)("cajera", venue, Role.CASHIER)
    stranger = await database_sync_to_async(make_user)("stranger", other_venue, Role.DOOR)
    for user, expected in [(None, 4403), (cashier, 4403), (stranger, 4404)]:
        _, connected, code = await open_door(venue.pk, user)
        assert (connected, code) == (False, expected), user
    page, connected, _ = await open_door(venue.pk, door)
    assert connected
    desk, connected, _ = await open_door(venue.pk, operator)
    assert connected
    await database_sync_to_async(admit_and_leave)(venue, door)
    for communicator in (page, desk):
        entered = json.loads(await communicator.receive_from(timeout=TIMEOUT))
        left = json.loads(await communicator.receive_from(timeout=TIMEOUT))
        assert entered["type"] == "door.presence" and entered["stream"] == f"door.{venue.pk}"
        assert {k: entered["data"][k] for k in ("admitted", "left", "inside")} == {
            "admitted": 1,
            "left": 0,
            "inside": 1,
        }
        assert (left["data"]["left"], left["data"]["inside"]) == (1, 0)
        assert NUMBER not in json.dumps(entered) + json.dumps(left)
        await communicator.disconnect()
