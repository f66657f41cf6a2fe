"""The Host and Origin of every WebSocket (halls.ws_security) through config.asgi.application.

With ALLOWED_HOSTS narrowed to the hall's name: a screen (a page) needs an allowed Host and an allowed
Origin; a machine (a device) needs an allowed Host and may send no Origin, but not another site's; the
caller console is a page like the screens.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator

from config.asgi import application
from halls.models import Screen
from machines.models import Machine
from tests.machines.machine_fixtures import an10_venue, board, link, pool_operator, slot_pool

__all__ = ["an10_venue", "board", "link", "pool_operator", "slot_pool"]

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 5
HALL = b"hall.example"


@pytest.fixture(autouse=True)
def narrow_hosts(settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["hall.example", ".hall.example"]
    layer = settings.CHANNEL_LAYERS["default"]
    settings.CHANNEL_LAYERS = {
        "default": {**layer, "CONFIG": {**layer["CONFIG"], "prefix": f"test-sec-{uuid.uuid4().hex[:12]}"}}
    }


@pytest.fixture
async def layer(narrow_hosts: None) -> AsyncIterator[Any]:
    channel_layer = get_channel_layer()
    yield channel_layer
    await channel_layer.flush()


async def opens(path: str, headers: list[tuple[bytes, bytes]]) -> bool:
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect(timeout=TIMEOUT)
    if connected:
        await communicator.disconnect()
    return bool(connected)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ([(b"host", HALL), (b"origin", b"http://hall.example")], True),
        ([(b"host", b"tv.hall.example:8443"), (b"origin", b"https://tv.hall.example:8443")], True),
        ([(b"host", HALL)], False),  # a page always names its origin
        ([(b"host", HALL), (b"origin", b"http://evil.example")], False),
        ([(b"host", b"evil.example"), (b"origin", b"http://hall.example")], False),
        ([(b"origin", b"http://hall.example")], False),  # no Host at all
    ],
)
async def test_a_screen_socket_needs_an_allowed_host_and_origin(
    layer: Any, screen: Screen, headers: list[tuple[bytes, bytes]], expected: bool
) -> None:
    assert await opens(f"/ws/screens/{screen.token}/", headers) is expected


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ([(b"host", HALL)], True),  # a board sends no Origin
        ([(b"host", HALL), (b"origin", b"http://hall.example")], True),
        ([(b"host", HALL), (b"origin", b"http://evil.example")], False),  # another site's page
        ([(b"host", b"evil.example")], False),
    ],
)
async def test_a_machine_socket_needs_an_allowed_host_and_no_foreign_origin(
    layer: Any, board: tuple[Machine, str], headers: list[tuple[bytes, bytes]], expected: bool
) -> None:
    machine, token = board
    assert await opens(f"/ws/machines/{machine.asset_number}/?token={token}", headers) is expected


async def test_the_console_socket_checks_the_host_too(layer: Any, room: Any) -> None:
    path = f"/ws/console/rooms/{room.pk}/"
    # Refused before the consumer looks at the session (an anonymous visitor is refused by it anyway).
    communicator = WebsocketCommunicator(
        application, path, headers=[(b"host", b"evil.example"), (b"origin", b"http://hall.example")]
    )
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert not connected and code == 1000  # Channels' WebsocketDenier, not the consumer's 4403
