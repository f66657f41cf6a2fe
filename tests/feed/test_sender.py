"""The installation's feed sender (halls.link.transport.FeedSender) against the node's real door, in one
process and one database (the same schema serves both roles): messages signed and accepted once and in
order, the outbox marked sent only up to what the node named, a 409 rewinds, a refusal is never skipped, a
heartbeat when idle; the feed's backlog and lag on /metrics. PostgreSQL and SQLite."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from asgiref.sync import sync_to_async
from django.db import transaction
from django.test import Client

from halls import anchor_lines
from halls.feed.kinds import FeedKind
from halls.feed.services.emit import emit
from halls.link.models import Destination, OutboxMessage
from halls.link.services import feed_outbox
from halls.link.transport import FeedConfig, FeedSender
from halls.models import Venue
from halls.regulator.models import FeedMessage, FeedRefusal, Installation
from halls.regulator.services import registry
from halls.services import anchor_key, installation

pytestmark = pytest.mark.django_db(transaction=True)
FEED = "/api/regulator/feed/"


def node_post(body: dict[str, Any]) -> tuple[int, bytes]:
    response = Client().post(FEED, body, content_type="application/json")
    return response.status_code, response.content


class Node:
    """The node's door behind an httpx transport; `down` answers 503 (a node restarting)."""

    def __init__(self) -> None:
        self.down = False
        self.batches: list[list[int]] = []

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        if self.down:
            return httpx.Response(503, text="restarting")
        body = json.loads(request.content)
        self.batches.append([m["sequence"] for m in body["messages"]])
        status, content = await sync_to_async(node_post)(body)
        return httpx.Response(status, content=content, headers={"Content-Type": "application/json"})


def sender(node: Node, **config: Any) -> FeedSender:
    feeder = FeedSender(FeedConfig(url="http://node.test", backoff_max_seconds=0.05, **config))
    feeder.client = httpx.AsyncClient(base_url="http://node.test", transport=httpx.MockTransport(node))
    return feeder


@pytest.fixture
def registered(settings: Any) -> Installation:
    """This installation registered at the node (the same database plays both), the feed on."""
    settings.HALL_ROLE, settings.HALL_FEED_ENABLED = "regulator", True
    public = anchor_lines.raw_public(anchor_key.signing_key().public_key()).hex()
    return registry.register(
        uid=installation.identity(),
        name="Red Norte",
        kind="central",
        licence_number="",
        jurisdiction="ML",
        public_key=public,
        actor="test",
    )


def emit_beats(venue: Venue, count: int) -> None:
    for _ in range(count):
        with transaction.atomic():
            emit(FeedKind.HEARTBEAT, {"last_sequence": 0}, venue_id=venue.pk)


def node_holds(node: Installation) -> list[int]:
    return list(
        FeedMessage.objects.filter(installation=node).order_by("sequence").values_list("sequence", flat=True)
    )


def unsent() -> int:
    return OutboxMessage.objects.filter(destination=Destination.REGULATOR, acked_at__isnull=True).count()


async def test_the_outbox_drains_in_order_once_and_survives_a_node_down(
    registered: Installation, venue: Venue
) -> None:
    await sync_to_async(emit_beats)(venue, 5)
    node = Node()
    feeder = sender(node, batch=2)
    node.down = True

    async def while_down() -> None:
        node.down = False  # the node is back after the sender's first retry

    feeder.sleep = _then(feeder.sleep, while_down)  # type: ignore[method-assign]
    assert await feeder.drain() == 5
    assert node.batches == [[1, 2], [3, 4], [5]]
    assert await sync_to_async(node_holds)(registered) == [1, 2, 3, 4, 5]
    assert await sync_to_async(unsent)() == 0
    await feeder.client.aclose()


def _then(sleep: Any, action: Any) -> Any:
    async def wrapped(seconds: float) -> None:
        await action()
        await sleep(seconds)

    return wrapped


