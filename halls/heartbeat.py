"""Heartbeats: "this periodic job last ran at T", for the health check (config.health).

The stalled-draw reaper (beat, every few seconds, on a worker) writes one each run: if beat or the workers
stop, it goes stale and ``/health/`` says so. On Redis (production) the time is a key every process
reads; embedded, the beat and its worker live in the server process, so a variable of the process is it.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import redis
from django.conf import settings

from halls.redis_clients import sync_client

_local: dict[str, float] = {}
_client: tuple[int, redis.Redis] | None = None
_lock = threading.Lock()


def _key(name: str) -> str:
    """Under the channel layer's prefix: installations (and test runs) sharing a Redis stay apart."""
    config: dict[str, Any] = settings.CHANNEL_LAYERS["default"].get("CONFIG", {})
    return f"{config.get('prefix', 'hall')}:heartbeat:{name}"


def _redis() -> redis.Redis | None:
    """One client per process (a forked worker makes its own)."""
    global _client
    url = settings.REDIS_URL
    if not url:
        return None
    with _lock:
        if _client is None or _client[0] != os.getpid():
            _client = (os.getpid(), sync_client(socket_timeout=2, socket_connect_timeout=2))
        return _client[1]


def beat(name: str, at: float | None = None) -> None:
    """Record that `name` ran now (seconds since the epoch)."""
    now = time.time() if at is None else at
    client = _redis()
    if client is None:
        _local[name] = now
    else:
        client.set(_key(name), repr(now), ex=24 * 3600)


def last(name: str) -> float | None:
    """When `name` last ran, or None if never (or not for a day)."""
    client = _redis()
    if client is None:
        return _local.get(name)
    value = client.get(_key(name))
    return float(value) if value is not None else None
