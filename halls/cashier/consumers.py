"""The till page's WebSocket: staff only, read-only; it forwards the venue's cashier stream
(``cashier.<venue id>``: prizes waiting and paid, shifts opened and closed, tickets) as its events come.

The user comes from the session cookie (the till is a logged-in page); on connect the consumer checks, in
the database, that the user is a cashier (or operator) of the venue. Anyone else is refused before joining
the group. The page treats an event as "something changed": it reloads what it shows over HTTP, and polls
slowly besides, so nothing depends on a message arriving (DESIGN §4).
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from halls import access, metrics
from halls.errors import DomainError
from halls.events import group_name
from halls.models import Role

# Close codes, as the console's: 4403 a user who may not watch the venue's till, 4404 no such venue for them.
REFUSED = 4403
UNKNOWN = 4404


def cashier_stream(venue_id: int) -> str:
    """The venue's cashier stream (the services publish their till events on it)."""
    return f"cashier.{venue_id}"


@database_sync_to_async
def _refusal(user: Any, venue_id: int) -> int | None:
    """None when the user may follow the venue's cashier stream, else the close code."""
    if user is None or not user.is_authenticated:
        return REFUSED
    try:
        with access.reading():  # the socket only reads (receive ignores the page): the inspector watches too
            access.require_role(user, venue_id, Role.CASHIER)
    except DomainError as exc:
        return UNKNOWN if exc.status == 404 else REFUSED
    return None


class CashierConsumer(AsyncWebsocketConsumer):
    group: str

    async def connect(self) -> None:
        venue_id = int(self.scope["url_route"]["kwargs"]["venue_id"])
        refused = await _refusal(self.scope.get("user"), venue_id)
        if refused is not None:
            await self.close(code=refused)
            return
        self.group = group_name(cashier_stream(venue_id))
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        self.counted = True
        metrics.OPEN_SOCKETS.labels("cashier").inc()

    async def disconnect(self, code: int) -> None:
        if getattr(self, "counted", False):
            self.counted = False
            metrics.OPEN_SOCKETS.labels("cashier").dec()
        if getattr(self, "group", None):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Read-only: every command goes through the REST API; whatever the page sends is ignored."""

    async def hall_event(self, message: dict[str, Any]) -> None:
        await self.send(text_data=message["text"])
