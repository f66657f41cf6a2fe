"""The till page's WebSocket (halls.cashier.consumers) end to end: config.asgi.application, the Redis pub/sub
channel layer, a real session cookie. Only a cashier (or operator) of the venue joins; it forwards the
venue's cashier stream and nothing else."""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from config.asgi import application
from halls.cashier.consumers import cashier_stream
from halls.events import CHANNEL_MESSAGE_TYPE, group_name
from halls.models import Role, Venue
from tests.bingo.traditional.test_console_ws import session_cookie
from tests.conftest import make_user

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("isolated_layer")]

TIMEOUT = 5


async def open_till(venue_id: int, user: Any) -> tuple[WebsocketCommunicator, bool, Any]:
    headers = [(b"origin", b"http://testserver")]
    if user is not None:
        headers.append((b"cookie", (await session_cookie(user)).encode()))
    communicator = WebsocketCommunicator(application, f"/ws/cashier/venues/{venue_id}/", headers=headers)
    connected, code = await communicator.connect(timeout=TIMEOUT)
    return communicator, connected, code


async def test_only_the_venues_cashiers_join_and_hear_its_cashier_stream(
    layer: Any, venue: Venue, caller: Any, operator: Any, other_venue: Venue
) -> None:
    cashier = await database_sync_to_async(make_user)("cajera", venue, Role.CASHIER)
    stranger = await database_sync_to_async(make_user)("stranger", other_venue, Role.CASHIER)
    for user, expected in [(None, 4403), (caller, 4403), (stranger, 4404)]:
        _, connected, code = await open_till(venue.pk, user)
        assert (connected, code) == (False, expected), user
    till, connected, _ = await open_till(venue.pk, cashier)
    assert connected
    desk, connected, _ = await open_till(venue.pk, operator)
    assert connected
    inspector = await database_sync_to_async(make_user)("inspector", venue, Role.INSPECTOR)
    watching, connected, _ = await open_till(venue.pk, inspector)  # read-only: the socket takes nothing
    assert connected
    text = json.dumps({"stream": cashier_stream(venue.pk), "seq": 1, "type": "payable.created", "data": {}})
    await layer.group_send(group_name(cashier_stream(venue.pk)), {"type": CHANNEL_MESSAGE_TYPE, "text": text})
    # Another venue's cashier stream never reaches this venue's till.
    other = json.dumps({"stream": cashier_stream(other_venue.pk), "seq": 1, "type": "payable.created"})
    await layer.group_send(
        group_name(cashier_stream(other_venue.pk)), {"type": CHANNEL_MESSAGE_TYPE, "text": other}
    )
    for communicator in (till, desk, watching):
        assert await communicator.receive_from(timeout=TIMEOUT) == text
        assert await communicator.receive_nothing(timeout=0.3)
        await communicator.disconnect()
