"""The progressive broadcaster (machines.broadcaster): a loop of its own that keeps its cadence whatever the
database does. A fake channel layer records the sends; the reads are functions the test controls."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from decimal import Decimal
from typing import Any

import pytest

from machines import broadcaster
from machines.services.broadcast import LinkLevels

D = Decimal
SNAPSHOT = [
    LinkLevels(1, "L1", [("Grand", D("1000.00")), ("Major", D("100.50"))]),
    LinkLevels(2, "L2", [("Mini", D("25.00"))]),
]


class FakeLayer:
    def __init__(self, failing: set[str] | None = None, cancelled: set[str] | None = None) -> None:
        self.sent: list[tuple[float, str, dict[str, Any]]] = []
        self.failing = failing or set()
        self.cancelled = cancelled or set()

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        if group in self.failing:
            raise ConnectionError("redis went away")
        if group in self.cancelled:  # as the embedded layer's home loop cancelling a handed-over send
            raise asyncio.CancelledError
        self.sent.append((time.monotonic(), group, message))


async def serve_for(b: broadcaster.Broadcaster, layer: FakeLayer, seconds: float, monkeypatch: Any) -> None:
    monkeypatch.setattr(broadcaster, "get_channel_layer", lambda: layer)
    stop = asyncio.Event()
    task = asyncio.create_task(b.serve(stop))
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.wait_for(task, 5)


async def test_it_sends_every_group_at_its_cadence_encoded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    layer = FakeLayer()
    b = broadcaster.Broadcaster(interval=0.05, max_stale=10, read=lambda: SNAPSHOT)
    await serve_for(b, layer, 0.6, monkeypatch)
    groups = [group for _, group, _ in layer.sent]
    assert set(groups) == {"machines.link.1", "machines.link.2"}
    per_group = groups.count("machines.link.1")
    assert 8 <= per_group <= 13  # every 50 ms for 0.6 s, the first once the levels are read
    _, _, message = next(s for s in layer.sent if s[1] == "machines.link.1")
    assert message["type"] == broadcaster.PROGRESSIVE_TYPE and message["group"] == 1
    payload = json.loads(message["text"])
    assert payload["type"] == "progressive" and payload["group"] == "L1"
    assert payload["levels"] == [
        {"level": "Grand", "amount": "1000.00"},
        {"level": "Major", "amount": "100.50"},
    ]
    assert abs(payload["at"] / 1000 - time.time()) < 5


async def test_a_hung_read_does_not_delay_the_sends_and_stale_levels_stop_after_max_stale(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reads hang after the first: the sends go on with the levels read (a slow database delays a
    meter, it does not lock the floor), until max_stale; then nothing, so the machines lock."""
    release = threading.Event()
    reads = []

    def read() -> list[LinkLevels]:
        reads.append(time.monotonic())
        if len(reads) > 1:
            release.wait(5)
        return SNAPSHOT

    layer = FakeLayer()
    b = broadcaster.Broadcaster(interval=0.05, max_stale=0.4, read=read)
    started = time.monotonic()
    try:
        await serve_for(b, layer, 0.9, monkeypatch)
    finally:
        release.set()
    times = [t - started for t, group, _ in layer.sent if group == "machines.link.1"]
    assert times and min(times) < 0.1
    assert any(0.3 < t < 0.45 for t in times)  # still sending with the stale levels
    assert not any(t > 0.55 for t in times)  # past max_stale: silent
    assert len(reads) == 2  # the hung read was never stacked


async def test_one_groups_failure_does_not_silence_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    layer = FakeLayer(failing={"machines.link.1"})
    b = broadcaster.Broadcaster(interval=0.05, max_stale=10, read=lambda: SNAPSHOT)
    await serve_for(b, layer, 0.3, monkeypatch)
    assert {group for _, group, _ in layer.sent} == {"machines.link.2"}
    assert b.ticks >= 4


async def test_a_send_cancelled_by_the_layer_does_not_end_the_broadcasts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A CancelledError from the layer's side (not this task being stopped) is one lost send: the embedded
    demo's broadcaster thread died of one, and every linked machine locked until a restart."""
    layer = FakeLayer(cancelled={"machines.link.1"})
    b = broadcaster.Broadcaster(interval=0.05, max_stale=10, read=lambda: SNAPSHOT)
    await serve_for(b, layer, 0.3, monkeypatch)
    assert [group for _, group, _ in layer.sent].count("machines.link.2") >= 4
    assert b.ticks >= 4


async def test_stopping_the_broadcaster_mid_send_still_cancels_it(monkeypatch: pytest.MonkeyPatch) -> None:
    started = asyncio.Event()

    class HungLayer(FakeLayer):
        async def group_send(self, group: str, message: dict[str, Any]) -> None:
            started.set()
            await asyncio.sleep(60)

    monkeypatch.setattr(broadcaster, "get_channel_layer", lambda: HungLayer())
    b = broadcaster.Broadcaster(interval=0.05, max_stale=10, read=lambda: SNAPSHOT)
    task = asyncio.create_task(b.serve(asyncio.Event()))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)


async def test_a_failing_read_keeps_the_last_levels(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def read() -> list[LinkLevels]:
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("the database went away")
        return SNAPSHOT

    layer = FakeLayer()
    b = broadcaster.Broadcaster(interval=0.05, max_stale=10, read=read)
    await serve_for(b, layer, 0.4, monkeypatch)
    assert len(calls) >= 4  # it reads again every interval
    late = [json.loads(m["text"]) for t, g, m in layer.sent if g == "machines.link.2"][-1]
    assert late["levels"] == [{"level": "Mini", "amount": "25.00"}]


def test_the_thread_runner_starts_and_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    layer = FakeLayer()
    monkeypatch.setattr(broadcaster, "get_channel_layer", lambda: layer)
    handle = broadcaster.start_thread(
        broadcaster.Broadcaster(interval=0.05, max_stale=10, read=lambda: SNAPSHOT)
    )
    time.sleep(0.4)
    handle.stop()
    assert not handle.alive
    assert handle.broadcaster.ticks >= 3 and layer.sent
