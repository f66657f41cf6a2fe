"""The Redis cache with one client per process (its connection pool shared by every request and socket).

Django keeps a cache object per async context: under ASGI each request and each socket's connect gets a new
`RedisCache`, hence a new connection pool, and every throttle check (halls.throttling, before any device
token is looked at) opened a Redis connection of its own. At 2,000 terminals connecting that was a fifth
of the connect threads' time (issue 13). redis-py's pools are thread-safe and start afresh in a forked child.
"""

from __future__ import annotations

import threading
from functools import cached_property
from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.sentinel import Sentinel, SentinelConnectionPool

from config.redis_sentinel import SentinelConfig

_clients: dict[str, RedisCacheClient] = {}
_lock = threading.Lock()


class SharedRedisCache(RedisCache):
    # Set by RedisCache.__init__ (not in django-stubs).
    _servers: list[str]
    _options: dict[str, Any]
    _class: type[RedisCacheClient]

    @cached_property
    def _cache(self) -> Any:
        key = repr((self._servers, sorted(self._options.items())))
        with _lock:
            client = _clients.get(key)
            if client is None:
                client = _clients[key] = self._class(self._servers, **self._options)
        return client


class SentinelRedisCacheClient(RedisCacheClient):
    """Django's Redis cache client on one pool that asks the Sentinels for the master (redis-py's
    SentinelConnectionPool): after a failover its next connection goes to the promoted replica. Every
    command goes to the master (the throttle counters are read-modify-write)."""

    _pool_options: dict[str, Any]  # set by RedisCacheClient.__init__ (not in django-stubs)

    def __init__(self, servers: list[str], *, sentinel: SentinelConfig, **options: Any) -> None:
        super().__init__(servers, **options)
        self._sentinel = sentinel
        self._sentinel_pool: SentinelConnectionPool | None = None

    def _get_connection_pool(self, write: bool) -> SentinelConnectionPool:
        if self._sentinel_pool is None:
            options = {k: v for k, v in self._pool_options.items() if v is not None}
            timeouts = {k: v for k, v in options.items() if k in ("socket_timeout", "socket_connect_timeout")}
            manager = Sentinel(list(self._sentinel.sentinels), sentinel_kwargs=timeouts or None)  # type: ignore[no-untyped-call]
            self._sentinel_pool = SentinelConnectionPool(  # type: ignore[no-untyped-call]
                self._sentinel.master, manager, **self._sentinel.redis_kwargs(), **options
            )
        return self._sentinel_pool


class SentinelRedisCache(SharedRedisCache):
    """The shared cache (above) through Redis Sentinel: OPTIONS["sentinel"] is the settings'
    config.redis_sentinel.SentinelConfig; LOCATION (REDIS_URL) is only the cache's name then."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SentinelRedisCacheClient