async def test_a_409_rewinds_to_the_message_the_node_expects(registered: Installation, venue: Venue) -> None:
    await sync_to_async(emit_beats)(venue, 3)
    await sync_to_async(feed_outbox.acknowledge)(up_to=1)  # marked sent, but the node never got it
    node = Node()
    feeder = sender(node)
    assert await feeder.send_once() == 0  # 2-3 refused: the node expects 1; everything is sent again
    assert await feeder.drain() == 3
    assert node.batches == [[2, 3], [1, 2, 3]]
    assert await sync_to_async(node_holds)(registered) == [1, 2, 3]
    assert await sync_to_async(FeedRefusal.objects.count)() == 1
    await feeder.client.aclose()


async def test_a_refused_message_is_never_skipped(
    registered: Installation, venue: Venue, settings: Any, tmp_path: Path
) -> None:
    await sync_to_async(emit_beats)(venue, 2)
    settings.HALL_ANCHOR_SIGNING_KEY_FILE = str(tmp_path / "another.pem")  # not the registered key
    node = Node()
    feeder = sender(node)
    tries = 0

    async def stop_after_three() -> None:
        nonlocal tries
        tries += 1
        if tries >= 3:
            feeder.stop.set()

    feeder.sleep = _then(feeder.sleep, stop_after_three)  # type: ignore[method-assign]
    with pytest.raises(Exception, match="bad_signature"):
        await feeder.send_once()
    assert await sync_to_async(node_holds)(registered) == []
    assert await sync_to_async(unsent)() == 2  # still owed: sent again once the key is right
    assert all(batch == [1, 2] for batch in node.batches) and len(node.batches) >= 2
    await feeder.client.aclose()


async def test_a_heartbeat_when_idle_and_none_while_sending(registered: Installation, venue: Venue) -> None:
    node = Node()
    feeder = sender(node, heartbeat_seconds=3600)
    assert await feeder.beat_if_idle()  # never sent anything: a heartbeat at once
    assert await feeder.drain() == 1
    assert not await feeder.beat_if_idle()  # just sent: not idle
    (beat,) = await sync_to_async(lambda: list(FeedMessage.objects.filter(installation=registered)))()
    assert (beat.kind, beat.payload) == ("heartbeat", {"last_sequence": 0})
    await feeder.client.aclose()


def sample(text: str, name: str, labels: str = "") -> float | None:
    pattern = re.escape(name + (f"{{{labels}}}" if labels else "")) + r" ([0-9.e+-]+)$"
    found = re.search(pattern, text, re.MULTILINE)
    return float(found.group(1)) if found else None


def test_the_feed_s_backlog_and_lag_are_on_metrics(
    registered: Installation, venue: Venue, settings: Any
) -> None:
    emit_beats(venue, 3)
    settings.HALL_ROLE = "venue"
    text = Client().get("/metrics").content.decode()
    assert sample(text, "hall_feed_backlog_messages") == 3
    lag = sample(text, "hall_feed_lag_seconds")
    assert lag is not None and lag >= 0
    settings.HALL_ROLE = "regulator"

    async def drain() -> int:
        feeder = sender(Node())
        try:
            return await feeder.drain()
        finally:
            await feeder.client.aclose()

    assert asyncio.run(drain()) == 3
    text = Client().get("/metrics").content.decode()
    assert sample(text, "hall_feed_backlog_messages") is None  # the node's metrics instead
    labels = f'installation="{registered.uid}"'
    node_lag = sample(text, "hall_regulator_installation_lag_seconds", labels)
    assert node_lag is not None and node_lag >= 0
    assert sample(text, "hall_regulator_installation_silence_seconds", labels) is not None
    assert (sample(text, "hall_regulator_feed_receipt_lag_seconds_count") or 0) >= 3
    settings.HALL_ROLE = "venue"
    text = Client().get("/metrics").content.decode()
    assert sample(text, "hall_feed_backlog_messages") == 0 and sample(text, "hall_feed_lag_seconds") == 0
