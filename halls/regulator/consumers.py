"""The portal's WebSocket (``/ws/authority/``): read-only, for the authority's staff on the regulator's node
(the session's user, checked in the database on connect: anyone else is closed with 4403 before joining the
group). It forwards the node's live stream (halls.regulator.services.live: a message accepted) to the page,
which reloads what it shows; whatever the page sends is ignored.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from halls import metrics
from halls.regulator.authority import is_authority, on_node
from halls.regulator.services import live

REFUSED = 4403


class PortalConsumer(AsyncWebsocketConsumer):
    group = ""
    counted = False

    async def connect(self) -> None:
        user = self.scope.get("user")
        allowed = on_node() and await database_sync_to_async(is_authority)(user)
        if not allowed:
            await self.close(code=REFUSED)
            return
        self.group = live.group()
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        self.counted = True
        metrics.OPEN_SOCKETS.labels("authority").inc()

    async def disconnect(self, code: int) -> None:
        if self.counted:
            self.counted = False
            metrics.OPEN_SOCKETS.labels("authority").dec()
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Read-only: the page sends nothing that counts."""

    async def hall_event(self, message: dict[str, Any]) -> None:
        await self.send(text_data=message["text"])
