"""halls.cache: the cache objects Django makes per async context (a request, a socket's connect) share one
Redis client, so a throttle check reuses a pooled connection instead of opening one."""

from __future__ import annotations

import asyncio
import contextvars
import uuid
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.cache import caches

from halls.cache import SharedRedisCache


def test_every_context_s_cache_shares_the_process_client_and_its_connections() -> None:
    assert settings.CACHES["default"]["BACKEND"] == "halls.cache.SharedRedisCache"
    key = f"test-cache-{uuid.uuid4().hex}"

    async def one_request(n: int) -> tuple[int, int, Any]:
        def read() -> tuple[int, int, Any]:
            cache = caches["default"]
            assert isinstance(cache, SharedRedisCache)
            cache.set(f"{key}-{n}", n, 30)
            return id(cache), id(cache._cache), cache.get(f"{key}-{n}")

        return await sync_to_async(read, thread_sensitive=False)()

    async def main() -> list[tuple[int, int, Any]]:
        # Each in a context of its own, as uvicorn runs each request and socket: a cache object each.
        tasks = [asyncio.create_task(one_request(n), context=contextvars.Context()) for n in range(5)]
        return await asyncio.gather(*tasks)

    found = asyncio.run(main())
    assert [value for _, _, value in found] == list(range(5))
    assert len({cache for cache, _, _ in found}) == 5  # Django's: a cache object per context
    assert len({client for _, client, _ in found}) == 1  # five contexts, one client (one pool)
    cache = caches["default"]
    assert isinstance(cache, SharedRedisCache)
    client = cache._cache
    pool = client._get_connection_pool(write=True)
    assert client._get_connection_pool(write=True) is pool
