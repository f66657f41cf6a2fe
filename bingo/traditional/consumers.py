"""The caller console's WebSocket: staff only, read-only; it forwards the room's public stream and the
room's staff stream (bingo.traditional.services.console) as their events come.

The user comes from the session cookie (the console is a logged-in page); on connect the consumer checks
again, in the database, that the user is a caller (or operator) of the room's venue. Anyone else (a screen,
an anonymous visitor, staff of another venue or with another role) is refused before joining any group.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from bingo.traditional.services.console import console_streams
from halls import access, metrics
from halls.errors import DomainError
from halls.events import group_name
from halls.models import Role, Room

# Close codes: like the screens' 4404 for an unknown token; 4403 for a user who may not watch the room.
REFUSED = 4403
UNKNOWN = 4404


@database_sync_to_async
def _streams_for(user: Any, room_id: int) -> list[str] | int:
    """The streams the user may follow for the room, or the close code that refuses them."""
    if user is None or not user.is_authenticated:
        return REFUSED
    try:
        with access.reading():  # the socket only reads (receive ignores the page): the inspector watches too
            room = access.get_for_user(Room.objects.all(), user, Role.CALLER, label="room", pk=room_id)
    except DomainError as exc:
        return UNKNOWN if exc.status == 404 else REFUSED
    return console_streams(room)


class ConsoleConsumer(AsyncWebsocketConsumer):
    groups: list[str]

    async def connect(self) -> None:
        room_id = int(self.scope["url_route"]["kwargs"]["room_id"])
        streams = await _streams_for(self.scope.get("user"), room_id)
        if isinstance(streams, int):
            await self.close(code=streams)
            return
        self.groups = [group_name(stream) for stream in streams]
        for group in self.groups:
            await self.channel_layer.group_add(group, self.channel_name)
        await self.accept()
        self.counted = True
        metrics.OPEN_SOCKETS.labels("console").inc()

    async def disconnect(self, code: int) -> None:
        if getattr(self, "counted", False):
            self.counted = False
            metrics.OPEN_SOCKETS.labels("console").dec()
        for group in getattr(self, "groups", []):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Read-only: every command goes through the REST API; whatever the page sends is ignored."""

    async def hall_event(self, message: dict[str, Any]) -> None:
        await self.send(text_data=message["text"])
