"""Several committed events published at once (halls.events.publish_many, what emit_many's commit
runs): on the real Redis pub/sub layer, each stream receives its own events in their order, the streams'
sends overlap, nothing is sent before the commit, and a stream whose send fails does not stop the others."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from channels.db import database_sync_to_async as sync_to_async
from channels.layers import get_channel_layer
from django.db import transaction

from halls import events
from halls.eventtypes import EventType

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("isolated_layer")]

STREAMS = ["terminal.1", "terminal.2", "terminal.3"]
TIMEOUT = 5


async def listening(layer: Any) -> dict[str, str]:
    """A channel in each stream's group: stream -> channel."""
    channels = {}
    for stream in STREAMS:
        channels[stream] = await layer.new_channel()
        await layer.group_add(events.group_name(stream), channels[stream])
    return channels


async def heard(layer: Any, channel: str, count: int) -> list[int]:
    """The sequence numbers of the next `count` messages on `channel`."""
    seqs = []
    for _ in range(count):
        message = await asyncio.wait_for(layer.receive(channel), TIMEOUT)
        seqs.append(json.loads(message["text"])["seq"])
    return seqs


def emit_interleaved(per_stream: int) -> list[events.Event]:
    """`per_stream` events on each stream, interleaved, emitted in one transaction."""
    told = [
        (stream, EventType.TERMINAL_STATE, {"terminal": n, "state": f"s{i}", "reason": ""})
        for i in range(per_stream)
        for n, stream in enumerate(STREAMS, start=1)
    ]
    with transaction.atomic():
        return events.emit_many(told)


async def test_each_stream_hears_its_events_in_order_once_the_transaction_commits(layer: Any) -> None:
    channels = await listening(layer)
    made = await sync_to_async(emit_interleaved)(5)
    assert [e.seq for e in made if e.stream == "terminal.2"] == [1, 2, 3, 4, 5]
    for stream in STREAMS:
        assert await heard(layer, channels[stream], 5) == [1, 2, 3, 4, 5]
    # Nothing more: each event was sent once.
    for stream in STREAMS:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(layer.receive(channels[stream]), 0.3)


async def test_nothing_is_published_when_the_transaction_rolls_back(layer: Any) -> None:
    channels = await listening(layer)

    class RolledBack(Exception):
        pass

    def rolled_back() -> None:
        told = [(s, EventType.TERMINAL_STATE, {"terminal": 1, "state": "x", "reason": ""}) for s in STREAMS]
        try:
            with transaction.atomic():
                events.emit_many(told)
                raise RolledBack
        except RolledBack:
            pass

    await sync_to_async(rolled_back)()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(layer.receive(channels["terminal.1"]), 0.5)


async def test_a_stream_whose_send_fails_is_logged_and_the_others_are_heard(
    layer: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    channels = await listening(layer)
    publishing = get_channel_layer()
    send = publishing.group_send

    async def failing_on_two(group: str, message: dict[str, Any]) -> None:
        if group == events.group_name("terminal.2"):
            raise ConnectionError("redis went away")
        await send(group, message)

    monkeypatch.setattr(publishing, "group_send", failing_on_two)
    with caplog.at_level(logging.ERROR, logger="halls.events"):
        await sync_to_async(emit_interleaved)(2)
    assert await heard(layer, channels["terminal.1"], 2) == [1, 2]
    assert await heard(layer, channels["terminal.3"], 2) == [1, 2]
    assert any("terminal.2" in record.getMessage() for record in caplog.records)
