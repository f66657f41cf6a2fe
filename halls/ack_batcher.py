"""The acks of one event loop's sockets, written in batches (issue 28, "Display acknowledgement").

A socket's `receive` parses an ack (halls.acks) and hands it here with `add`, which never waits: the ack joins
the loop's pending list, written by `halls.services.acks.record_acks` on a thread of its own every
`HALL_ACK_BATCH` acks or `HALL_ACK_FLUSH_MS` milliseconds, whichever comes first. Nothing here is on the draw
path: a draw publishes its ball and is done; the screens' acks come back on their sockets and are written by
the web processes that hold those sockets.

Acks are telemetry, at most once like the events they acknowledge: past `MAX_PENDING` unwritten (the database
away) the oldest are dropped and counted. A refused ack (a seq its stream never reached) is told to the socket
that sent it (`Socket.refused`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.db import close_old_connections
from django.utils.translation import gettext as _

from halls.services import acks as ack_services

log = logging.getLogger("hall.acks")

MAX_PENDING = 100_000
# One writer thread per process: batches are written in order, and never two at once from one process.
_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hall-acks")

Refused = Callable[[ack_services.Refusal], None]


def batch_size() -> int:
    return int(getattr(settings, "HALL_ACK_BATCH", 500))


def flush_seconds() -> float:
    return float(getattr(settings, "HALL_ACK_FLUSH_MS", 250)) / 1000


def _write(batch: list[ack_services.Received]) -> list[ack_services.Refusal]:
    close_old_connections()
    try:
        return ack_services.record_acks(acks=batch, actor="screens")
    finally:
        close_old_connections()


class AckBatcher:
    def __init__(self) -> None:
        self.pending: deque[tuple[ack_services.Received, Refused | None]] = deque()
        self.timer: asyncio.TimerHandle | None = None
        self.writing = False
        self.written = 0  # counters for benchmarks and tests
        self.refused = 0
        self.dropped = 0
        self.batches = 0
        self.idle = asyncio.Event()
        self.idle.set()
        self.task: asyncio.Task[None] | None = None

    def add(self, received: ack_services.Received, on_refused: Refused | None = None) -> None:
        """Queue one ack; it is written within `flush_seconds()` (or sooner, once a batch is full)."""
        self.pending.append((received, on_refused))
        self.idle.clear()
        if len(self.pending) > MAX_PENDING:
            self.pending.popleft()
            self.dropped += 1
        if self.writing:
            return  # the writer takes it next
        if len(self.pending) >= batch_size():
            self._start()
        elif self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(flush_seconds(), self._start)

    def _start(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.writing or not self.pending:
            return
        self.writing = True
        self.task = asyncio.get_running_loop().create_task(self._write_all())

    async def _write_all(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self.pending:
                size = batch_size()
                taken = [self.pending.popleft() for _ in range(min(size, len(self.pending)))]
                try:
                    refusals = await loop.run_in_executor(_executor, _write, [r for r, _ in taken])
                except Exception:
                    log.exception("could not write %s acks", len(taken))
                    self.dropped += len(taken)
                    continue
                self.batches += 1
                self.written += len(taken) - len(refusals)
                self.refused += len(refusals)
                if refusals:
                    replies = {id(r): on for r, on in taken}
                    for refusal in refusals:
                        reply = replies.get(id(refusal.received))
                        if reply is not None:
                            reply(refusal)
                if len(self.pending) < size:
                    break  # a partial batch waits for its timer (or fills)
        finally:
            self.writing = False
            self.task = None
            if self.pending:
                self.timer = loop.call_later(flush_seconds(), self._start)
            else:
                self.idle.set()

    async def drain(self) -> None:
        """Write whatever waits now (tests; a process stopping)."""
        self._start()
        while self.task is not None or self.pending:
            if self.task is not None:
                await self.task
            else:
                self._start()


_batchers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AckBatcher] = weakref.WeakKeyDictionary()


def batcher() -> AckBatcher:
    """The running loop's batcher (a server process runs one loop; tests run one per test)."""
    loop = asyncio.get_running_loop()
    found = _batchers.get(loop)
    if found is None:
        found = _batchers[loop] = AckBatcher()
    return found


def refusal_text(seq: int | None, code: str) -> str:
    """The ``ack.refused`` frame a socket gets for an ack it cannot have sent, or that cannot be read."""
    if code == "seq_never_sent":
        message = _("This screen acknowledged a sequence its stream never sent.")
    else:
        message = _("This acknowledgement cannot be read (%(problem)s).") % {"problem": code}
    return json.dumps({"type": "ack.refused", "seq": seq, "error": code, "message": str(message)})


def reply_refused(send: Callable[[dict[str, Any]], Any]) -> Refused:
    """A socket's answer to its refused ack (`send` writes an ASGI frame without waiting)."""

    def reply(refusal: ack_services.Refusal) -> None:
        send({"type": "websocket.send", "text": refusal_text(refusal.received.ack.seq, refusal.code)})

    return reply
