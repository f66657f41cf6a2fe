"""Fan-out of the streams to the screens of one process (halls.fanout), through config.asgi.application.

On the Redis pub/sub layer of production and on the embedded hall's in-memory layer: the screens of a
process share ONE channel and one subscription per stream, so one channel-layer message reaches every
local screen of its stream as the same text; the sweep closes a screen deactivated or moved since it
connected, and tells every screen its stream's head, so a screen that lost the last event knows it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any
from unittest import mock

import pytest
import redis.asyncio as aioredis
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import HttpCommunicator, WebsocketCommunicator
from django.conf import settings as django_settings
from django.db import connections, transaction

from config.asgi import application
from halls import events, fanout
from halls.eventtypes import EventType, SessionClosed
from halls.models import Room, Screen

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 5
REDIS = "redis"
MEMORY = "memory"


@pytest.fixture(params=[REDIS, MEMORY])
def kind(request: pytest.FixtureRequest, settings: Any) -> str:
    """The Redis pub/sub layer under a prefix of its own, or the embedded hall's in-memory layer."""
    if request.param == REDIS:
        layer = django_settings.CHANNEL_LAYERS["default"]
        assert layer["BACKEND"] == "channels_redis.pubsub.RedisPubSubChannelLayer", layer
        settings.CHANNEL_LAYERS = {
            "default": {**layer, "CONFIG": {**layer["CONFIG"], "prefix": f"test-fan-{uuid.uuid4().hex[:12]}"}}
        }
    else:
        settings.CHANNEL_LAYERS = {
            "default": {"BACKEND": "halls.channel_layer.ThreadSafeInMemoryChannelLayer"}
        }
    return str(request.param)


@pytest.fixture
async def layer(kind: str) -> AsyncIterator[Any]:
    channel_layer = get_channel_layer()
    yield channel_layer
    if kind == REDIS:
        await channel_layer.flush()  # close this loop's Redis connections before the loop goes


@pytest.fixture
def neighbours(screen: Screen) -> tuple[Screen, Screen]:
    """A second screen of the same room, and a screen of another room of the venue."""
    second = Screen.objects.create(venue=screen.venue, room=screen.room, name="Pantalla 2")
    other_room = Room.objects.create(venue=screen.venue, name="Sala 2")
    elsewhere = Screen.objects.create(venue=screen.venue, room=other_room, name="Pantalla Sala 2")
    return second, elsewhere


async def connect(token: str) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, f"/ws/screens/{token}/")
    connected, _ = await communicator.connect(timeout=TIMEOUT)
    assert connected
    return communicator


async def off_the_loop(fn: Callable[[], Any]) -> Any:
    """Run `fn` in a plain thread, as a Celery worker would (its publish runs on a loop of its own)."""

    def run() -> Any:
        try:
            return fn()
        finally:
            connections.close_all()

    return await asyncio.get_running_loop().run_in_executor(None, run)


def emit(stream: str, number: int, *, lost: bool = False) -> events.Event:
    """One committed event on the stream; `lost`: committed and numbered, but its message never sent."""
    with mock.patch.object(events, "publish") if lost else contextlib.nullcontext(), transaction.atomic():
        return events.emit(stream, EventType.SESSION_CLOSED, SessionClosed(session=number))


async def snapshot_seq(token: str) -> int:
    communicator = HttpCommunicator(application, "GET", f"/screens/{token}/snapshot/")
    response = await communicator.get_response(TIMEOUT)
    await communicator.wait(TIMEOUT)
    assert response["status"] == 200
    seq: int = json.loads(response["body"])["seq"]
    return seq


async def subscribers(group: str) -> int:
    """Subscribers of the group's Redis channel, as Redis counts them (every process, every connection)."""
    config = django_settings.CHANNEL_LAYERS["default"]["CONFIG"]
    client = aioredis.Redis.from_url(config["hosts"][0]["address"])
    try:
        found = await client.pubsub_numsub(f"{config['prefix']}__group__{group}")
    finally:
        await client.aclose()
    return int(found[0][1])


async def test_screens_of_a_process_share_one_subscription_and_get_one_message_as_one_text(
    kind: str, layer: Any, screen: Screen, neighbours: tuple[Screen, Screen]
) -> None:
    second, elsewhere = neighbours
    room_stream, other_stream = screen.room.stream, elsewhere.room.stream
    sockets = [await connect(screen.token), await connect(second.token)]
    bystander = await connect(elsewhere.token)
    hub = fanout.hub()
    assert hub.subscribed == {room_stream, other_stream}
    assert {stream: len(members) for stream, members in hub.members.items()} == {
        room_stream: 2,
        other_stream: 1,
    }
    if kind == REDIS:
        # One subscription for the room's two screens, and no channel of their own: the hub's is the only one.
        assert await subscribers(events.group_name(room_stream)) == 1
        assert set(layer._get_layer().channels) == {hub.channel}
    else:
        assert layer.groups[events.group_name(room_stream)].keys() == {hub.channel}

    received_before, delivered_before = hub.events, hub.deliveries
    event = await off_the_loop(lambda: emit(room_stream, 1))
    texts = [await s.receive_from(timeout=TIMEOUT) for s in sockets]
    assert texts[0] == texts[1] == event.encode()
    assert json.loads(texts[0])["seq"] == event.seq
    assert await bystander.receive_nothing(timeout=0.3)
    assert hub.events - received_before == 1, "one channel-layer message for the two screens"
    assert hub.deliveries - delivered_before == 2

    # The last screen of a stream to leave takes the process off it; the others stay.
    for communicator in sockets:
        await communicator.disconnect()
    assert hub.subscribed == {other_stream}
    if kind == REDIS:
        assert await subscribers(events.group_name(room_stream)) == 0
        assert await subscribers(events.group_name(other_stream)) == 1
    later = await off_the_loop(lambda: emit(other_stream, 2))
    assert await bystander.receive_from(timeout=TIMEOUT) == later.encode()
    await bystander.disconnect()
    assert hub.channel is None and not hub.tasks  # nothing left listening


