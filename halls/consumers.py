"""The read-only WebSocket of a hall screen: it joins its room's stream and forwards events as they come.

It takes nothing from the screen but the token in its URL, and it re-checks the screen on connect.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from halls.events import group_name
from halls.models import Screen


@database_sync_to_async
def _stream_for(token: str) -> str | None:
    screen = Screen.objects.filter(token=token, active=True).select_related("room").first()
    return screen.room.stream if screen else None


class ScreenConsumer(AsyncWebsocketConsumer):
    groups: list[str]

    async def connect(self) -> None:
        token = self.scope["url_route"]["kwargs"]["token"]
        stream = await _stream_for(token)
        if stream is None:
            await self.close(code=4404)
            return
        self.groups = [group_name(stream)]
        await self.channel_layer.group_add(self.groups[0], self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "groups", []):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Screens are read-only: whatever they send is ignored."""

    async def hall_event(self, message: dict[str, Any]) -> None:
        await self.send(text_data=message["text"])
