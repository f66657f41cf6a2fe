"""The sweep's heads go out a slice at a time, the slices spread over part of the sweep's period: a process
with a thousand terminals does not hold its loop (and every purchase answered on it) for the whole sweep."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from halls import fanout


class Socket:
    """A local socket of the hub: what it was sent; `live` false once closed."""

    def __init__(self, stream: str) -> None:
        self.stream = stream
        self.token = stream
        self.live = True
        self.frames: list[dict[str, Any]] = []

    def deliver(self, frame: dict[str, Any]) -> None:
        self.frames.append(json.loads(frame["text"]))

    async def close(self, code: int | None = None, reason: str | None = None) -> None:
        self.live = False


class Asyncio:
    """asyncio as halls.fanout sees it, with its own sleep (other tasks' sleeps are not the sweep's)."""

    def __init__(self, sleep: Any) -> None:
        self.sleep = sleep

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)


@pytest.fixture
def sweep_every(settings: Any) -> float:
    settings.HALL_SCREEN_SWEEP_SECONDS = 4.0
    return 4.0


async def test_each_live_socket_gets_its_streams_head_once_in_slices_spread_over_the_period(
    sweep_every: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = fanout.StreamHub(layer=None)
    shared = [Socket("speciality.1") for _ in range(180)]  # a speciality's terminals
    own = [Socket(f"terminal.{n}") for n in range(70)]  # streams of one socket each
    for socket in shared + own:
        hub.members.setdefault(socket.stream, set()).add(socket)
    heads = {"speciality.1": 42, **{f"terminal.{n}": n for n in range(70)}}
    slices: list[int] = []  # sockets written before each pause
    pauses: list[float] = []
    closed: list[Socket] = []
    real_sleep = asyncio.sleep

    async def sleep(seconds: float) -> None:
        slices.append(sum(len(s.frames) for s in shared + own) - sum(slices))
        pauses.append(seconds)
        if len(pauses) == 1:  # one not written yet closes during the sweep: it is not written after
            closed.append(next(s for s in shared + own if not s.frames))
            closed[0].live = False
        await real_sleep(0)

    monkeypatch.setattr(fanout, "asyncio", Asyncio(sleep))
    await hub._send_heads(set(heads), heads)

    written = [s for s in shared + own if s.frames]
    assert len(written) == 249 and not closed[0].frames
    for socket in written:
        assert socket.frames == [
            {"type": fanout.HEAD_TYPE, "stream": socket.stream, "head": heads[socket.stream], "every": 4.0}
        ]
    assert max(slices) <= fanout.SWEEP_SLICE and len(slices) == 3  # 250 sockets: 100, 100, 50 (one closed)
    spread = sweep_every * fanout.SWEEP_SPREAD
    assert pauses == [pytest.approx(spread / 3)] * 2 + [0]  # nothing waited for after the last slice
    assert hub.deliveries == 250


async def test_a_few_sockets_are_one_slice_with_no_pause(
    sweep_every: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = fanout.StreamHub(layer=None)
    sockets = [Socket("room.1"), Socket("room.1"), Socket("room.2")]
    for socket in sockets:
        hub.members.setdefault(socket.stream, set()).add(socket)
    pauses: list[float] = []

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)

    monkeypatch.setattr(fanout, "asyncio", Asyncio(sleep))
    await hub._send_heads({"room.1", "room.2"}, {"room.1": 7})
    assert [s.frames[0]["head"] for s in sockets] == [7, 7, 0]
    assert pauses == [0]
