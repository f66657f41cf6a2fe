"""The progressive broadcaster: a loop of its own that sends every link group's levels to its machines.

The broadcast is the machines' link heartbeat (a machine that hears none for 5 s locks itself), so it runs
apart from everything that can be slow: not a Celery task behind folding, sealing or the link watch, and
not on the gateway's database threads. `Broadcaster.serve` is one asyncio loop with two tasks:

- the sender, every `interval` seconds (HALL_MACHINE_BROADCAST_SECONDS, 0.25 s): each group's payload
  with the last levels read and a fresh ``at``, encoded once, one ``group_send`` per link group (the
  pub/sub layer publishes it once; each web process hears it once and writes it to its own sockets,
  machines.floor). It never waits for the database;
- the reader, in a thread of its own (its own database connection): one `progressive_broadcasts` read
  (one query for the groups, one for all their meters) per interval, replacing the levels the sender uses.

While reads fail or hang, the sender goes on with the last levels it has, up to `max_stale` seconds
(HALL_MACHINE_BROADCAST_MAX_STALE_SECONDS, 10 s): a slow database delays a meter on the machines' displays,
it does not lock the floor. Past that the sender stops (the machines lock: the system cannot say its
levels) until a read succeeds again. A hit is always paid from the pool's own level, never from a broadcast.

Where it runs: ``manage.py broadcast_progressives`` (one process per installation; two are harmless, the
machines hear each twice; see deploy/), and a thread of the embedded hall (demo.embedded).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from channels.layers import get_channel_layer
from django.conf import settings
from django.db import close_old_connections, connection

from machines.services import broadcast

log = logging.getLogger("hall.machines.broadcaster")

# The channel-layer message type the machine consumer implements as ``machine_progressive``.
PROGRESSIVE_TYPE = "machine.progressive"

Snapshot = list[broadcast.LinkLevels]


def dumps(payload: dict[str, Any]) -> str:
    return json.dumps(payload, separators=(",", ":"))


def encode(snapshot: Snapshot, at_ms: int) -> list[tuple[int, str]]:
    """(link group id, encoded payload) of every group of the snapshot, stamped `at_ms`."""
    return [(item.group_id, dumps(broadcast.payload(item, at_ms))) for item in snapshot]


async def send_all(layer: Any, sends: list[tuple[int, str]]) -> int:
    """One ``group_send`` per link group (each web process hears it once on its floor's channel and writes
    it to its own sockets, machines.floor); one group's failure does not silence the others (their
    machines would lock). Returns how many groups were sent to."""
    sent = 0
    for group_id, text in sends:
        try:
            await layer.group_send(
                broadcast.channel_group(group_id), {"type": PROGRESSIVE_TYPE, "group": group_id, "text": text}
            )
            sent += 1
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # this broadcaster is being stopped
            # The send's future was cancelled on the layer's side (the embedded layer's home loop, when
            # a short-lived loop had become it): one lost send, not the end of the broadcasts.
            log.warning("the broadcast to link group %s was cancelled by the channel layer", group_id)
        except Exception:
            log.exception("could not broadcast to link group %s", group_id)
    return sent


def _close_connection() -> None:
    connection.close()  # looked up in the calling thread: that thread's own connection


def _read() -> Snapshot:
    close_old_connections()
    try:
        return broadcast.link_levels()
    finally:
        close_old_connections()


@dataclass
class Broadcaster:
    interval: float = field(default_factory=lambda: settings.HALL_MACHINE_BROADCAST_SECONDS)
    max_stale: float = field(default_factory=lambda: settings.HALL_MACHINE_BROADCAST_MAX_STALE_SECONDS)
    read: Callable[[], Snapshot] = _read
    clock: Callable[[], float] = time.monotonic
    snapshot: Snapshot | None = None
    read_at: float = -float("inf")  # clock of the last good read
    ticks: int = 0  # sends made (each to every group)

    def fresh(self) -> bool:
        return self.snapshot is not None and self.clock() - self.read_at <= self.max_stale

    async def serve(self, stop: asyncio.Event) -> None:
        """Send every `interval` until `stop` is set."""
        layer = get_channel_layer()
        if layer is None:
            log.warning("no channel layer: the progressive broadcaster does nothing")
            return
        # One thread of its own for the reads: they never queue behind the gateway's calls.
        reads = ThreadPoolExecutor(max_workers=1, thread_name_prefix="broadcast-read")
        reader = asyncio.create_task(self._reader(stop, reads))
        try:
            await self._sender(stop, layer)
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            # The reader thread's connection is closed in that thread (Django connections are per thread),
            # after a read in flight; stopping does not wait for a hung one.
            reads.submit(_close_connection)
            reads.shutdown(wait=False)

    async def _reader(self, stop: asyncio.Event, reads: ThreadPoolExecutor) -> None:
        loop = asyncio.get_running_loop()
        while not stop.is_set():
            started = self.clock()
            try:
                snapshot = await loop.run_in_executor(reads, self.read)
            except Exception:
                log.exception("could not read the link groups' levels (broadcasting the last ones)")
            else:
                self.snapshot, self.read_at = snapshot, self.clock()
            pause = max(0.0, self.interval - (self.clock() - started))
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(pause):
                    await stop.wait()

    async def _sender(self, stop: asyncio.Event, layer: Any) -> None:
        next_at = self.clock()
        warned = False
        while not stop.is_set():
            if self.fresh():
                assert self.snapshot is not None
                await send_all(layer, encode(self.snapshot, int(time.time() * 1000)))
                self.ticks += 1
                warned = False
            elif self.snapshot is not None and not warned:
                log.error(
                    "no levels read for %.0f s: the broadcasts stop until a read succeeds", self.max_stale
                )
                warned = True
            # A fixed cadence; a late tick (a busy host) is followed by the next one at once, not by a burst.
            next_at = max(next_at + self.interval, self.clock())
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.0, next_at - self.clock())):
                    await stop.wait()


@dataclass
class BroadcasterThread:
    """The broadcaster on a daemon thread of its own event loop (the embedded hall); ``stop()`` ends it."""

    thread: threading.Thread
    loop: asyncio.AbstractEventLoop
    stop_event: asyncio.Event
    broadcaster: Broadcaster

    def stop(self, timeout: float = 10.0) -> None:
        with contextlib.suppress(RuntimeError):  # the loop already closed
            self.loop.call_soon_threadsafe(self.stop_event.set)
        self.thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self.thread.is_alive()


def start_thread(broadcaster: Broadcaster | None = None) -> BroadcasterThread:
    """Run a broadcaster on a daemon thread (its own event loop) until the handle's ``stop()``."""
    instance = broadcaster or Broadcaster()
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(instance.serve(stop))
        except Exception:
            log.exception("the progressive broadcaster stopped")
        finally:
            loop.close()

    thread = threading.Thread(target=run, name="progressive-broadcaster", daemon=True)
    thread.start()
    return BroadcasterThread(thread=thread, loop=loop, stop_event=stop, broadcaster=instance)
