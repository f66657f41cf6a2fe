"""The central's link socket (/ws/link/) end to end: config.asgi.application, the Redis pub/sub channel layer,
real commits. Only a venue's working credential opens it; it says which streams to follow with their heads,
pushes the entries committed on them (not others'), records the socket's opening and closing, and takes
heartbeats (last seen, backlog); a credential revoked while connected closes it at the next heartbeat."""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import transaction

from config.asgi import application
from halls.link.kinds import LinkKind
from halls.link.models import VenueLink
from halls.link.services import credentials, presence, streams
from halls.models import Network, Venue

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("isolated_layer")]

TIMEOUT = 5


@pytest.fixture(autouse=True)
def _central(settings: Any) -> None:
    settings.HALL_ROLE = "central"


async def _open(authorization: str | None) -> tuple[WebsocketCommunicator, bool, Any]:
    headers = [] if authorization is None else [(b"authorization", authorization.encode())]
    communicator = WebsocketCommunicator(application, "/ws/link/", headers=headers)
    connected, code = await communicator.connect(timeout=TIMEOUT)
    return communicator, connected, code


def _append(stream: str, text: str) -> int:
    with transaction.atomic():
        return streams.append(stream=stream, kind=LinkKind.NOTICE, payload={"text": text}).sequence


append = database_sync_to_async(_append)


def _setup(venue: Venue, other_venue: Venue) -> credentials.Issued:
    Network.objects.create(name="Red Norte", code="NORTE", jurisdiction=venue.jurisdiction).venues.add(venue)
    Network.objects.create(name="Red Sur", code="SUR", jurisdiction=venue.jurisdiction).venues.add(
        other_venue
    )
    _append("network.NORTE", "before")
    return credentials.issue(venue=venue, actor="test")


async def test_a_refused_credential_does_not_open_the_socket(
    layer: Any, venue: Venue, other_venue: Venue
) -> None:
    issued = await database_sync_to_async(_setup)(venue, other_venue)
    for authorization in (
        None,
        credentials.header(issued.key, "wrong"),
        f"Token {issued.key}:{issued.secret}",
    ):
        communicator, connected, _code = await _open(authorization)
        assert not connected
        await communicator.disconnect()
    assert not await database_sync_to_async(VenueLink.objects.filter(venue=venue).exists)()


async def test_the_socket_follows_the_venues_streams_and_pushes_their_entries(
    layer: Any, venue: Venue, other_venue: Venue
) -> None:
    issued = await database_sync_to_async(_setup)(venue, other_venue)
    communicator, connected, _code = await _open(credentials.header(issued.key, issued.secret))
    assert connected
    follow = await communicator.receive_json_from(timeout=TIMEOUT)
    assert follow == {"type": "follow", "streams": {f"venue.{venue.pk}": 0, "network.NORTE": 1}}
    states = {s.venue_id: s for s in await database_sync_to_async(presence.network_map)()}
    assert states[venue.pk].state == "online" and states[venue.pk].socket_open
    await append("network.SUR", "not for this venue")
    await append("network.NORTE", "live")
    entry = await communicator.receive_json_from(timeout=TIMEOUT)
    assert entry == {
        "type": "entry",
        "stream": "network.NORTE",
        "sequence": 2,
        "kind": "link.notice",
        "payload": {"text": "live"},
    }
    assert await communicator.receive_nothing(timeout=0.5)  # the other network's entry never came
    # A heartbeat: the venue's backlog as it reports it.
    await communicator.send_json_to(
        {"type": "heartbeat", "reported": 7, "clock": "2026-01-01T00:00:00+00:00"}
    )
    await communicator.receive_nothing(timeout=0.5)
    link = await database_sync_to_async(VenueLink.objects.get)(venue=venue)
    assert link.reported_sequence == 7 and link.clock_offset_ms is not None
    await communicator.disconnect()
    states = {s.venue_id: s for s in await database_sync_to_async(presence.network_map)()}
    assert states[venue.pk].state == "offline" and not states[venue.pk].socket_open


async def test_a_credential_revoked_while_connected_closes_the_socket(
    layer: Any, venue: Venue, other_venue: Venue
) -> None:
    issued = await database_sync_to_async(_setup)(venue, other_venue)
    communicator, connected, _code = await _open(credentials.header(issued.key, issued.secret))
    assert connected
    await communicator.receive_json_from(timeout=TIMEOUT)
    await database_sync_to_async(credentials.revoke)(venue=venue, actor="test")
    await communicator.send_json_to({"type": "heartbeat", "reported": 1})
    closed = await communicator.receive_output(timeout=TIMEOUT)
    assert closed == {"type": "websocket.close", "code": 4401}
