"""A staff page's read-only WebSocket on one of a venue's streams (the till's ``cashier.<venue id>``, the
door's ``door.<venue id>``): the user comes from the session cookie; on connect the consumer checks, in the
database, that the user may follow the venue's stream, and anyone else is refused before joining the group
(close 4403; 4404 for a venue unknown to them). Whatever the page sends is ignored: every command goes
through the REST API. The pages treat an event as "something changed" and poll slowly besides, so nothing
depends on a message arriving (DESIGN §4).
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from halls import access, metrics
from halls.errors import DomainError
from halls.events import group_name

# Close codes, as the console's: 4403 a user who may not follow the venue's stream, 4404 no such venue.
REFUSED = 4403
UNKNOWN = 4404


class VenueStreamConsumer(AsyncWebsocketConsumer):
    """Subclasses name the socket (``label``, its metric), the stream of a venue, and who may follow it."""

    label: str
    group: str

    def stream(self, venue_id: int) -> str:
        raise NotImplementedError

    def check(self, user: Any, venue_id: int) -> None:
        """Raise a DomainError when the user may not follow the venue's stream (runs in a thread)."""
        raise NotImplementedError

    async def _refusal(self, user: Any, venue_id: int) -> int | None:
        if user is None or not user.is_authenticated:
            return REFUSED

        def checked() -> int | None:
            try:
                with access.reading():  # the socket only reads: the inspector watches too
                    self.check(user, venue_id)
            except DomainError as exc:
                return UNKNOWN if exc.status == 404 else REFUSED
            return None

        refused: int | None = await database_sync_to_async(checked)()
        return refused

    async def connect(self) -> None:
        venue_id = int(self.scope["url_route"]["kwargs"]["venue_id"])
        refused = await self._refusal(self.scope.get("user"), venue_id)
        if refused is not None:
            await self.close(code=refused)
            return
        self.group = group_name(self.stream(venue_id))
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        self.counted = True
        metrics.OPEN_SOCKETS.labels(self.label).inc()

    async def disconnect(self, code: int) -> None:
        if getattr(self, "counted", False):
            self.counted = False
            metrics.OPEN_SOCKETS.labels(self.label).dec()
        if getattr(self, "group", None):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Read-only: every command goes through the REST API; whatever the page sends is ignored."""

    async def hall_event(self, message: dict[str, Any]) -> None:
        await self.send(text_data=message["text"])
