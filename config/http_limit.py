"""A bound on the HTTP requests one web process serves at once.

Django runs each HTTP request of an ASGI server on a thread of its own, and (CONN_MAX_AGE=0) with a
database connection of its own: a burst (2,000 terminals buying in the same seconds) would open as many
threads and PostgreSQL connections as requests in flight, until PostgreSQL refuses them ("too many
clients") and the process thrashes. Here at most HALL_WEB_MAX_REQUESTS requests are inside Django at once;
the others wait their turn in the event loop (no thread, no connection) and are served in arrival order.
WebSockets are not concerned (they go through Channels' own consumers).
"""

from __future__ import annotations

import asyncio
from typing import Any


class BoundedHTTP:
    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit
        self._gate: asyncio.Semaphore | None = None  # made in the server's event loop

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if self.limit <= 0 or scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        if self._gate is None:
            self._gate = asyncio.Semaphore(self.limit)
        async with self._gate:
            await self.app(scope, receive, send)
