"""halls.fanout.Sender: a write never makes the hub wait, even when a server's send has to.

uvicorn writes a frame to its transport at once, so a send finishes within the hub's call; a server with
write back-pressure may make a send wait: then that socket's next frames queue behind it, in order, up to
MAX_BACKLOG, and the others' writes go on.
"""

from __future__ import annotations

import asyncio
from typing import Any

from halls import fanout


class Socket:
    """An ASGI send that completes at once, or waits on `gate` while it is set."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.gate: asyncio.Future[None] | None = None

    async def send(self, message: dict[str, Any]) -> None:
        if self.gate is not None:
            await self.gate
        self.sent.append(message["text"])


def frame(n: int) -> dict[str, Any]:
    return {"type": "websocket.send", "text": str(n)}


async def test_a_send_that_completes_at_once_needs_no_task() -> None:
    socket = Socket()
    sender = fanout.Sender(socket.send, on_overflow=lambda: None)
    for n in range(3):
        assert sender.write(frame(n))
        assert socket.sent == [str(i) for i in range(n + 1)]  # written within the call
    assert sender.task is None and sender.backlog is None


async def test_a_send_that_waits_queues_the_next_frames_in_order_and_others_go_on() -> None:
    slow, fast = Socket(), Socket()
    slow.gate = asyncio.get_running_loop().create_future()
    overflowed: list[bool] = []
    slow_sender = fanout.Sender(slow.send, on_overflow=lambda: overflowed.append(True))
    fast_sender = fanout.Sender(fast.send, on_overflow=lambda: None)
    for n in range(5):
        assert slow_sender.write(frame(n))
        assert fast_sender.write(frame(n))
    assert fast.sent == ["0", "1", "2", "3", "4"]
    assert slow.sent == [] and slow_sender.backlog is not None and len(slow_sender.backlog) == 4

    slow.gate.set_result(None)
    assert slow_sender.task is not None
    await slow_sender.task
    assert slow.sent == ["0", "1", "2", "3", "4"]
    assert slow_sender.backlog is None and slow_sender.task is None
    assert slow_sender.write(frame(5)) and slow.sent[-1] == "5"  # back to writing at once
    assert not overflowed


async def test_a_socket_that_stays_stuck_overflows() -> None:
    stuck = Socket()
    stuck.gate = asyncio.get_running_loop().create_future()
    overflowed: list[bool] = []
    sender = fanout.Sender(stuck.send, on_overflow=lambda: overflowed.append(True))
    assert all(sender.write(frame(n)) for n in range(1 + fanout.MAX_BACKLOG))
    assert not overflowed
    assert not sender.write(frame(999))
    assert overflowed == [True]
    assert sender.task is not None
    sender.task.cancel()
    await asyncio.wait([sender.task])
    assert stuck.sent == []


async def test_a_failed_send_reports_the_socket_gone() -> None:
    async def closed(message: dict[str, Any]) -> None:
        raise ConnectionError("gone")

    sender = fanout.Sender(closed, on_overflow=lambda: None)
    assert not sender.write(frame(1))
