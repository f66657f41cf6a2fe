"""A bound on the HTTP requests one web process serves at once.

Django runs each HTTP request of an ASGI server on a thread of its own, and (CONN_MAX_AGE=0) with a
database connection of its own: a burst (2,000 terminals buying in the same seconds) would open as many
threads and PostgreSQL connections as requests in flight, until PostgreSQL refuses them ("too many
clients") and the process thrashes. Here at most HALL_WEB_MAX_REQUESTS requests are inside Django at once;
the others wait their turn in the event loop (no thread, no connection) and are served in arrival order.
WebSockets are not concerned (they go through Channels' own consumers).

Each request inside runs its sync code on one of at most HALL_WEB_MAX_REQUESTS kept threads (asgiref's
ThreadSensitiveContext with an executor of ours; Django's own context then uses it). Django alone starts a
thread per request and another to join it: on a busy 2-core host each start held the event loop for
milliseconds, and the terminal sockets' fan-out waited behind it (issue 13, the snapshots of reconnecting
terminals).
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import ThreadSensitiveContext


class BoundedHTTP:
    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit
        self._gate: asyncio.Semaphore | None = None  # made in the server's event loop
        self._idle: list[ThreadPoolExecutor] = []  # one thread each; at most `limit` (the gate's bound)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if self.limit <= 0 or scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        if self._gate is None:
            self._gate = asyncio.Semaphore(self.limit)
        async with self._gate:
            executor = self._idle.pop() if self._idle else ThreadPoolExecutor(1, thread_name_prefix="http")
            try:
                # A request's sync calls finish before the context exits (SyncToAsync waits for them even
                # when cancelled): the thread is free for the next request.
                async with ThreadSensitiveContext(executor=executor):
                    await self.app(scope, receive, send)
            finally:
                self._idle.append(executor)
