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