async def test_a_deactivated_or_moved_screen_is_closed_at_the_sweep_and_hears_nothing_more(
    kind: str, layer: Any, screen: Screen, neighbours: tuple[Screen, Screen]
) -> None:
    second, elsewhere = neighbours
    deactivated, moved, kept = [await connect(t) for t in (screen.token, second.token, elsewhere.token)]
    await database_sync_to_async(Screen.objects.filter(pk=screen.pk).update)(active=False)
    await database_sync_to_async(Screen.objects.filter(pk=second.pk).update)(room=elsewhere.room)
    await fanout.hub().sweep()

    for communicator in (deactivated, moved):
        assert await communicator.receive_output(timeout=TIMEOUT) == {
            "type": "websocket.close",
            "code": fanout.CLOSE_GONE,
        }
    head = json.loads(await kept.receive_from(timeout=TIMEOUT))
    assert head["type"] == fanout.HEAD_TYPE
    await off_the_loop(lambda: emit(screen.room.stream, 1))
    event = await off_the_loop(lambda: emit(elsewhere.room.stream, 2))
    assert await kept.receive_from(timeout=TIMEOUT) == event.encode()
    for communicator in (deactivated, moved):
        assert await communicator.receive_nothing(timeout=0.3)
    # Reconnecting: the deactivated screen is refused; the moved one follows its new room.
    refused = WebsocketCommunicator(application, f"/ws/screens/{screen.token}/")
    assert await refused.connect(timeout=TIMEOUT) == (False, 4404)
    for communicator in (deactivated, moved):
        await communicator.disconnect()
    moved_again = await connect(second.token)
    assert fanout.hub().subscribed == {elsewhere.room.stream}
    for communicator in (moved_again, kept):
        await communicator.disconnect()


async def test_the_head_tells_a_screen_it_lost_the_last_event(kind: str, layer: Any, screen: Screen) -> None:
    communicator = await connect(screen.token)
    stream = screen.room.stream
    first = await off_the_loop(lambda: emit(stream, 1))
    assert json.loads(await communicator.receive_from(timeout=TIMEOUT))["seq"] == first.seq
    lost = await off_the_loop(lambda: emit(stream, 2, lost=True))
    assert lost.seq == first.seq + 1
    assert await communicator.receive_nothing(timeout=0.3)

    # The sweep's head: not an event (no seq), the stream's number now, ahead of what the screen has.
    await fanout.hub().sweep()
    head = json.loads(await communicator.receive_from(timeout=TIMEOUT))
    assert head == {
        "type": "stream.head",
        "stream": stream,
        "head": lost.seq,
        "every": fanout.sweep_seconds(),
    }
    # ...which is what the snapshot the screen reloads holds.
    assert await snapshot_seq(screen.token) == lost.seq
    # The next event comes with the gap a screen also reloads on.
    after = await off_the_loop(lambda: emit(stream, 3))
    assert json.loads(await communicator.receive_from(timeout=TIMEOUT))["seq"] == after.seq == lost.seq + 1
    await communicator.disconnect()


async def test_the_sweep_runs_by_itself(kind: str, layer: Any, screen: Screen, settings: Any) -> None:
    settings.HALL_SCREEN_SWEEP_SECONDS = 0.2
    communicator = await connect(screen.token)
    heads = [json.loads(await communicator.receive_from(timeout=TIMEOUT)) for _ in range(2)]
    assert [h["type"] for h in heads] == [fanout.HEAD_TYPE] * 2
    await database_sync_to_async(Screen.objects.filter(pk=screen.pk).update)(active=False)
    while (output := await communicator.receive_output(timeout=TIMEOUT))["type"] == "websocket.send":
        pass  # heads sent before the sweep saw it
    assert output == {"type": "websocket.close", "code": fanout.CLOSE_GONE}
    await communicator.disconnect()


async def test_the_sweep_renews_the_hubs_memberships_only_when_due(
    kind: str, layer: Any, screen: Screen, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    communicator = await connect(screen.token)
    hub = fanout.hub()
    added: list[str] = []
    real = hub.layer.group_add

    async def counting(group: str, channel: str) -> None:
        added.append(group)
        await real(group, channel)

    monkeypatch.setattr(hub.layer, "group_add", counting)
    settings.HALL_HUB_RENEW_SECONDS = 3600
    await hub.sweep()  # heads every sweep, but 1,000 terminals' groups are not renewed every 10 s
    assert json.loads(await communicator.receive_from(timeout=TIMEOUT))["type"] == fanout.HEAD_TYPE
    assert added == []
    settings.HALL_HUB_RENEW_SECONDS = 0
    await hub.sweep()  # due: the control group and every stream followed, renewed
    assert json.loads(await communicator.receive_from(timeout=TIMEOUT))["type"] == fanout.HEAD_TYPE
    assert added == [fanout.CONTROL_GROUP, events.group_name(screen.room.stream)]
    added.clear()
    settings.HALL_HUB_RENEW_SECONDS = 3600
    await hub.sweep()  # renewed just now: not again
    assert json.loads(await communicator.receive_from(timeout=TIMEOUT))["type"] == fanout.HEAD_TYPE
    assert added == []
    # Still following: the next event arrives.
    event = await off_the_loop(lambda: emit(screen.room.stream, 1))
    assert await communicator.receive_from(timeout=TIMEOUT) == event.encode()
    await communicator.disconnect()
