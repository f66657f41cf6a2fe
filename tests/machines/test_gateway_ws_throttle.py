"""Wrong device tokens on the machines' WebSocket are counted per client address (issue 10); past the rate
that address is refused before its token is looked at, even with the right one, while machines at other
addresses connect."""

# The fixtures are imported by name from the gateway's WebSocket tests.
# ruff: noqa: F811

from __future__ import annotations

from typing import Any

import pytest
from channels.testing import WebsocketCommunicator

from config.asgi import application
from machines import consumers
from machines.models import Machine
from tests.machines.machine_fixtures import (  # noqa: F401 - fixtures
    an10_venue,
    board,
    cashier_user,
    link,
    pool_operator,
    slot_pool,
)
from tests.machines.test_gateway_ws import TIMEOUT, url

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("isolated_layer")]


async def attempt(machine: Machine, token: str, address: str) -> tuple[bool, Any]:
    communicator = WebsocketCommunicator(application, url(machine, token))
    communicator.scope["client"] = [address, 50_000]  # the app reads the scope when the socket opens
    connected, code = await communicator.connect(timeout=TIMEOUT)
    if connected:
        await communicator.disconnect()
    return connected, code


async def test_wrong_tokens_are_counted_per_address_then_refused(
    settings: Any, layer: Any, board: tuple[Machine, str]
) -> None:
    settings.HALL_THROTTLE_RATES = {**settings.HALL_THROTTLE_RATES, "device_failures": "3/min"}
    machine, token = board
    assert (await attempt(machine, token, "203.0.113.20"))[0]  # good tokens are never counted
    for _ in range(3):
        assert await attempt(machine, "wrong", "203.0.113.20") == (False, consumers.CLOSE_REFUSED)
    assert await attempt(machine, token, "203.0.113.20") == (False, consumers.CLOSE_REFUSED)
    assert (await attempt(machine, token, "203.0.113.21"))[0]
