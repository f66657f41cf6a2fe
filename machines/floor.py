"""The machine sockets of one web process (per event loop): broadcasts fanned out, presence written.

Fan-out. A link group's progressive broadcast is the machines' heartbeat, and it goes to every linked
machine several times a second: a thousand machines hear some 3,300 a second. Through Channels each
delivery was a message on the consumer's own channel queue, its own wake-up, dispatch and decode (the
per-delivery cost DESIGN §7 measures); on a busy host the consumers fell behind and broadcasts reached the
machines seconds late. Here the process holds ONE channel-layer channel, added to the groups of the link
groups its machines are in; each broadcast arrives once and its text (encoded once by the broadcaster) is
written to every local socket of the group. A socket whose previous broadcast is still waiting for the
kernel (a stalled board) skips this one: the next one is newer anyway.

Presence. The link watch (machines.services.liveness) locks a machine not heard from for 5 s, and a
machine is "heard" when the gateway commits one of its frames. Under overload frames wait for their batch,
and machines that talk would be locked for the gateway's own slowness. So every frame also marks its
machine heard here, and once a second one statement (`gateway.mark_heard`, on a thread of its own, rows
that a batch holds are skipped) moves their ``last_seen_at``: a late answer is late, not a lost link.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from channels.layers import get_channel_layer
from django.db import close_old_connections

from machines.broadcaster import PROGRESSIVE_TYPE
from machines.services import broadcast, gateway

log = logging.getLogger("hall.machines.floor")

PRESENCE_SECONDS = 1.0

# The presence writes: one thread of their own, so they never queue behind the gateway's batches.
_presence_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="machine-presence")


def _mark_heard(machine_ids: list[int]) -> None:
    close_old_connections()
    try:
        gateway.mark_heard(machine_ids=machine_ids)
    finally:
        close_old_connections()


class Listener(Protocol):
    """What the floor needs of a machine's connection."""

    def offer_broadcast(self, text: str) -> None: ...


class LocalFloor:
    """The loop's machine connections by link group, the process channel that hears their broadcasts, and
    the machines heard since the last presence write. Tasks live only while there are connections."""

    def __init__(self, layer: Any) -> None:
        self.layer = layer
        self.groups: dict[int, set[Listener]] = {}
        self.channel: str | None = None
        self.listener: asyncio.Task[None] | None = None
        self.lock = asyncio.Lock()  # group subscriptions change one at a time
        self.connections = 0
        self.heard: set[int] = set()
        self.presence: asyncio.Task[None] | None = None
        self.mark: Callable[[list[int]], None] = _mark_heard
        self.delivered = 0

    # --- connections ---

    def connected(self) -> None:
        self.connections += 1
        if self.presence is None or self.presence.done():
            self.presence = asyncio.get_running_loop().create_task(self._write_presence())

    def disconnected(self) -> None:
        self.connections -= 1
        if self.connections <= 0 and self.presence is not None:
            # No connection left: no presence to write (a machine that went away is not alive).
            self.presence.cancel()
            self.presence = None

    def heard_from(self, machine_id: int) -> None:
        self.heard.add(machine_id)

    async def join(self, group_id: int, member: Listener) -> None:
        async with self.lock:
            members = self.groups.setdefault(group_id, set())
            first = not members
            members.add(member)
            if first:
                channel = await self._channel()
                await self.layer.group_add(broadcast.channel_group(group_id), channel)

    async def leave(self, group_id: int, member: Listener) -> None:
        async with self.lock:
            members = self.groups.get(group_id)
            if members is None or member not in members:
                return
            members.discard(member)
            if members:
                return
            del self.groups[group_id]
            if self.channel is not None:
                await self.layer.group_discard(broadcast.channel_group(group_id), self.channel)
            if not self.groups:
                await self._stop_listening()

    # --- the broadcasts ---

    async def _channel(self) -> str:
        if self.channel is None:
            self.channel = await self.layer.new_channel("machines.floor.")
            self.listener = asyncio.get_running_loop().create_task(self._listen(self.channel))
        return self.channel

    async def _stop_listening(self) -> None:
        listener, self.listener, self.channel = self.listener, None, None
        if listener is not None:
            listener.cancel()  # the layer drops the channel's subscription when its receive is cancelled
            with contextlib.suppress(asyncio.CancelledError):
                await listener

    async def _listen(self, channel: str) -> None:
        while True:
            try:
                message = await self.layer.receive(channel)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the machine floor's channel failed; listening again")
                await asyncio.sleep(0.1)
                continue
            if message.get("type") == PROGRESSIVE_TYPE:
                self.fan_out(message.get("group"), message.get("text"))

    def fan_out(self, group_id: Any, text: Any) -> None:
        """Write `text` to every local socket of link group `group_id`."""
        if not isinstance(text, str):
            return
        for member in list(self.groups.get(group_id, ())):
            member.offer_broadcast(text)
            self.delivered += 1

    # --- presence ---

    async def _write_presence(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(PRESENCE_SECONDS)
            heard, self.heard = sorted(self.heard), set()
            if heard:
                try:
                    await loop.run_in_executor(_presence_executor, self.mark, heard)
                except Exception:  # the next second writes them again if they still talk
                    log.exception("could not record %d machines as heard", len(heard))
            if self.connections <= 0 and not self.heard:
                return


_floors: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LocalFloor] = weakref.WeakKeyDictionary()


def local_floor() -> LocalFloor:
    """The running loop's floor (a process serves on one loop; tests may run several loops)."""
    loop = asyncio.get_running_loop()
    found = _floors.get(loop)
    if found is None:
        found = _floors[loop] = LocalFloor(get_channel_layer())
    return found
