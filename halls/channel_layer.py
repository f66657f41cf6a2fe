"""An in-memory channel layer that threads other than the server's may publish to.

The embedded hall runs the Celery worker in a thread of the server process. Channels' in-memory layer
keeps asyncio queues that belong to the server's event loop and are not thread-safe, so a send from the
worker's loop is handed to the server's loop instead.
"""

from __future__ import annotations

import asyncio
from typing import Any

from channels.layers import InMemoryChannelLayer


class ThreadSafeInMemoryChannelLayer(InMemoryChannelLayer):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._home_loop: asyncio.AbstractEventLoop | None = None

    def _foreign_loop(self) -> asyncio.AbstractEventLoop | None:
        """The home loop if we are running on another one (and the home loop still runs)."""
        home = self._home_loop
        if home is None or home.is_closed() or not home.is_running():
            return None
        return home if asyncio.get_running_loop() is not home else None

    async def _on_home(self, coro: Any) -> Any:
        home = self._foreign_loop()
        if home is None:
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, home))

    async def receive(self, channel: str) -> Any:
        # Receivers are the server's consumers: their loop is the layer's home.
        self._home_loop = asyncio.get_running_loop()
        return await super().receive(channel)

    async def group_add(self, group: str, channel: str) -> None:
        self._home_loop = asyncio.get_running_loop()
        await super().group_add(group, channel)

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        await self._on_home(super().send(channel, message))

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        await self._on_home(super().group_send(group, message))
