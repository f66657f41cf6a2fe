"""The read-only WebSocket of a hall screen: it takes nothing from the screen but the token in its URL and
follows its room's stream through the process's hub (halls.fanout), which writes each event to it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from halls import fanout, metrics
from halls.models import Screen

log = logging.getLogger("hall.screens")

CLOSE_REFUSED = 4404
CLOSE_UNAVAILABLE = 1011  # the hub could not follow the stream (the channel layer is down): retry later
CLOSE_TOO_SLOW = 1013  # the socket could not keep up: reconnect (and reload the snapshot)


@database_sync_to_async
def _stream_for(token: str) -> str | None:
    screen = Screen.objects.filter(token=token, active=True).select_related("room").first()
    return screen.room.stream if screen else None


class ScreenConsumer(AsyncWebsocketConsumer):
    # An alias that names no layer, so Channels gives the consumer no channel of its own (get_channel_layer
    # answers None for an alias that is not configured): the hub is the process's one listener, and no
    # channel-layer message goes through this consumer's dispatch.
    channel_layer_alias = "screens-have-no-channel"

    token = ""
    stream = ""
    live = False  # accepted and still valid: the hub writes to it
    counted = False  # in the open-sockets gauge
    sender: fanout.Sender | None = None
    hub: fanout.StreamHub | None = None
    closing: asyncio.Task[None] | None = None

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels' dispatch without its `aclose_old_connections()` hop to the shared sync thread before
        every message (as machines.consumers.MachineConsumer): the only database call here is the
        connect's, which closes its own connections (database_sync_to_async)."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def connect(self) -> None:
        token = str(self.scope["url_route"]["kwargs"]["token"])
        stream = await _stream_for(token)
        if stream is None:
            await self.close(code=CLOSE_REFUSED)
            return
        self.token, self.stream = token, stream
        self.sender = fanout.Sender(self.base_send, self._too_slow)
        self.hub = fanout.hub()
        try:
            # Following the stream before accepting: once the screen sees the socket open and loads its
            # snapshot, no later event can be missed.
            await self.hub.join(self)
        except Exception:
            log.exception("screen %s: could not follow %s", token[:6], stream)
            await self.close(code=CLOSE_UNAVAILABLE)
            return
        # Checked again now that the hub hears the re-checks: a screen deactivated (or moved) between the
        # first read and the join sent its re-check before this socket could be found.
        if await _stream_for(token) != stream:
            await self.hub.leave(self)
            await self.close(code=CLOSE_REFUSED)
            return
        await self.accept()
        self.live = True
        self.counted = True
        metrics.OPEN_SOCKETS.labels("screen").inc()

    async def disconnect(self, code: int) -> None:
        self.live = False
        if self.counted:
            self.counted = False
            metrics.OPEN_SOCKETS.labels("screen").dec()
        if self.hub is not None:
            await self.hub.leave(self)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Screens are read-only: whatever they send is ignored."""

    def deliver(self, frame: dict[str, Any]) -> None:
        """The hub's write of one frame (an ASGI ``websocket.send``); never waits."""
        if self.live and self.sender is not None and not self.sender.write(frame):
            self.live = False

    def _too_slow(self) -> None:
        """The socket's writes wait and its backlog is full: close it; the screen reconnects and reloads."""
        self.live = False
        self.closing = asyncio.get_running_loop().create_task(self.close(code=CLOSE_TOO_SLOW))
