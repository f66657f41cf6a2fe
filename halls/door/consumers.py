"""The door page's WebSocket: staff only, read-only; it forwards the venue's door stream (``door.<venue
id>``: the live count of who is inside after each visit and exit, counts only, never a person).

The user comes from the session cookie (the admission page is a logged-in page); on connect the consumer
checks, in the database, that the user is the venue's door staff (or operator; the inspector reads). Anyone
else is refused before joining the group. The page also polls the count slowly, so nothing depends on a
message arriving (DESIGN §4).
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from halls import access, metrics
from halls.door.services.doorday import door_stream
from halls.errors import DomainError
from halls.events import group_name
from halls.models import Role

# Close codes, as the till's: 4403 a user who may not watch the venue's door, 4404 no such venue for them.
REFUSED = 4403
UNKNOWN = 4404


@database_sync_to_async
def _refusal(user: Any, venue_id: int) -> int | None:
    """None when the user may follow the venue's door stream, else the close code."""
    if user is None or not user.is_authenticated:
        return REFUSED
    try:
        with access.reading():  # the socket only reads: the inspector watches too
            access.venue_for(user, venue_id, Role.DOOR)
    except DomainError as exc:
        return UNKNOWN if exc.status == 404 else REFUSED
    return None


class DoorConsumer(AsyncWebsocketConsumer):
    group: str

    async def connect(self) -> None:
        venue_id = int(self.scope["url_route"]["kwargs"]["venue_id"])
        refused = await _refusal(self.scope.get("user"), venue_id)
        if refused is not None:
            await self.close(code=refused)
            return
        self.group = group_name(door_stream(venue_id))
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        self.counted = True
        metrics.OPEN_SOCKETS.labels("door").inc()

    async def disconnect(self, code: int) -> None:
        if getattr(self, "counted", False):
            self.counted = False
            metrics.OPEN_SOCKETS.labels("door").dec()
        if getattr(self, "group", None):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Read-only: every command goes through the REST API; whatever the page sends is ignored."""

    async def hall_event(self, message: dict[str, Any]) -> None:
        await self.send(text_data=message["text"])
