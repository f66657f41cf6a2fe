"""A redis-py client for the hall's Redis: REDIS_URL's server, or the master the Sentinels name when
REDIS_SENTINELS is set (config.redis_sentinel). For the few direct users (health, heartbeats, checks); the
broker, channel layer and cache are configured in config.settings."""

from __future__ import annotations

from typing import Any

import redis
import redis.asyncio
import redis.asyncio.sentinel
import redis.sentinel
from django.conf import settings

from config.redis_sentinel import SentinelConfig


def _timeouts(kwargs: dict[str, Any]) -> dict[str, Any] | None:
    found = {k: v for k, v in kwargs.items() if k in ("socket_timeout", "socket_connect_timeout")}
    return found or None


def _sentinel() -> SentinelConfig | None:
    found: SentinelConfig | None = getattr(settings, "REDIS_SENTINEL", None)
    return found


def sync_client(**kwargs: Any) -> redis.Redis:
    """A new client (the caller closes or keeps it); kwargs are redis-py's (timeouts)."""
    config = _sentinel()
    if config is None:
        return redis.Redis.from_url(str(settings.REDIS_URL), **kwargs)
    manager = redis.sentinel.Sentinel(list(config.sentinels), sentinel_kwargs=_timeouts(kwargs))  # type: ignore[no-untyped-call]
    client: redis.Redis = manager.master_for(config.master, **config.redis_kwargs(), **kwargs)  # type: ignore[no-untyped-call]
    return client


def async_client(**kwargs: Any) -> redis.asyncio.Redis:
    config = _sentinel()
    if config is None:
        return redis.asyncio.Redis.from_url(str(settings.REDIS_URL), **kwargs)
    manager = redis.asyncio.sentinel.Sentinel(list(config.sentinels), sentinel_kwargs=_timeouts(kwargs))  # type: ignore[no-untyped-call]
    client: redis.asyncio.Redis = manager.master_for(config.master, **config.redis_kwargs(), **kwargs)
    return client
